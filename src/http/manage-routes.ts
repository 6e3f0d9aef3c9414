import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { askOfficeToCancel, CancelYourselfError, cancelByRegistrant, cancelOption } from '../family/cancel.js';
import { changeAnswersByRegistrant } from '../family/change-answers.js';
import { changeDetailsByRegistrant, type ShownDetails } from '../family/change-details.js';
import { addExtrasByRegistrant } from '../family/add-extras.js';
import { addonFieldsOfForm } from './addon-fields.js';
import { typedAddonFields } from './addon-view.js';
import { loadPublicRegistration, payNowPath, payNowRefusal } from './registration-view.js';
import { changesOpen, findManagedRegistration, ManageRefusedError, MAX_MANAGE_TOKEN_LENGTH, type ManagedRegistration } from '../family/managed-registration.js';
import { clientKey } from '../client-key.js';
import { contactEmail, contactMobile } from '../contact-rules.js';
import type { AppContext } from '../context.js';
import { receivedMinor } from '../registrations/ledger.js';
import { MANAGE_ROUTE } from '../secret-paths.js';
import { personName } from './field-rules.js';
import { readCorrection } from './manage-answers-read.js';
import { MANAGE_NOTICES, managePageData, type DetailsView } from './manage-view.js';
import { typedAnswerFields } from './question-view.js';
import type { PageRenderer } from './pages.js';
import { privatePage, PUBLIC_FORM_RATE_LIMIT, sendPageNotFound } from './public-pages.js';
import { manageCancelPage, managePage } from './templates/manage-page.js';
import { messagePage } from './templates/message-page.js';
import { pageFormat } from './templates/format.js';

/**
 * Reading a manage page is limited too, so that links cannot be guessed at speed (they are 128-bit MACs, but a
 * limit costs a family nothing): 30 a minute per client (clientKey), apart from the posts' 10.
 */
export const MANAGE_VIEW_RATE_LIMIT = { ...PUBLIC_FORM_RATE_LIMIT, max: 30 };

const tokenParams = z.object({ token: z.string().min(1).max(MAX_MANAGE_TOKEN_LENGTH) });
const doneQuery = z.object({ done: z.string().max(32).optional() });
const MOST_ATTENDEES = 200;
const attendeeName = personName('enter each attendee\'s name');
const detailsSchema = z.object({
  name: personName('enter your name'),
  email: contactEmail('enter your email address'),
  mobile: contactMobile('enter a phone number or leave it empty').optional().transform((v) => v ?? ''),
  attendee_name: z
    .union([z.string(), z.array(z.string()).max(MOST_ATTENDEES)])
    .optional()
    .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v])),
});
const repeated = z
  .union([z.string().max(500), z.array(z.string().max(500)).max(MOST_ATTENDEES)])
  .optional()
  .transform((v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]));
/** What the page showed when it was opened (its hidden was_* fields): a field posted as shown is left as stored now. */
const shownSchema = z
  .object({ was_name: z.string().max(500), was_email: z.string().max(500), was_mobile: z.string().max(500).optional(), was_attendee_name: repeated })
  .transform((v): ShownDetails => ({ name: v.was_name, email: v.was_email, mobile: v.was_mobile ?? '', attendeeNames: v.was_attendee_name }));
const LABELS: Record<string, string> = { name: 'Your name', email: 'Email', mobile: 'Mobile', attendee_name: 'Attendee' };

/**
 * The registrant's own page, opened by the "Manage your registration" link of their emails (see manage-link.ts):
 * GET shows it; posts correct details, cancel (after a confirmation page) or ask the office to cancel. Every post is
 * limited as the public form is; a link that opens nothing is a 404 that does not say why.
 */
