import type { Knex } from 'knex';
import type { AppContext } from '../../context.js';
import { offerCheckoutOf } from '../card-checkouts.js';
import { eventFromRow, type EventRecord, type EventRow } from '../event-record.js';
import { lockEventForSeats, publicSeatCount, tierPlacesFree, type LockedEvent } from '../registrations.js';
import { entryContact, entryReference, recordWaitlistHistory, type WaitlistEntryRow } from './entries.js';
import { queueOfferEmail, queueOfferExpiredEmail } from './mail.js';
import { planOffers, type QueuedEntry } from './plan.js';

export { WAITLIST_SKIP_LIMIT } from './plan.js';

export type WaitlistContext = Pick<AppContext, 'db' | 'config' | 'cipher' | 'clock'>;

export interface WaitlistPassCounts {
  offered: number;
  expired: number;
  /** Unconfirmed entries that lapsed (a pass only). */
  lapsed?: number;
}

/** Whether new offers may be made for the event now: its list is on, it is public, and registration is still open. */
export function offersOpen(event: EventRecord, now: Date): boolean {
  return event.waitingList.enabled && event.published && event.deletedAt === null && event.startsAt.getTime() > now.getTime();
}

/**
 * Under the event's lock (lockEventForSeats, taken by the caller): expires the offers past their time,
 * then offers the free places in order (planOffers). Free places are counted, not reported: whatever
 * freed them (a cancellation, a released hold, a refund, a raised capacity) shows as capacity minus
 * what registrations and open offers hold.
 */
export async function settleWaitlist(
  trx: Knex.Transaction,
  ctx: WaitlistContext,
  locked: LockedEvent,
  options: { actor: string; now: Date },
): Promise<WaitlistPassCounts> {
  const { event } = locked;
  const { now, actor } = options;
  const expired = await expireDueOffers(trx, ctx, event, now, actor);
  const counts = { offered: 0, expired: expired.length };
  if (!offersOpen(event, now)) return counts;
  const free = freePlaces(locked, expired);
  if (free <= 0) return counts;

  const plan = planOffers(free, locked.queue, freeTierPlaces(locked, expired));
  for (const step of plan.steps) {
    await offerEntry(trx, ctx, event, step.offer, { actor, now });
    counts.offered += 1;
    for (const skipped of step.passedOver) await recordSkip(trx, skipped, step.offer, { actor, now });
  }
  return counts;
}

/** Free places once the offers just expired let theirs go (Infinity = no capacity). */
function freePlaces(locked: LockedEvent, expired: ReadonlyArray<Pick<WaitlistEntryRow, 'places'>>): number {
  if (locked.event.capacity === null) return Number.POSITIVE_INFINITY;
  return locked.event.capacity - (locked.seatsTaken - expired.reduce((sum, entry) => sum + entry.places, 0));
}

/** The free places of each ticket type with places of its own, once the offers just expired let theirs go. */
function freeTierPlaces(locked: Pick<LockedEvent, 'event' | 'tierTaken'>, expired: ReadonlyArray<Pick<WaitlistEntryRow, 'places' | 'tier'>>): Map<string, number> {
  const freed: Record<string, number> = {};
  for (const entry of expired) if (entry.tier) freed[entry.tier] = (freed[entry.tier] ?? 0) + entry.places;
  return tierPlacesFree(locked, freed);
}

/** The confirmed entries still waiting, in queue order. */
export async function queueOf(db: Knex | Knex.Transaction, eventId: string): Promise<QueuedEntry[]> {
  return db('waitlist_entries').where({ event_id: eventId, state: 'WAITING' }).orderBy('position').select<QueuedEntry[]>('id', 'places', 'skips', 'tier');
}

/** One more skip for an entry passed over so that `servedInstead`, behind it, could be offered places. */
async function recordSkip(trx: Knex.Transaction, skipped: QueuedEntry, servedInstead: QueuedEntry, options: { actor: string; now: Date }): Promise<void> {
  const [row] = await trx('waitlist_entries')
    .where({ id: skipped.id })
    .update({ skips: trx.raw('skips + 1'), updated_at: options.now })
    .returning<Array<{ skips: number }>>('skips');
  await recordWaitlistHistory(trx, { entryId: skipped.id, action: 'skipped', changes: { skips: row?.skips, servedInstead: servedInstead.id }, actor: options.actor, now: options.now });
}

