import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { EMAIL_CHANGE_CONFIRM_PATH, EMAIL_CHANGE_UNDO_PATH, MAX_EMAIL_CHANGE_TOKEN_LENGTH, type EmailChangeLinkKind } from '../family/email-change-links.js';
import { confirmEmailChange, findEmailChange, undoEmailChange } from '../family/email-change.js';
import { ManageRefusedError } from '../family/managed-registration.js';
import { clientKey } from '../client-key.js';
import type { AppContext } from '../context.js';
import { EMAIL_CHANGE_CONFIRM_ROUTE, EMAIL_CHANGE_UNDO_ROUTE } from '../secret-paths.js';
import { MANAGE_VIEW_RATE_LIMIT } from './manage-routes.js';
import type { PageRenderer } from './pages.js';
import { privatePage, PUBLIC_FORM_RATE_LIMIT, sendPageNotFound } from './public-pages.js';
import { emailChangePage } from './templates/email-change-page.js';

const tokenParams = z.object({ token: z.string().min(1).max(MAX_EMAIL_CHANGE_TOKEN_LENGTH) });

/**
 * The links of an email change made on the manage page (family/email-change.ts): the new address's
 * "confirm" and, once confirmed, the old address's "undo". GET shows what the button does and changes nothing
 * (mail scanners follow links); POST does it. A link that opens nothing (made up, replaced, expired, used) is a 404
 * that does not say which. Limited as the manage page is.
 */
export function registerEmailChangeRoutes(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  const tokenOf = (params: unknown) => tokenParams.safeParse(params).data?.token;
  const notFound = (reply: FastifyReply) => sendPageNotFound(page, privatePage(reply), 'link');
  const client = (request: FastifyRequest) => clientKey(request.ip);

  const routes: Array<{ kind: EmailChangeLinkKind; route: string; path: string }> = [
    { kind: 'confirm', route: EMAIL_CHANGE_CONFIRM_ROUTE, path: EMAIL_CHANGE_CONFIRM_PATH },
    { kind: 'undo', route: EMAIL_CHANGE_UNDO_ROUTE, path: EMAIL_CHANGE_UNDO_PATH },
  ];
  for (const { kind, route, path } of routes) {
    app.get(route, { config: { recordView: true, rateLimit: MANAGE_VIEW_RATE_LIMIT } }, async (request, reply) => {
      const token = tokenOf(request.params);
      const change = token ? await findEmailChange(ctx, kind, token) : undefined;
      if (!token || !change) return notFound(reply);
      const data =
        kind === 'confirm'
          ? {
              heading: 'Confirm your email address',
              message: `Make ${change.newEmail} the contact email of the registration for ${change.eventTitle}? From then on we write to it, and the links sent to the current address stop working.`,
              button: 'Confirm this address',
            }
          : {
              heading: 'Undo the email change',
              message: `Put ${change.oldEmail} back as the contact email of the registration for ${change.eventTitle}, instead of ${change.newEmail}? The links sent to ${change.newEmail} stop working, and we send the new ones to ${change.oldEmail}.`,
              button: 'Undo the change',
            };
      return page(privatePage(reply), emailChangePage, { title: data.heading, ...data, action: `${path}${token}` });
    });

    app.post(route, { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
      const token = tokenOf(request.params);
      if (!token) return notFound(reply);
      try {
        const outcome = kind === 'confirm' ? await confirmEmailChange(ctx, token, client(request)) : await undoEmailChange(ctx, token, client(request));
        if (outcome.kind === 'gone') return notFound(reply);
        request.log.info({ outcome: outcome.kind }, 'registration contact email changed by its link');
        const message =
          outcome.kind === 'confirmed'
            ? `${outcome.email} is now the contact email of this registration. We have emailed it the new link to manage the registration; the links sent to the previous address no longer work.`
            : `${outcome.email} is the contact email of this registration again. We have emailed it a new link to manage the registration; the links sent to the other address no longer work. If you did not ask for the change, please tell the church office.`;
        return page(privatePage(reply), emailChangePage, { title: 'Email address', heading: outcome.kind === 'confirmed' ? 'Address confirmed' : 'Change undone', message });
      } catch (error) {
        if (error instanceof ManageRefusedError) {
          return page(privatePage(reply).code(error.httpStatus), emailChangePage, { title: 'Not possible', heading: 'That is not possible here', message: error.message });
        }
        throw error;
      }
    });
  }
}