export function registerManageRoutes(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  const tokenOf = (params: unknown) => {
    const parsed = tokenParams.safeParse(params);
    return parsed.success ? parsed.data.token : undefined;
  };
  const found = async (params: unknown): Promise<{ token: string; managed: ManagedRegistration } | undefined> => {
    const token = tokenOf(params);
    const managed = token ? await findManagedRegistration(ctx.db, ctx.config.authSecret, token) : undefined;
    return token && managed ? { token, managed } : undefined;
  };
  const notFound = (reply: FastifyReply) => sendPageNotFound(page, privatePage(reply), 'registration');
  const show = async (reply: FastifyReply, managed: ManagedRegistration, options: Parameters<typeof managePageData>[2] = {}) =>
    page(privatePage(reply), managePage, await managePageData(ctx, managed, options));
  const back = (reply: FastifyReply, token: string, done: string) => reply.code(303).header('location', `/manage/${token}?done=${done}`).send();
  const refused = (reply: FastifyReply, token: string, error: ManageRefusedError) =>
    page(privatePage(reply).code(error.httpStatus), messagePage, {
      title: 'Not possible',
      heading: 'That is not possible here',
      message: error.message,
      // Asked the office about a registration nothing was paid for: the way to cancel it oneself.
      ...(error instanceof CancelYourselfError
        ? { linkHref: `/manage/${token}/cancel`, linkLabel: 'Cancel this registration' }
        : { linkHref: `/manage/${token}`, linkLabel: 'Back to your registration' }),
    });
  const client = (request: FastifyRequest) => clientKey(request.ip);

  app.get(MANAGE_ROUTE, { config: { recordView: true, rateLimit: MANAGE_VIEW_RATE_LIMIT } }, async (request, reply) => {
    const link = await found(request.params);
    if (!link) return notFound(reply);
    const done = doneQuery.safeParse(request.query).data?.done;
    return show(reply, link.managed, { notice: done ? MANAGE_NOTICES[done] : undefined });
  });

  app.post(`${MANAGE_ROUTE}/details`, { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
    const token = tokenOf(request.params);
    if (!token) return notFound(reply);
    const parsed = detailsSchema.safeParse(request.body ?? {});
    // Refused: the page again, the form that was posted open with what was typed and what was wrong.
    const refuseDetails = async (errors: DetailsView['errors']) => {
      const link = await found(request.params);
      if (!link) return notFound(reply);
      const body = (request.body ?? {}) as Record<string, unknown>;
      const text = (value: unknown) => (typeof value === 'string' ? value : '');
      const typedNames = detailsSchema.shape.attendee_name.safeParse(body.attendee_name).data ?? [];
      const current = await managePageData(ctx, link.managed);
      const values: DetailsView['values'] = {
        name: text(body.name),
        email: text(body.email),
        mobile: text(body.mobile),
        attendees: (current.details?.values.attendees ?? []).map((attendee, index) => ({ ...attendee, name: text(typedNames[index]) })),
      };
      // The form comes back still knowing what its page first showed, so the next save keeps what it did not edit.
      const shown = shownSchema.safeParse(body).data ?? current.details?.was;
      reply.code(400);
      return show(reply, link.managed, { details: { values, was: shown, errors }, formError: 'Please check the details below; nothing was changed.' });
    };
    if (!parsed.success) {
      return refuseDetails(
        parsed.error.issues.map((issue) => ({
          field: String(issue.path[0] ?? ''),
          message: `${LABELS[String(issue.path[0])] ?? 'Form'}: ${issue.message}`,
        })),
      );
    }
    const attendeeNames: string[] = [];
    for (const name of parsed.data.attendee_name) {
      const checked = attendeeName.safeParse(name);
      if (!checked.success) return refuseDetails([{ field: 'attendee_name', message: `Attendee: ${checked.error.issues[0]?.message ?? 'enter a name'}` }]);
      attendeeNames.push(checked.data);
    }
    try {
      const shown = shownSchema.safeParse(request.body ?? {}).data;
      const outcome = await changeDetailsByRegistrant(ctx, token, { ...parsed.data, attendeeNames, shown }, client(request));
      if (outcome.kind === 'not_found') return notFound(reply);
      if (outcome.kind === 'unchanged') return back(reply, token, 'unchanged');
      request.log.info({ fields: outcome.fields, emailPending: outcome.emailPending }, 'registrant changed their details');
      return back(reply, token, outcome.emailPending ? 'email-pending' : 'details');
    } catch (error) {
      if (error instanceof ManageRefusedError) return refused(reply, token, error);
      throw error;
    }
  });

  // Corrections to the answers: validated as the public form's are, against the registration under its lock.
  app.post(`${MANAGE_ROUTE}/answers`, { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
    const token = tokenOf(request.params);
    if (!token) return notFound(reply);
    const fields = typedAnswerFields(request.body);
    try {
      const outcome = await changeAnswersByRegistrant(ctx, token, (managed) => readCorrection(ctx, managed, fields), client(request));
      if (outcome.kind === 'not_found') return notFound(reply);
      if (outcome.kind === 'unchanged') return back(reply, token, 'answers-unchanged');
      if (outcome.kind === 'invalid') {
        const link = await found(request.params);
        if (!link) return notFound(reply);
        reply.code(400);
        return show(reply, link.managed, { answers: { fields, errors: outcome.problems }, formError: 'Please check your answers below; nothing was changed.' });
      }
      request.log.info({ questions: outcome.changed.length }, 'registrant corrected their answers');
      return back(reply, token, 'answers');
    } catch (error) {
      if (error instanceof ManageRefusedError) return refused(reply, token, error);
      throw error;
    }
  });

  // Extras added after registering: judged, stocked and priced under the event's lock (family/add-extras.ts). A card
  // family is taken to pay what it now owes; any other sees it, with how to pay, on this page.
  app.post(`${MANAGE_ROUTE}/extras`, { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
    const token = tokenOf(request.params);
    if (!token) return notFound(reply);
    const body = (request.body ?? {}) as Record<string, unknown>;
    const fields = addonFieldsOfForm(typeof body === 'object' && body !== null ? body : {});
    const refuseExtras = async (status: number, errors: Array<{ field: string; message: string }>) => {
      const link = await found(request.params);
      if (!link) return notFound(reply);
      reply.code(status);
      return show(reply, link.managed, { extras: { typed: typedAddonFields(body), errors }, formError: 'Nothing was added: please check the extras below.' });
    };
    try {
      const outcome = await addExtrasByRegistrant(ctx, token, { rows: fields.rows, registration: fields.registration }, client(request));
      if (outcome.kind === 'not_found') return notFound(reply);
      if (outcome.kind === 'invalid') return refuseExtras(400, outcome.problems);
      if (outcome.kind === 'sold_out') return refuseExtras(409, [{ field: 'addons', message: outcome.message }]);
      request.log.info({ addedMinor: outcome.addedMinor }, 'registrant added extras');
      if (outcome.balanceMinor > 0 && outcome.paymentMethod === 'card') {
        const registration = await loadPublicRegistration(ctx.db, outcome.registrationId, ctx.clock.now());
        if (registration && !(await payNowRefusal(ctx, registration))) {
          const pay = `${payNowPath(ctx.config.authSecret, registration.id, registration.linkVersion)}&amount=${outcome.balanceMinor}`;
          return reply.code(303).header('location', pay).send();
        }
      }
      return back(reply, token, outcome.addedMinor > 0 ? 'extras' : 'extras-free');
    } catch (error) {
      if (error instanceof ManageRefusedError) return refused(reply, token, error);
      throw error;
    }
  });

  app.get(`${MANAGE_ROUTE}/cancel`, { config: { rateLimit: MANAGE_VIEW_RATE_LIMIT } }, async (request, reply) => {
    const link = await found(request.params);
    if (!link) return notFound(reply);
    const { registration, event } = link.managed;
    const paid = await receivedMinor(ctx.db, registration.id);
    const open = registration.status !== 'CANCELLED' && changesOpen(event, ctx.clock.now());
    // The card-payment check is made again under the lock when the button is pressed.
    if (!open || cancelOption(registration, paid, false) !== 'self') return reply.code(303).header('location', `/manage/${link.token}`).send();
    const format = pageFormat(ctx.config.regional);
    return page(privatePage(reply), manageCancelPage, {
      title: 'Cancel your registration',
      eventTitle: event.title,
      when: format.dateTimeSpan(event.startsAt, event.endsAt),
      seats: registration.attendee_count,
      seatsInWords: registration.attendee_count === 1 ? 'its place' : `its ${registration.attendee_count} places`,
      action: `/manage/${link.token}/cancel`,
      backHref: `/manage/${link.token}`,
    });
  });

  app.post(`${MANAGE_ROUTE}/cancel`, { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
    const token = tokenOf(request.params);
    if (!token) return notFound(reply);
    try {
      const freed = await cancelByRegistrant(ctx, token, client(request));
      if (!freed) return notFound(reply);
      request.log.info({ seatsFreed: freed.seatsFreed }, 'registrant cancelled their registration');
      return back(reply, token, 'cancelled');
    } catch (error) {
      if (error instanceof ManageRefusedError) return refused(reply, token, error);
      throw error;
    }
  });

  app.post(`${MANAGE_ROUTE}/ask-cancel`, { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
    const token = tokenOf(request.params);
    if (!token) return notFound(reply);
    try {
      const outcome = await askOfficeToCancel(ctx, token, client(request));
      if (outcome.kind === 'not_found') return notFound(reply);
      return back(reply, token, outcome.kind === 'asked' ? 'asked' : 'already-asked');
    } catch (error) {
      if (error instanceof ManageRefusedError) return refused(reply, token, error);
      throw error;
    }
  });
}