/**
 * OFFERED past its expiry → EXPIRED: the places it held are free again, and the family is told its offer
 * expired (and that it is off the list). Returns the entries expired.
 * An offer ends at the time its email stated; only a card checkout opened from it before then, while
 * that checkout is still open and unexpired, keeps its places held a little longer (offerCheckoutOf),
 * so its payment completes into them. Opening a checkout never moves the offer's time.
 */
async function expireDueOffers(trx: Knex.Transaction, ctx: WaitlistContext, event: EventRecord, now: Date, actor: string): Promise<WaitlistEntryRow[]> {
  const expired = await trx('waitlist_entries')
    .where({ event_id: event.id, state: 'OFFERED' })
    .andWhere('offer_expires_at', '<=', now)
    .whereNotExists(offerCheckoutOf('waitlist_entries', now))
    .update({ state: 'EXPIRED', updated_at: now })
    .returning<WaitlistEntryRow[]>('*');
  for (const entry of expired) {
    const expiredAt = entry.offer_expires_at as Date;
    await recordWaitlistHistory(trx, {
      entryId: entry.id,
      action: 'expired',
      changes: { state: { from: 'OFFERED', to: 'EXPIRED' }, placesFreed: entry.places, expiredAt: expiredAt.toISOString() },
      actor,
      now,
    });
    await queueOfferExpiredEmail(trx, ctx, { entryId: entry.id, offerSeq: entry.offer_seq, contact: entryContact(ctx.cipher, entry), event, places: entry.places, expiredAt }, now);
  }
  return expired;
}

/**
 * WAITING → OFFERED, holding its places for the event's offerHours (never past the start, when
 * registration closes), with a new offer number, and queues the offer email. The caller holds the
 * event's lock and has checked that the places are free.
 */
export async function offerEntry(
  trx: Knex.Transaction,
  ctx: Pick<AppContext, 'config' | 'cipher'>,
  event: EventRecord,
  entry: Pick<WaitlistEntryRow, 'id'>,
  options: { actor: string; now: Date; note?: string; outOfOrder?: boolean },
): Promise<WaitlistEntryRow> {
  const { now } = options;
  const expiresAt = new Date(Math.min(now.getTime() + event.waitingList.offerHours * 3600_000, event.startsAt.getTime()));
  const [offered] = await trx('waitlist_entries')
    .where({ id: entry.id, state: 'WAITING' })
    .update({ state: 'OFFERED', offer_seq: trx.raw('offer_seq + 1'), offered_at: now, offer_expires_at: expiresAt, updated_at: now })
    .returning<WaitlistEntryRow[]>('*');
  if (!offered) throw new Error(`waiting-list entry ${entry.id} is no longer waiting`);
  await recordWaitlistHistory(trx, {
    entryId: offered.id,
    action: 'offered',
    changes: {
      state: { from: 'WAITING', to: 'OFFERED' },
      places: offered.places,
      expiresAt: expiresAt.toISOString(),
      offer: offered.offer_seq,
      ...(options.outOfOrder ? { outOfOrder: true } : {}),
    },
    note: options.note,
    actor: options.actor,
    now,
  });
  await queueOfferEmail(
    trx,
    ctx,
    { entryId: offered.id, offerSeq: offered.offer_seq, contact: entryContact(ctx.cipher, offered), event, places: offered.places, expiresAt },
    now,
  );
  return offered;
}

/** Called with each event whose settling failed, after its transaction rolled back (the others go on). */
export type EventFailure = (error: unknown, eventId: string) => Promise<void>;

/**
 * One pass over every event with someone on its list: each event in its own transaction under its
 * lock, so a pass on two servers at once, or beside a registration, never offers a place twice.
 * Then unconfirmed entries a day old lapse. An event that fails is rolled back on its own and
 * handed to `onEventFailure` (the error log, for the digest); every other event is still settled.
 * Without `onEventFailure`, the first failure is thrown once every event has had its turn.
 */
export async function runWaitlistPass(ctx: WaitlistContext, options: { actor: string; onEventFailure?: EventFailure }): Promise<WaitlistPassCounts> {
  const events = await ctx.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).distinct<Array<{ event_id: string }>>('event_id').orderBy('event_id');
  const total = { offered: 0, expired: 0, lapsed: 0 };
  const failures: Array<{ error: unknown; eventId: string }> = [];
  for (const { event_id: eventId } of events) {
    try {
      const counts = await ctx.db.transaction(async (trx) => {
        const now = ctx.clock.now();
        const locked = await lockEventForSeats(trx, eventId, now);
        return locked ? settleWaitlist(trx, ctx, locked, { actor: options.actor, now }) : { offered: 0, expired: 0 };
      });
      total.offered += counts.offered;
      total.expired += counts.expired;
    } catch (error) {
      failures.push({ error, eventId });
    }
  }
  // Last: unconfirmed entries hold nothing, so lapsing them changes no event's offers, and the pass
  // writes the entries of an event only under that event's lock, first.
  total.lapsed = await lapseUnconfirmedEntries(ctx.db, ctx.clock.now(), options.actor);
  if (failures.length > 0 && !options.onEventFailure) throw failures[0]?.error;
  for (const failure of failures) await options.onEventFailure?.(failure.error, failure.eventId);
  return total;
}

