import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { publicClient } from '../client-key.js';
import type { AppContext } from '../context.js';
import { contactEmail, contactMobile } from '../contact-rules.js';
import { AppError } from '../errors.js';
import { askToJoinWaitingList, confirmWaitlistEntry, takeOffList, type ConfirmOutcome } from '../registrations/waitlist/join.js';
import { confirmPath, leavePath } from '../registrations/waitlist/links.js';
import { UNCONFIRMED_LAPSE_MS } from '../registrations/waitlist/offers.js';
import { readConfirmToken, readLeaveToken } from '../registrations/waitlist/tokens.js';
import { WAITLIST_CONFIRM_ROUTE, WAITLIST_LEAVE_ROUTE } from '../secret-paths.js';
import { checkBotToken } from './bot-check.js';
import { sendError } from './errors.js';
import { eventPageData, eventPath, type WaitlistValues } from './event-view.js';
import { personName } from './field-rules.js';
import type { PageRenderer } from './pages.js';
import { privatePage, PUBLIC_FORM_RATE_LIMIT, readEventPage, sendPageNotFound, slugOf } from './public-pages.js';
import { CAPTCHA_FORM_FIELD } from './registration-form.js';
import { eventPage } from './templates/event-page.js';
import { messagePage } from './templates/message-page.js';
import { waitlistConfirmPage, type WaitlistConfirmPageData } from './templates/waitlist-confirm-page.js';
import { waitlistLeavePage } from './templates/waitlist-leave-page.js';

const joinSchema = z.object({
  name: personName('enter your name'),
  email: contactEmail('enter your email address'),
  mobile: contactMobile('enter a phone number or leave it empty')
    .optional()
    .transform((v) => (v ? v : undefined)),
  places: z.coerce.number({ error: 'the number of places you need' }).int({ error: 'a whole number of places' }).min(1, { error: 'at least 1' }),
  // The ticket type waited for ('' or absent: any).
  tier: z.string().max(100).optional().transform((v) => (v ? v : undefined)),
});

const LABELS: Record<string, string> = { name: 'Your name', email: 'Email', mobile: 'Mobile', places: 'Places wanted', tier: 'Ticket' };
const text = (value: unknown) => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '');

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json');
}

/** The one answer every join gets, whatever the list holds: only the mailbox learns what happened. */
const CHECK_EMAIL = {
  status: 'check_email',
  message: 'We have emailed the address you gave. Open the link in that email within 24 hours to confirm your place on the waiting list; if the address is already on the list, the email says so.',
} as const;

/**
 * The waiting list's public side: POST /events/:slug/waitlist asks to join (the form's rate limit and bot
 * check apply) and answers every ask alike; the confirm link of the join email (GET shows a button, POST
 * puts the entry on the list); and the leave link of its emails (GET shows a button and changes
 * nothing; POST leaves).
 */
export function registerWaitlistRoutes(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  app.post('/events/:slug/waitlist', { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
    const json = wantsJson(request);
    // As the event page reads (one statement): the event, its places and the church's identity for the email and the answer.
    const read = await readEventPage(ctx, slugOf(request.params));
    if (!read) return json ? sendError(reply, 404, 'event_not_found', 'No open event has this address.') : sendPageNotFound(page, reply, 'event');
    const { event, preloaded, identity } = read;
    const body = (request.body ?? {}) as Record<string, unknown>;
    const values: WaitlistValues = { name: text(body.name), email: text(body.email), mobile: text(body.mobile), places: text(body.places), tier: text(body.tier) };
    const refuse = async (status: number, code: string, message: string) => {
      if (json) return sendError(reply, status, code, message);
      return page(reply.code(status), eventPage, await eventPageData(ctx, event, { waitlist: { values, error: message }, preloaded }), identity);
    };
    const parsed = joinSchema.safeParse(body);
    if (!parsed.success) {
      const message = parsed.error.issues.map((issue) => `${LABELS[String(issue.path[0])] ?? String(issue.path[0])}: ${issue.message}`).join('; ');
      return refuse(400, 'invalid_waitlist', message);
    }
    const token = text(json ? (body.captchaToken ?? body[CAPTCHA_FORM_FIELD]) : body[CAPTCHA_FORM_FIELD]);
    const botCheck = await checkBotToken(ctx, request, token || undefined, 'http:waitlist');
    if (!botCheck.ok) return refuse(botCheck.status, botCheck.code, botCheck.message);
    // The church's own networks have no per-client email cap; the per-mailbox one still applies.
    const client = publicClient(request.ip, ctx.config.limits.churchNetworks);
    try {
      await askToJoinWaitingList(
        ctx,
        event,
        { contact: { name: parsed.data.name, email: parsed.data.email, mobile: parsed.data.mobile }, places: parsed.data.places, tier: parsed.data.tier },
        { actor: 'waiting-list form', client: client.churchNetwork ? undefined : client.key },
        { event, count: preloaded.count, identity },
      );
    } catch (error) {
      if (error instanceof AppError && error.httpStatus < 500) return refuse(error.httpStatus, error.code, error.message);
      throw error;
    }
    if (json) return reply.code(202).send(CHECK_EMAIL);
    return page(reply.code(202), messagePage, {
      title: 'Check your email',
      heading: 'Check your email',
      message: CHECK_EMAIL.message,
      linkHref: eventPath(event.slug),
      linkLabel: 'Back to the event',
    }, identity);
  });

  const tokenParams = z.object({ token: z.string().max(200) });
  const entryOf = (params: unknown): { token: string; entryId: string } | undefined => {
    const parsed = tokenParams.safeParse(params);
    const entryId = parsed.success ? readLeaveToken(ctx.config.keyring, parsed.data.token) : undefined;
    return parsed.success && entryId ? { token: parsed.data.token, entryId } : undefined;
  };
  const show = (reply: FastifyReply, eventTitle: string, view: { action?: string; done: boolean }) =>
    page(privatePage(reply), waitlistLeavePage, { title: 'Waiting list', eventTitle, ...view });

  registerConfirmRoutes(app, ctx, page);

  app.get(WAITLIST_LEAVE_ROUTE, { config: { recordView: true } }, async (request, reply) => {
    const link = entryOf(request.params);
    const row = link
      ? await ctx.db('waitlist_entries as w').join('events as e', 'e.id', 'w.event_id').where('w.id', link.entryId).first<{ state: string; title: string } | undefined>('w.state', 'e.title')
      : undefined;
    if (!link || !row) return sendPageNotFound(page, reply, 'link');
    const onList = row.state === 'WAITING' || row.state === 'OFFERED';
    return show(reply, row.title, onList ? { action: leavePath(ctx.config, link.entryId), done: false } : { done: true });
  });

  app.post(WAITLIST_LEAVE_ROUTE, { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
    const link = entryOf(request.params);
    if (!link) return sendPageNotFound(page, reply, 'link');
    try {
      const left = await takeOffList(ctx, link.entryId, { state: 'LEFT', actor: 'leave link' });
      return show(reply, left.eventTitle, { done: true });
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return sendPageNotFound(page, reply, 'link');
      throw error;
    }
  });
}

