import crypto from 'node:crypto';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { errorMessage } from '../errors.js';
import { recordError } from '../ops/error-log.js';
import { publicPricing, type EventPricing } from '../registrations/event-pricing.js';
import type { EventRecord } from '../registrations/event-record.js';
import { publicSeatCount } from '../registrations/registrations.js';

/**
 * The outbound website webhook ("Website webhook (outbound)" in the decisions).
 * Event changes insert an outbox row in their own transaction; delivery signs
 * and POSTs pending rows, retrying with backoff until the receiver answers 2xx.
 * Receivers dedupe by the body's `id`, so a repeated delivery is harmless.
 */

export type WebsiteSyncType = 'event.created' | 'event.updated' | 'event.published' | 'event.deleted';

export const WEBSITE_SIGNATURE_HEADER = 'X-Eventops-Signature';

/** The public fields of an event, as the website sees them. Times are UTC ISO strings. */
export interface WebsiteEventFields {
  slug: string;
  title: string;
  description: string | null;
  startsAt: string;
  /** null when the office gave no end. */
  endsAt: string | null;
  location: string | null;
  capacity: number | null;
  published: boolean;
  onlinePayment: boolean;
  pricing: EventPricing;
  /** How many attendees one registration may name. */
  maxAttendeesPerRegistration: number;
  /** Days an unpaid bank-transfer registration holds its places before the event (null: until the event). */
  unpaidHoldDays: number | null;
  /** The waiting list: on or off, how long an offer holds its places, and how many families wait (when counted). */
  waitingList: { enabled: boolean; offerHours: number; waiting?: number };
  /**
   * Places the public may still take, as the event page counts them (open offers hold theirs; none
   * while anyone waits); null = unlimited. Absent when not counted.
   */
  placesLeft?: number | null;
  deleted: boolean;
}

export interface WebsiteSyncBody {
  /** The delivery id (the outbox row id). */
  id: string;
  type: WebsiteSyncType;
  occurredAt: string;
  event: WebsiteEventFields;
}

export function websiteEventFields(event: EventRecord): WebsiteEventFields {
  return {
    slug: event.slug,
    title: event.title,
    description: event.description,
    startsAt: event.startsAt.toISOString(),
    endsAt: event.endsAt?.toISOString() ?? null,
    location: event.location,
    capacity: event.capacity,
    published: event.published,
    onlinePayment: event.onlinePayment,
    // Hidden tiers are offered only with a code: the website never hears of them. A schedule goes as the event file gives it.
    pricing: publicPricing(event.pricing),
    maxAttendeesPerRegistration: event.maxAttendeesPerRegistration,
    unpaidHoldDays: event.unpaidHoldDays,
    waitingList: { ...event.waitingList },
    deleted: event.deletedAt !== null,
  };
}

/**
 * Queues one notification inside the caller's transaction (pass the transaction
 * as `db`), so the change and its notification commit or roll back together.
 * Returns the delivery id, or null when website sync is off.
 */
export async function enqueueWebsiteSync(
  db: Db,
  ctx: Pick<AppContext, 'config' | 'clock'>,
  type: WebsiteSyncType,
  event: EventRecord,
): Promise<string | null> {
  if (!ctx.config.websiteSync) return null;
  const now = ctx.clock.now();
  const id = crypto.randomUUID();
  const fields = websiteEventFields(event);
  // Counted in the change's transaction (under the event's lock when the change holds it).
  const count = await publicSeatCount(db, event, now);
  fields.waitingList.waiting = count.waiting;
  fields.placesLeft = count.seatsLeft;
  const body: WebsiteSyncBody = { id, type, occurredAt: now.toISOString(), event: fields };
  await db('website_sync_outbox').insert({ id, type, body: JSON.stringify(body), created_at: now, next_attempt_at: now });
  return id;
}

export interface WebsiteSyncResult {
  /** False when WEBSITE_SYNC_URL/WEBSITE_SYNC_SECRET are unset: nothing was attempted. */
  enabled: boolean;
  delivered: number;
  failed: number;
  /** Rows still PENDING after this run (failed ones included). */
  pending: number;
  failures: Array<{ id: string; type: string; attempts: number; error: string; nextAttemptAt: Date }>;
}

export interface DeliverOptions {
  /** Most rows claimed in this run. */
  limit?: number;
  /** Per-request timeout. */
  timeoutMs?: number;
}

const CLAIM_MS = 2 * 60_000;
const DEFAULT_TIMEOUT_MS = 10_000;
const BACKOFF_BASE_MS = 60_000;
const BACKOFF_CAP_MS = 60 * 60_000;

/**
 * A notification still refused after this many tries (about four hours of backoff) is written to the
 * error log once, so the weekly digest reports what otherwise only a log line and `eventops status`
 * show: the website answers 4xx for a rotated secret or a payload it rejects, and every later change
 * of that event waits behind it.
 */
export const STUCK_AFTER_ATTEMPTS = 10;

