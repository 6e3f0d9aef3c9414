import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { contactEmail, contactMobile } from '../contact-rules.js';
import { AppError } from '../errors.js';
import { joinWaitingList, takeOffList } from '../registrations/waitlist/join.js';
import { leavePath } from '../registrations/waitlist/links.js';
import { readLeaveToken } from '../registrations/waitlist/tokens.js';
import { WAITLIST_LEAVE_ROUTE } from '../secret-paths.js';
import { sendError } from './errors.js';
import { eventPageData, eventPath, type WaitlistValues } from './event-view.js';
import { personName } from './field-rules.js';
import type { PageRenderer } from './pages.js';
import { loadPublicEvent, privatePage, PUBLIC_FORM_RATE_LIMIT, sendPageNotFound, slugOf } from './public-pages.js';
import { eventPage } from './templates/event-page.js';
import { messagePage } from './templates/message-page.js';
import { waitlistLeavePage } from './templates/waitlist-leave-page.js';

const joinSchema = z.object({
  name: personName('enter your name'),
  email: contactEmail('enter your email address'),
  mobile: contactMobile('enter a phone number or leave it empty')
    .optional()
    .transform((v) => (v ? v : undefined)),
  places: z.coerce.number({ error: 'the number of places you need' }).int({ error: 'a whole number of places' }).min(1, { error: 'at least 1' }),
});

const LABELS: Record<string, string> = { name: 'Your name', email: 'Email', mobile: 'Mobile', places: 'Places wanted' };
const text = (value: unknown) => (typeof value === 'string' ? value : typeof value === 'number' ? String(value) : '');

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json');
}

/**
 * The waiting list's public side: POST /events/:slug/waitlist joins (the form's rate limit applies),
 * and the leave link of its emails (GET shows a button and changes nothing; POST leaves).
 */
export function registerWaitlistRoutes(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  app.post('/events/:slug/waitlist', { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } }, async (request, reply) => {
    const json = wantsJson(request);
    const event = await loadPublicEvent(ctx.db, slugOf(request.params));
    if (!event) return json ? sendError(reply, 404, 'event_not_found', 'No open event has this address.') : sendPageNotFound(page, reply, 'event');
    const body = (request.body ?? {}) as Record<string, unknown>;
    const values: WaitlistValues = { name: text(body.name), email: text(body.email), mobile: text(body.mobile), places: text(body.places) };
    const refuse = async (status: number, code: string, message: string) => {
      if (json) return sendError(reply, status, code, message);
      const current = (await loadPublicEvent(ctx.db, event.slug)) ?? event;
      return page(reply.code(status), eventPage, await eventPageData(ctx, current, { waitlist: { values, error: message } }));
    };
    const parsed = joinSchema.safeParse(body);
    if (!parsed.success) {
      const message = parsed.error.issues.map((issue) => `${LABELS[String(issue.path[0])] ?? String(issue.path[0])}: ${issue.message}`).join('; ');
      return refuse(400, 'invalid_waitlist', message);
    }
    try {
      const joined = await joinWaitingList(
        ctx,
        event,
        { contact: { name: parsed.data.name, email: parsed.data.email, mobile: parsed.data.mobile }, places: parsed.data.places },
        { actor: 'waiting-list form' },
      );
      if (json) return reply.code(201).send({ position: joined.position, places: joined.places });
      return page(reply.code(201), messagePage, {
        title: 'On the waiting list',
        heading: 'You are on the waiting list',
        message: `You are number ${joined.position} on the waiting list for ${event.title}, for ${joined.places} ${joined.places === 1 ? 'place' : 'places'}. We have emailed you, and we will email again when places are free for you.`,
        linkHref: eventPath(event.slug),
        linkLabel: 'Back to the event',
      });
    } catch (error) {
      if (error instanceof AppError && error.httpStatus < 500) return refuse(error.httpStatus, error.code, error.message);
      throw error;
    }
  });

  const tokenParams = z.object({ token: z.string().max(200) });
  const entryOf = (params: unknown): { token: string; entryId: string } | undefined => {
    const parsed = tokenParams.safeParse(params);
    const entryId = parsed.success ? readLeaveToken(ctx.config.keyring, parsed.data.token) : undefined;
    return parsed.success && entryId ? { token: parsed.data.token, entryId } : undefined;
  };
  const show = (reply: FastifyReply, eventTitle: string, view: { action?: string; done: boolean }) =>
    page(privatePage(reply), waitlistLeavePage, { title: 'Waiting list', eventTitle, ...view });

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
