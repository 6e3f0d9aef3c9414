import type { Knex } from 'knex';
import type { AppContext } from '../../context.js';
import type { EventRecord } from '../event-record.js';
import { lockEventForSeats, type LockedEvent } from '../registrations.js';
import { entryContact, recordWaitlistHistory, type WaitlistEntryRow } from './entries.js';
import { queueOfferEmail } from './mail.js';
import { offerCheckoutOf } from '../card-checkouts.js';

/**
 * Offers are made in order of joining, each only when enough places are free for the whole entry.
 * An entry that does not fit is passed over, and every offer made to an entry behind it counts one
 * skip; an entry skipped this many times blocks everyone behind it until it is served (or leaves),
 * so a large family is never passed over for ever by smaller ones.
 */
export const WAITLIST_SKIP_LIMIT = 3;

export type WaitlistContext = Pick<AppContext, 'db' | 'config' | 'cipher' | 'clock'>;

export interface WaitlistPassCounts {
  offered: number;
  expired: number;
}

/** Whether new offers may be made for the event now: its list is on, it is public, and registration is still open. */
export function offersOpen(event: EventRecord, now: Date): boolean {
  return event.waitingList.enabled && event.published && event.deletedAt === null && event.startsAt.getTime() > now.getTime();
}

/**
 * Under the event's lock (lockEventForSeats, taken by the caller): expires the offers past their time,
 * then offers the free places in order. Free places are counted, not reported: whatever freed them
 * (a cancellation, a released hold, a refund, a raised capacity) shows as capacity minus what
 * registrations and open offers hold.
 */
export async function settleWaitlist(
  trx: Knex.Transaction,
  ctx: WaitlistContext,
  locked: LockedEvent,
  options: { actor: string; now: Date },
): Promise<WaitlistPassCounts> {
  const { event } = locked;
  const { now, actor } = options;
  const expiredPlaces = await expireDueOffers(trx, event.id, now, actor);
  const counts = { offered: 0, expired: expiredPlaces.length };
  if (!offersOpen(event, now)) return counts;
  const taken = locked.seatsTaken - expiredPlaces.reduce((sum, places) => sum + places, 0);
  let free = event.capacity === null ? Number.POSITIVE_INFINITY : event.capacity - taken;
  if (free <= 0) return counts;

  const waiting = await trx('waitlist_entries')
    .where({ event_id: event.id, state: 'WAITING' })
    .orderBy('position')
    .select<WaitlistEntryRow[]>('*');
  const passed: WaitlistEntryRow[] = [];
  for (const entry of waiting) {
    if (free <= 0) break;
    if (entry.places > free) {
      if (entry.skips >= WAITLIST_SKIP_LIMIT) break;
      passed.push(entry);
      continue;
    }
    await offerEntry(trx, ctx, event, entry, { actor, now });
    free -= entry.places;
    counts.offered += 1;
    for (const skipped of passed) {
      skipped.skips += 1;
      await trx('waitlist_entries').where({ id: skipped.id }).update({ skips: skipped.skips, updated_at: now });
      await recordWaitlistHistory(trx, { entryId: skipped.id, action: 'skipped', changes: { skips: skipped.skips, servedInstead: entry.id }, actor, now });
    }
    if (passed.some((skipped) => skipped.skips >= WAITLIST_SKIP_LIMIT)) break;
  }
  return counts;
}

/**
 * OFFERED past its expiry → EXPIRED: the places it held are free again. Returns the places of each.
 * An offer ends at the time its email stated; only a card checkout opened from it before then, while
 * that checkout is still open and unexpired, keeps its places held a little longer (offerCheckoutOf),
 * so its payment completes into them. Opening a checkout never moves the offer's time.
 */
async function expireDueOffers(trx: Knex.Transaction, eventId: string, now: Date, actor: string): Promise<number[]> {
  const expired = await trx('waitlist_entries')
    .where({ event_id: eventId, state: 'OFFERED' })
    .andWhere('offer_expires_at', '<=', now)
    .whereNotExists(offerCheckoutOf('waitlist_entries', now))
    .update({ state: 'EXPIRED', updated_at: now })
    .returning<Array<{ id: string; places: number; offer_expires_at: Date }>>(['id', 'places', 'offer_expires_at']);
  for (const entry of expired) {
    await recordWaitlistHistory(trx, {
      entryId: entry.id,
      action: 'expired',
      changes: { state: { from: 'OFFERED', to: 'EXPIRED' }, placesFreed: entry.places, expiredAt: entry.offer_expires_at.toISOString() },
      actor,
      now,
    });
  }
  return expired.map((entry) => entry.places);
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

/**
 * One pass over every event with someone on its list: each event in its own transaction under its
 * lock, so a pass on two servers at once, or beside a registration, never offers a place twice.
 */
export async function runWaitlistPass(ctx: WaitlistContext, options: { actor: string }): Promise<WaitlistPassCounts> {
  const events = await ctx.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).distinct<Array<{ event_id: string }>>('event_id');
  const total = { offered: 0, expired: 0 };
  for (const { event_id: eventId } of events) {
    const counts = await ctx.db.transaction(async (trx) => {
      const now = ctx.clock.now();
      const locked = await lockEventForSeats(trx, eventId, now);
      return locked ? settleWaitlist(trx, ctx, locked, { actor: options.actor, now }) : { offered: 0, expired: 0 };
    });
    total.offered += counts.offered;
    total.expired += counts.expired;
  }
  return total;
}