export class WebsiteSyncStuckError extends Error {
  constructor(type: string, attempts: number, lastError: string) {
    super(`the website has refused the ${type} notification ${attempts} times, and later changes of its event wait behind it: ${lastError}`);
    this.name = 'WebsiteSyncStuckError';
  }
}

/** Delay before the next try after the given number of attempts: 1 min, 2, 4, … capped at 1 h. */
export function websiteSyncBackoffMs(attempts: number): number {
  return Math.min(BACKOFF_BASE_MS * 2 ** Math.max(0, attempts - 1), BACKOFF_CAP_MS);
}

interface ClaimedRow {
  id: string;
  type: string;
  body: unknown;
  attempts: number;
  seq: number;
  claimed_until: Date;
}

/**
 * Claims due rows (one run at a time, see claimDueRows, so concurrent runs
 * never share a row) and delivers them in the order they were queued. A row
 * is claimed only when no earlier notification for the same event is still
 * undelivered, so a later change never overtakes one that is waiting out its
 * backoff (or is in flight in another run). At the first failure the run stops
 * and hands the untried rows back, so a receiver that is down is not hammered. A slow receiver gets the
 * same: rows not started in time are handed back before the claim runs out.
 */
export async function deliverWebsiteSync(
  ctx: Pick<AppContext, 'config' | 'db' | 'clock' | 'logger'>,
  options: DeliverOptions = {},
): Promise<WebsiteSyncResult> {
  const target = ctx.config.websiteSync;
  if (!target) return { enabled: false, delivered: 0, failed: 0, pending: await countPendingWebsiteSync(ctx.db), failures: [] };

  const claimedAt = ctx.clock.now();
  const rows = await claimDueRows(ctx.db, { now: claimedAt, limit: options.limit ?? 50 });

  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  // No post starts unless it ends (at its timeout) well inside the claim: a row of this run is never in
  // flight when another run may claim the rows after it and send them first. The claim runs out by the
  // database's clock; this server counts down from when it asked, so its own clock being off does not matter.
  const postBefore = claimedAt.getTime() + CLAIM_MS - 2 * timeoutMs;
  const result: WebsiteSyncResult = { enabled: true, delivered: 0, failed: 0, pending: 0, failures: [] };
  for (const [index, row] of rows.entries()) {
    if (ctx.clock.now().getTime() >= postBefore) {
      await releaseUntried(ctx.db, rows.slice(index));
      ctx.logger.warn({ handedBack: rows.length - index }, 'the website is slow: undelivered changes handed back before their claim ran out');
      break;
    }
    const outcome = await postSigned(target, JSON.stringify(row.body), ctx.clock.now(), timeoutMs);
    const now = ctx.clock.now();
    if (outcome.ok) {
      await ctx.db('website_sync_outbox')
        .where({ id: row.id, status: 'PENDING' })
        .update({ status: 'DELIVERED', delivered_at: now, claimed_until: null, last_error: null });
      result.delivered += 1;
      ctx.logger.info({ deliveryId: row.id, type: row.type }, 'website sync delivered');
      continue;
    }
    const nextAttemptAt = new Date(now.getTime() + websiteSyncBackoffMs(row.attempts));
    await ctx.db('website_sync_outbox')
      .where({ id: row.id, status: 'PENDING' })
      .update({ next_attempt_at: nextAttemptAt, claimed_until: null, last_error: outcome.error });
    result.failed += 1;
    result.failures.push({ id: row.id, type: row.type, attempts: row.attempts, error: outcome.error, nextAttemptAt });
    ctx.logger.warn({ deliveryId: row.id, type: row.type, attempts: row.attempts, error: outcome.error }, 'website sync failed; will retry');
    if (row.attempts === STUCK_AFTER_ATTEMPTS) {
      const stuck = new WebsiteSyncStuckError(row.type, row.attempts, outcome.error);
      await recordError(ctx.db, stuck, { source: 'website-sync', now, context: { deliveryId: row.id } }).catch((error: unknown) => {
        ctx.logger.warn({ error: errorMessage(error) }, 'could not record the stuck website notification');
      });
    }
    await releaseUntried(ctx.db, rows.slice(index + 1));
    break;
  }
  result.pending = await countPendingWebsiteSync(ctx.db);
  return result;
}

/**
 * Due rows, in queue order, skipping every row of an event that has an
 * earlier undelivered row not due (backing off) or claimed by another run.
 * Earlier due rows of the same event come first in the same batch, so a
 * burst of changes goes out in one run. Claims are taken one run at a time
 * (a transaction-scoped advisory lock), so a run never sees another's claim
 * half made and lets a later row through beside an earlier one in flight.
 * Due times are this server's (its backoff set them); claims are taken and
 * judged by the database's clock, which every server shares, to the
 * millisecond so releaseUntried can match them from a JavaScript Date.
 */