/** An unconfirmed entry lapses this long after joining: its confirm link no longer works. */
export const UNCONFIRMED_LAPSE_MS = 24 * 3600_000;

/** UNCONFIRMED a day after joining → LAPSED, with its history, in one statement (they hold no places: no event lock). */
export async function lapseUnconfirmedEntries(db: Knex, now: Date, actor: string): Promise<number> {
  const result = await db.raw<{ rows: Array<{ lapsed: number }> }>(
    `WITH lapsed AS (
       UPDATE waitlist_entries SET state = 'LAPSED', updated_at = :now
        WHERE state = 'UNCONFIRMED' AND created_at <= :before
        RETURNING id
     ), recorded AS (
       INSERT INTO waitlist_history (entry_id, action, changes, actor, created_at)
       SELECT id, 'lapsed', '{"state":{"from":"UNCONFIRMED","to":"LAPSED"}}'::jsonb, :actor, :now FROM lapsed
     )
     SELECT count(*)::int AS lapsed FROM lapsed`,
    { now, before: new Date(now.getTime() - UNCONFIRMED_LAPSE_MS), actor },
  );
  return result.rows[0]?.lapsed ?? 0;
}

/**
 * What a pass would do now, changing nothing (`sweep-checkouts --dry-run`): the joins that would lapse,
 * the offers that would expire, and the offers that would be made, per event, as the pass decides them.
 * Read without locks: a registration meanwhile may change what the real pass does.
 */
export async function previewWaitlistPass(
  ctx: Pick<WaitlistContext, 'db'>,
  now: Date,
  local: (date: Date) => string = (date) => date.toISOString(),
): Promise<Required<WaitlistPassCounts> & { lines: string[] }> {
  const lapsing = await ctx.db('waitlist_entries')
    .where({ state: 'UNCONFIRMED' })
    .andWhere('created_at', '<=', new Date(now.getTime() - UNCONFIRMED_LAPSE_MS))
    .count<{ n: number }>({ n: '*' })
    .first();
  const lapsed = Number(lapsing?.n ?? 0);
  const lines = lapsed > 0 ? [`lapse ${lapsed} waiting-list join(s) left unconfirmed for a day`] : [];
  const counts = { offered: 0, expired: 0, lapsed };
  const events = await ctx.db('events')
    .whereIn('id', ctx.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).select('event_id'))
    .orderBy('slug')
    .select<EventRow[]>('*');
  for (const row of events) {
    const event = eventFromRow(row);
    const due = await ctx.db('waitlist_entries')
      .where({ event_id: event.id, state: 'OFFERED' })
      .andWhere('offer_expires_at', '<=', now)
      .whereNotExists(offerCheckoutOf('waitlist_entries', now))
      .orderBy('position')
      .select<Array<Pick<WaitlistEntryRow, 'id' | 'places' | 'tier' | 'offer_expires_at'>>>('id', 'places', 'tier', 'offer_expires_at');
    for (const entry of due) {
      lines.push(`expire the waiting-list offer of ${entryReference(entry.id)} on ${event.slug} (${entry.places} place(s), held until ${local(entry.offer_expires_at as Date)}) and email the family`);
    }
    counts.expired += due.length;
    if (!offersOpen(event, now)) continue;
    const seats = await publicSeatCount(ctx.db, event, now);
    const free = seats.free === null ? Number.POSITIVE_INFINITY : seats.free + due.reduce((sum, entry) => sum + entry.places, 0);
    if (free <= 0) continue;
    const tierFree = freeTierPlaces({ event, tierTaken: seats.tierTaken }, due);
    for (const step of planOffers(free, seats.queue, tierFree).steps) {
      lines.push(`offer ${step.offer.places} place(s) on ${event.slug} to ${entryReference(step.offer.id)}${step.passedOver.length > 0 ? `, passing over ${step.passedOver.map((entry) => entryReference(entry.id)).join(', ')}` : ''}`);
      counts.offered += 1;
    }
  }
  return { ...counts, lines };
}
