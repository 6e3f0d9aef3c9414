import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { celebrationsUnsubscribePath, personIdsOfUnsubscribeToken } from '../office/people/unsubscribe-link.js';
import { unsubscribeFromCelebrations, unsubscribePeople, type UnsubscribePerson } from '../office/people/unsubscribe.js';
import type { AppContext } from '../context.js';
import { UNSUBSCRIBE_ROUTE } from '../secret-paths.js';
import { loadChurchIdentity } from '../mail/identity.js';
import type { PageRenderer } from './pages.js';
import { privatePage, PUBLIC_FORM_RATE_LIMIT, sendPageNotFound } from './public-pages.js';
import { unsubscribePage } from './templates/unsubscribe-page.js';

const tokenParams = z.object({ token: z.string().max(100) });

/**
 * The unsubscribe link of every celebration email. GET shows who would be unsubscribed and a
 * button, and changes nothing (mail scanners follow links); POST turns their celebration
 * emails off: the button's, and the one-click POST a mail client makes from the
 * List-Unsubscribe header (RFC 8058, body `List-Unsubscribe=One-Click`). A token we did not
 * sign, or one naming nobody still on record, is a 404.
 */
export function registerUnsubscribeRoutes(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  const path = UNSUBSCRIBE_ROUTE;
  const personIdsOf = (params: unknown): { token: string; ids: string[] } | undefined => {
    const parsed = tokenParams.safeParse(params);
    const ids = parsed.success ? personIdsOfUnsubscribeToken(ctx.config.keyring, parsed.data.token) : undefined;
    return parsed.success && ids ? { token: parsed.data.token, ids } : undefined;
  };
  const show = async (reply: FastifyReply, people: UnsubscribePerson[], view: { action?: string; done: boolean }) => {
    const { name } = await loadChurchIdentity(ctx.db, ctx.config);
    const names = people.map((person) => person.firstName);
    return page(privatePage(reply), unsubscribePage, { title: 'Unsubscribe', names, churchName: name, ...view });
  };

  app.get(path, { config: { recordView: true } }, async (request, reply) => {
    const link = personIdsOf(request.params);
    const people = link ? await unsubscribePeople(ctx.db, link.ids) : [];
    if (!link || people.length === 0) return sendPageNotFound(page, reply, 'link');
    if (people.every((person) => person.off)) return show(reply, people, { done: true });
    return show(reply, people, { action: celebrationsUnsubscribePath(link.token), done: false });
  });

  // RFC 8058 allows the one-click body as multipart/form-data too; the body is never read, the token is the authority.
  void app.register(async (scope) => {
    scope.addContentTypeParser('multipart/form-data', { parseAs: 'buffer', bodyLimit: 8 * 1024 }, (_request, _body, done) => done(null, {}));
    scope.post(path, { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
      const link = personIdsOf(request.params);
      const people = link ? await unsubscribeFromCelebrations(ctx, link.ids) : [];
      if (!link || people.length === 0) return sendPageNotFound(page, reply, 'link');
      request.log.info({ people: people.length }, 'celebration emails unsubscribed');
      return show(reply, people, { done: true });
    });
  });
}
