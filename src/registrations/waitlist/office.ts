import type { AppContext } from '../../context.js';
import { AppError, NotFoundError } from '../../errors.js';
import { eventFromRow, type EventRecord, type EventRow } from '../event-record.js';
import { lockEventForSeats } from '../registrations.js';
import { entryContact, entryReference, lockEntry, resolveEntryId, type WaitlistEntryRow, type WaitlistState } from './entries.js';
import { takeOffList } from './join.js';
import { queueRemovedEmail } from './mail.js';
import { offerEntry, offersOpen } from './offers.js';

type OfficeContext = Pick<AppContext, 'db' | 'config' | 'cipher' | 'clock'>;

export interface WaitlistLine {
  entry: string;
  id: string;
  /** Place in the queue among the entries still waiting or holding an offer; null once off the list. */
  position: number | null;
  name: string;
  email: string;
  mobile: string | null;
  places: number;
  state: WaitlistState;
  skips: number;
  joinedAt: string;
  offerExpiresAt: string | null;
  registrationId: string | null;
}

async function eventBySlug(ctx: OfficeContext, slug: string): Promise<EventRecord> {
  const row = await ctx.db('events').where({ slug }).whereNull('deleted_at').first<EventRow | undefined>();
  if (!row) throw new NotFoundError(`event "${slug}"`, 'run `eventops events list` to see the slugs');
  return eventFromRow(row);
}

/** Every entry of the event's list in order of joining; those still on it numbered 1, 2, … */
export async function listWaitlist(ctx: OfficeContext, slug: string): Promise<{ event: EventRecord; entries: WaitlistLine[] }> {
  const event = await eventBySlug(ctx, slug);
  const rows = await ctx.db('waitlist_entries').where({ event_id: event.id }).orderBy('position').select<WaitlistEntryRow[]>('*');
  let live = 0;
  const entries = rows.map((row) => {
    const contact = entryContact(ctx.cipher, row);
    const onList = row.state === 'WAITING' || row.state === 'OFFERED';
    return {
      entry: entryReference(row.id),
      id: row.id,
      position: onList ? ++live : null,
      name: contact.name,
      email: contact.email,
      mobile: contact.mobile ?? null,
      places: row.places,
      state: row.state,
      skips: row.skips,
      joinedAt: row.created_at.toISOString(),
      offerExpiresAt: row.state === 'OFFERED' && row.offer_expires_at ? row.offer_expires_at.toISOString() : null,
      registrationId: row.registration_id,
    };
  });
  return { event, entries };
}

/**
 * Offers an entry its places now, out of order, with the office's note. Under the event's lock,
 * like every offer: the places must be free (not held by registrations or other offers), and the
 * event must still take registrations.
 */
export async function offerNow(ctx: OfficeContext, given: string, input: { note?: string; actor: string }): Promise<{ entry: string; expiresAt: Date; places: number }> {
  const { id, event_id: eventId } = await resolveEntryId(ctx.db, given);
  const now = ctx.clock.now();
  return ctx.db.transaction(async (trx) => {
    const locked = await lockEventForSeats(trx, eventId, now);
    const entry = await lockEntry(trx, id);
    if (!locked || !entry) throw new NotFoundError(`waiting-list entry "${given}"`);
    if (entry.state !== 'WAITING') {
      throw new AppError('not_waiting', `entry ${entryReference(id)} is ${entry.state}, not WAITING: only a waiting entry can be offered places`, { exitCode: 1 });
    }
    if (!offersOpen(locked.event, now)) {
      throw new AppError('offers_closed', `no offers can be made for "${locked.event.slug}": its waiting list is off, it is not published, or it has started`, {
        exitCode: 1,
      });
    }
    if (locked.seatsLeft !== null && locked.seatsLeft < entry.places) {
      throw new AppError(
        'not_enough_places',
        `entry ${entryReference(id)} wants ${entry.places} place${entry.places === 1 ? '' : 's'} but only ${locked.seatsLeft} ${locked.seatsLeft === 1 ? 'is' : 'are'} free (open offers hold places too)`,
        { exitCode: 1, suggestion: 'raise the capacity with `eventops events update`, or register them with `eventops registrations add --over-capacity`' },
      );
    }
    const offered = await offerEntry(trx, ctx, locked.event, entry, { actor: input.actor, now, note: input.note, outOfOrder: true });
    return { entry: entryReference(id), expiresAt: offered.offer_expires_at as Date, places: offered.places };
  });
}

/** Takes an entry off the list (an open offer is withdrawn); with `notify`, the family is told. */
export async function removeEntry(
  ctx: OfficeContext,
  given: string,
  input: { note?: string; notify?: boolean; actor: string },
): Promise<{ entry: string; previousState: WaitlistState; notified: boolean }> {
  const { id } = await resolveEntryId(ctx.db, given);
  const now = ctx.clock.now();
  const result = await takeOffList(ctx, id, {
    state: 'REMOVED',
    actor: input.actor,
    note: input.note,
    within: async (trx, entry, event) => {
      if (input.notify) await queueRemovedEmail(trx, ctx, { entryId: entry.id, contact: entryContact(ctx.cipher, entry), event }, now);
    },
  });
  if (result.alreadyGone) {
    throw new AppError('not_on_list', `entry ${entryReference(id)} is already ${result.entry.state}; nothing changed`, { exitCode: 1 });
  }
  return { entry: entryReference(id), previousState: result.entry.state, notified: Boolean(input.notify) };
}

/** Per event: entries waiting, and open offers with the places they hold (for `eventops status`). */
export async function waitlistTotals(db: OfficeContext['db']): Promise<Array<{ slug: string; waiting: number; offers: number; placesOffered: number }>> {
  const rows = await db('waitlist_entries as w')
    .join('events as e', 'e.id', 'w.event_id')
    .whereIn('w.state', ['WAITING', 'OFFERED'])
    .groupBy('e.slug')
    .orderBy('e.slug')
    .select<Array<{ slug: string; waiting: number; offers: number; places_offered: number }>>(
      'e.slug',
      db.raw(`count(*) FILTER (WHERE w.state = 'WAITING')::int AS waiting`),
      db.raw(`count(*) FILTER (WHERE w.state = 'OFFERED')::int AS offers`),
      db.raw(`COALESCE(sum(w.places) FILTER (WHERE w.state = 'OFFERED'), 0)::int AS places_offered`),
    );
  return rows.map((row) => ({ slug: row.slug, waiting: row.waiting, offers: row.offers, placesOffered: row.places_offered }));
}