/** The join email's confirm link: GET shows a button for a link still to confirm (and changes nothing), POST confirms. */
function registerConfirmRoutes(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  const tokenParams = z.object({ token: z.string().max(200) });
  const entryOf = (params: unknown): string | undefined => {
    const parsed = tokenParams.safeParse(params);
    return parsed.success ? readConfirmToken(ctx.config.keyring, parsed.data.token) : undefined;
  };
  const show = (reply: FastifyReply, view: WaitlistConfirmPageData) => page(privatePage(reply), waitlistConfirmPage, { title: 'Waiting list', ...view });
  const closedView = (slug: string, outcome: 'lapsed' | 'closed'): WaitlistConfirmPageData['closed'] => ({
    message:
      outcome === 'lapsed'
        ? 'A link to confirm a place on the waiting list works for 24 hours, and only until it is used. You can join the waiting list again on the event page.'
        : 'This event no longer takes anyone onto its waiting list.',
    eventHref: eventPath(slug),
  });

  app.get(WAITLIST_CONFIRM_ROUTE, { config: { recordView: true } }, async (request, reply) => {
    const entryId = entryOf(request.params);
    const row = entryId
      ? await ctx.db('waitlist_entries as w')
          .join('events as e', 'e.id', 'w.event_id')
          .where('w.id', entryId)
          .first<{ state: string; places: number; created_at: Date; title: string; slug: string } | undefined>('w.state', 'w.places', 'w.created_at', 'e.title', 'e.slug')
      : undefined;
    if (!entryId || !row) return sendPageNotFound(page, reply, 'link');
    const base = { eventTitle: row.title, places: row.places, severalPlaces: row.places > 1 };
    if (row.state === 'WAITING' || row.state === 'OFFERED') return show(reply, { ...base, onList: {} });
    const fresh = row.state === 'UNCONFIRMED' && row.created_at.getTime() + UNCONFIRMED_LAPSE_MS > ctx.clock.now().getTime();
    return show(reply, fresh ? { ...base, action: confirmPath(ctx.config, entryId) } : { ...base, closed: closedView(row.slug, 'lapsed') });
  });

  app.post(WAITLIST_CONFIRM_ROUTE, { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
    const entryId = entryOf(request.params);
    if (!entryId) return sendPageNotFound(page, reply, 'link');
    let outcome: ConfirmOutcome & { eventTitle: string; eventSlug: string; places: number };
    try {
      outcome = await confirmWaitlistEntry(ctx, entryId, { actor: 'confirm link' });
    } catch (error) {
      if (error instanceof AppError && error.code === 'not_found') return sendPageNotFound(page, reply, 'link');
      throw error;
    }
    const base = { eventTitle: outcome.eventTitle, places: outcome.places, severalPlaces: outcome.places > 1 };
    switch (outcome.kind) {
      case 'confirmed':
      case 'on-list':
        return show(reply, { ...base, onList: { position: outcome.position ?? undefined } });
      case 'already':
        return show(reply, { ...base, already: true });
      default:
        return show(reply, { ...base, closed: closedView(outcome.eventSlug, outcome.kind) });
    }
  });
}
