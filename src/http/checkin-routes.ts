import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { checkinLinkStateOf, findLiveCheckinLink, type CheckinLink } from '../door/links.js';
import { payAtDoor } from '../door/pay-at-door.js';
import { outsideEventDays } from '../registrations/checkin/event-days.js';
import { MOST_TAPS_PER_UPLOAD, spendLinkBudget } from '../door/link-budget.js';
import { CHECKIN_ACTIONS, recordCheckinAction, type CheckinOutcome } from '../registrations/checkin/records.js';
import { loadEventForRoll, loadRoll } from '../door/roll.js';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { CHECKIN_ROUTE } from '../secret-paths.js';
import { CHECKIN_NOTICES, checkinPageData } from './checkin-view.js';
import { LINK_EXPIRES_HEADER } from './checkin-offline-names.js';
import { registerCheckinWorker } from './checkin-worker-route.js';
import type { LinkRefusal } from './checkin-words.js';
import { sendError } from './errors.js';
import type { PageRenderer } from './pages.js';
import { privatePage, sendPageNotFound } from './public-pages.js';
import { checkinPage } from './templates/checkin-page.js';
import { messagePage } from './templates/message-page.js';

/** Wrong, expired or revoked check-in tokens allowed per client in a minute, over every check-in route. */
export const FAILED_CHECKIN_TOKENS_PER_MINUTE = 10;
/**
 * The most actions one upload may carry; only the first MOST_TAPS_PER_UPLOAD are recorded, and the answer names
 * them, so the page keeps the rest for its next upload (as a page sending a queue this long before did).
 */
export const MOST_ACTIONS_PER_UPLOAD = 500;

type RateLimitOptions = Exclude<FastifyContextConfig['rateLimit'], false>;

const tokenParams = z.object({ token: z.string().max(100) });
const queryOf = z.object({ q: z.string().max(200).optional(), done: z.string().max(16).optional() });
const formAction = z.object({
  registration: z.string().max(64),
  attendee: z.coerce.number().int().min(0).max(10_000),
  action: z.enum(CHECKIN_ACTIONS as [string, ...string[]]),
  q: z.string().max(200).optional(),
});
const uploadSchema = z.object({
  actions: z
    .array(
      z.object({
        id: z.string().uuid(),
        action: z.enum(CHECKIN_ACTIONS as [string, ...string[]]),
        registration: z.string().max(64),
        attendee: z.number().int().min(0).max(10_000),
        at: z.string().max(40).optional(),
      }),
    )
    .max(MOST_ACTIONS_PER_UPLOAD),
});
const payForm = z.object({ registration: z.string().max(64), method: z.enum(['cash', 'bank']), q: z.string().max(200).optional() });

/**
 * The check-in page of a volunteer's link (see door/links.ts): GET shows the roll, POST …/actions records
 * check-ins (a form post, or the script's JSON upload of its queue), POST …/pay records the balance paid at the door.
 * The per-client rate limit counts only failed guesses: a live link's requests are allowed through, so a door busy
 * with volunteers behind one address is never slowed, while a guesser is stopped after ten tries a minute. A live
 * link is held to its own budget instead (link-budget.ts: each request 1, each tap 1 more, 300 a minute), whoever
 * sends its requests. A token that opens nothing (unknown, expired, revoked) is a 404 that does not say which.
 */