async function claimDueRows(db: Db, claim: { now: Date; limit: number }): Promise<ClaimedRow[]> {
  return db.transaction(async (trx) => {
    await trx.raw(`SELECT pg_advisory_xact_lock(hashtext('eventops:website-sync-claim'))`);
    const claimed = await trx.raw<{ rows: ClaimedRow[] }>(
      `UPDATE website_sync_outbox SET claimed_until = date_trunc('milliseconds', statement_timestamp() + make_interval(secs => ?)), attempts = attempts + 1
       WHERE id IN (
         SELECT o.id FROM website_sync_outbox o
         WHERE o.status = 'PENDING' AND o.next_attempt_at <= ? AND (o.claimed_until IS NULL OR o.claimed_until <= statement_timestamp())
           AND NOT EXISTS (
             SELECT 1 FROM website_sync_outbox earlier
             WHERE earlier.status = 'PENDING' AND earlier.event_slug = o.event_slug AND earlier.seq < o.seq
               AND (earlier.next_attempt_at > ? OR earlier.claimed_until > statement_timestamp()))
         ORDER BY o.seq
         LIMIT ?)
       RETURNING id, type, body, attempts, seq, claimed_until`,
      [CLAIM_MS / 1000, claim.now, claim.now, claim.limit],
    );
    return claimed.rows.sort((a, b) => Number(a.seq) - Number(b.seq));
  });
}

/** Rows this run still holds (its own claim) go back, their attempt not counted. */
async function releaseUntried(db: Db, rows: ClaimedRow[]): Promise<void> {
  if (rows.length === 0) return;
  await db.raw(
    `UPDATE website_sync_outbox o SET claimed_until = NULL, attempts = attempts - 1
       FROM unnest(?::uuid[], ?::timestamptz[]) AS held(id, until)
      WHERE o.id = held.id AND o.status = 'PENDING' AND o.claimed_until = held.until`,
    [rows.map((row) => row.id), rows.map((row) => row.claimed_until)],
  );
}

type PostOutcome = { ok: true } | { ok: false; error: string };

async function postSigned(target: { url: string; secret: string }, body: string, now: Date, timeoutMs: number): Promise<PostOutcome> {
  try {
    const response = await fetch(target.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'eventops-website-sync',
        [WEBSITE_SIGNATURE_HEADER]: signWebsiteBody(target.secret, body, Math.floor(now.getTime() / 1000)),
      },
      body,
      // The signed body goes to WEBSITE_SYNC_URL only: a redirect is not followed (it could name any host).
      redirect: 'manual',
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await response.text();
    if (response.status >= 300 && response.status < 400) {
      return { ok: false, error: `HTTP ${response.status}: redirects are not followed; set WEBSITE_SYNC_URL to the final address` };
    }
    if (response.ok) return { ok: true };
    return { ok: false, error: `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}` };
  } catch (error) {
    return { ok: false, error: describeFetchError(error, timeoutMs) };
  }
}

function describeFetchError(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && error.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const cause = error instanceof Error ? error.cause : undefined;
  return cause === undefined ? errorMessage(error) : `${errorMessage(error)} (${errorMessage(cause)})`;
}

/** The signature header value: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export function signWebsiteBody(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${hmacHex(secret, `${unixSeconds}.${body}`)}`;
}

function hmacHex(secret: string, payload: string): string {
  return crypto.createHmac('sha256', secret).update(payload, 'utf8').digest('hex');
}

/**
 * For receivers and tests: true when the header carries a v1 signature of
 * `<t>.<body>` under the secret and t is within the tolerance of now.
 * `body` must be the raw request body, byte for byte.
 */
export function verifyWebsiteSignature(
  secret: string,
  header: string | null | undefined,
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  if (!header) return false;
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const [key, value] = part.trim().split('=', 2);
    if (key === 't' && value && /^\d+$/.test(value)) timestamp = Number(value);
    if (key === 'v1' && value) signatures.push(value);
  }
  if (timestamp === undefined || signatures.length === 0) return false;
  if (Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(hmacHex(secret, `${timestamp}.${body}`), 'utf8');
  return signatures.some((signature) => {
    const given = Buffer.from(signature, 'utf8');
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
}

/** Where one notification stands: PENDING (a live claimedUntil means a run has it in hand) or DELIVERED. */
export async function websiteSyncDelivery(
  db: Db,
  id: string,
): Promise<{ status: string; claimedUntil: Date | null; lastError: string | null }> {
  const row = await db('website_sync_outbox')
    .where({ id })
    .first<{ status: string; claimed_until: Date | null; last_error: string | null } | undefined>('status', 'claimed_until', 'last_error');
  if (!row) throw new Error(`no website notification ${id}`);
  return { status: row.status, claimedUntil: row.claimed_until, lastError: row.last_error };
}

export async function countPendingWebsiteSync(db: Db): Promise<number> {
  const row = await db('website_sync_outbox').where({ status: 'PENDING' }).count<{ count: number }[]>({ count: '*' }).first();
  return Number(row?.count ?? 0);
}