export function registerCheckinRoutes(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  registerCheckinWorker(app);
  const links = new WeakMap<FastifyRequest, CheckinLink>();
  const tokenOf = (request: FastifyRequest) => tokenParams.safeParse(request.params).data?.token;
  const linkOf = async (request: FastifyRequest): Promise<CheckinLink | undefined> => {
    const cached = links.get(request);
    if (cached) return cached;
    const token = tokenOf(request);
    const link = token ? await findLiveCheckinLink(ctx.db, token, ctx.clock.now()) : undefined;
    if (link) links.set(request, link);
    return link;
  };
  const guesses: RateLimitOptions = {
    max: FAILED_CHECKIN_TOKENS_PER_MINUTE,
    timeWindow: '1 minute',
    groupId: 'checkin-token',
    allowList: async (request) => (await linkOf(request)) !== undefined,
  };
  const notFound = (reply: FastifyReply) => sendPageNotFound(page, privatePage(reply), 'check-in page');
  /**
   * The script's upload through a link that opens nothing: why, as the error's code, so the page can tell the
   * volunteer what became of the taps it held (410 revoked or expired; 404 for a token never made).
   */
  const refuseUpload = async (request: FastifyRequest, reply: FastifyReply) => {
    const token = tokenOf(request);
    const state = token ? await checkinLinkStateOf(ctx.db, token, ctx.clock.now()) : 'unknown';
    const refusal: LinkRefusal = state === 'revoked' ? 'link_revoked' : state === 'expired' ? 'link_expired' : 'not_found';
    if (refusal === 'not_found') return sendError(privatePage(reply), 404, refusal, 'Nothing is here.');
    return sendError(privatePage(reply), 410, refusal, refusal === 'link_revoked' ? 'This check-in link was revoked.' : 'This check-in link has expired.');
  };
  const show = async (reply: FastifyReply, link: CheckinLink, token: string, view: Parameters<typeof checkinPageData>[4] = {}) => {
    const roll = await loadRoll(ctx, await loadEventForRoll(ctx, { id: link.eventId }));
    // Read by the page's service worker: a copy kept on the phone is not shown after the link expires.
    reply.header(LINK_EXPIRES_HEADER, link.expiresAt.toISOString());
    return page(privatePage(reply), checkinPage, checkinPageData(ctx.config, link, token, roll, view));
  };
  /** Spends the link's budget; false when it is spent for this minute, and the 429 has been sent. */
  const withinBudget = async (reply: FastifyReply, link: CheckinLink, taps: number, json: boolean): Promise<boolean> => {
    const spent = await spendLinkBudget(ctx.db, link.id, 1 + taps, ctx.clock.now());
    if (spent.ok) return true;
    const message = `This check-in link has sent too much in the last minute; nothing was changed. Try again in ${spent.retryAfterSeconds} seconds.`;
    privatePage(reply).code(429).header('retry-after', String(spent.retryAfterSeconds));
    // Not the roll: loading it is what the budget keeps from being done too often.
    if (json) await sendError(reply, 429, 'link_budget_spent', message);
    else await page(reply, messagePage, { title: 'Too many requests', heading: 'Wait a moment', message, linkHref: `/checkin/${tokenOf(reply.request) as string}`, linkLabel: 'Back to the roll' });
    return false;
  };
  const tapFlag = (link: CheckinLink, at: Date) => outsideEventDays(at, { startsAt: link.eventStartsAt, endsAt: link.eventEndsAt }, ctx.config.regional.timeZone);
  const back = (reply: FastifyReply, token: string, query: string | undefined, done: string) => {
    const search = new URLSearchParams({ ...(query ? { q: query } : {}), done });
    return reply.code(303).header('location', `/checkin/${token}?${search.toString()}`).send();
  };

  app.get(CHECKIN_ROUTE, { config: { recordView: true, rateLimit: guesses } }, async (request, reply) => {
    const link = await linkOf(request);
    if (!link) return notFound(reply);
    if (!(await withinBudget(reply, link, 0, false))) return reply;
    const query = queryOf.safeParse(request.query).data ?? {};
    return show(reply, link, tokenOf(request) as string, { query: query.q, notice: query.done ? CHECKIN_NOTICES[query.done] : undefined });
  });

  app.post(`${CHECKIN_ROUTE}/actions`, { config: { rateLimit: guesses } }, async (request, reply) => {
    const link = await linkOf(request);
    const json = (request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json');
    if (!link) return json ? refuseUpload(request, reply) : notFound(reply);
    const now = ctx.clock.now();
    const base = { eventId: link.eventId, label: link.label, linkId: link.id, now };
    if (!json) {
      if (!(await withinBudget(reply, link, 1, false))) return reply;
      const parsed = formAction.safeParse(request.body ?? {});
      if (!parsed.success) return show(reply.code(400), link, tokenOf(request) as string, { error: 'That button did not say who; nothing was changed.' });
      const { registration, attendee, action, q } = parsed.data;
      const outcome = await recordCheckinAction(ctx.db, {
        ...base,
        registrationId: registration,
        attendeeIndex: attendee,
        action: action as (typeof CHECKIN_ACTIONS)[number],
        at: now,
        outsideEventDays: tapFlag(link, now),
      });
      if (outcome === 'not_found') return show(reply.code(404), link, tokenOf(request) as string, { query: q, error: 'That person is not on this roll (any more); nothing was changed.' });
      return back(reply, tokenOf(request) as string, q, outcome === 'recorded' ? 'recorded' : 'unchanged');
    }
    const parsed = uploadSchema.safeParse(request.body ?? {});
    if (!parsed.success) return sendError(privatePage(reply), 400, 'invalid_upload', 'The upload was not understood.');
    // The first taps only, in the order tapped: the answer names them, and the page sends the rest next.
    const taken = parsed.data.actions.slice(0, MOST_TAPS_PER_UPLOAD);
    if (!(await withinBudget(reply, link, taken.length, true))) return reply;
    const results: Array<{ id: string; outcome: CheckinOutcome }> = [];
    for (const action of taken) {
      const at = tapTime(action.at, link, now);
      const outcome = await recordCheckinAction(ctx.db, {
        ...base,
        registrationId: action.registration,
        attendeeIndex: action.attendee,
        action: action.action as (typeof CHECKIN_ACTIONS)[number],
        at,
        nonce: action.id,
        outsideEventDays: tapFlag(link, at),
      });
      results.push({ id: action.id, outcome });
    }
    const roll = await loadRoll(ctx, await loadEventForRoll(ctx, { id: link.eventId }));
    return privatePage(reply).send({
      results,
      left: parsed.data.actions.length - taken.length,
      here: roll.here,
      total: roll.total,
      states: Object.fromEntries(roll.attendees.map((a) => [a.key, a.state])),
    });
  });

  app.post(`${CHECKIN_ROUTE}/pay`, { config: { rateLimit: guesses } }, async (request, reply) => {
    const link = await linkOf(request);
    if (!link) return notFound(reply);
    if (!(await withinBudget(reply, link, 1, false))) return reply;
    const token = tokenOf(request) as string;
    const parsed = payForm.safeParse(request.body ?? {});
    if (!parsed.success || !link.canTakePayment) {
      return show(reply.code(parsed.success ? 403 : 400), link, token, { error: parsed.success ? 'This link cannot record payments.' : 'Choose cash or bank; nothing was recorded.' });
    }
    try {
      const paid = await payAtDoor(ctx, link, { registrationId: parsed.data.registration, method: parsed.data.method });
      request.log.info({ reference: paid.reference, method: parsed.data.method }, 'balance paid at the door');
      return back(reply, token, parsed.data.q, 'paid');
    } catch (error) {
      if (error instanceof AppError) return show(reply.code(409), link, token, { query: parsed.data.q, error: error.message });
      throw error;
    }
  });
}

/**
 * When an action happened: the phone's time of the tap (an action queued offline is uploaded later), believed only
 * between the link's making and now, else the time it arrived. A time believed but outside the event's days is
 * recorded with a flag (tapFlag), which `registrations show` and `export` carry.
 */
function tapTime(at: string | undefined, link: CheckinLink, now: Date): Date {
  const tapped = at ? new Date(at) : undefined;
  if (!tapped || Number.isNaN(tapped.getTime())) return now;
  return tapped.getTime() >= link.createdAt.getTime() && tapped.getTime() <= now.getTime() ? tapped : now;
}
