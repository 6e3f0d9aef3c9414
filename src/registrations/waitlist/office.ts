import type { AppContext } from '../../context.js';
import { AppError, NotFoundError } from '../../errors.js';
import { eventFromRow, type EventRecord, type EventRow } from '../event-record.js';
import { lockEventForSeats, tierPlacesFree } from '../registrations.js';
import { entryContact, entryReference, lockEntry, queuePosition, resolveEntryId, type WaitlistAction, type WaitlistEntryRow, type WaitlistState } from './entries.js';
import { takeOffList } from './join.js';
import { queueRemovedEmail } from './mail.js';
import { offerEntry, offersOpen } from './offers.js';
import { readListStanding, type ListStanding } from './stranded.js';

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
  /** The ticket type it waits for; null: any. */
  tier: string | null;
  state: WaitlistState;
  skips: number;
  joinedAt: string;
  /** When it came on the list: the office's entries at once, the form's when the mailbox confirmed; null while unconfirmed. */
  confirmedAt: string | null;
  offerExpiresAt: string | null;
  registrationId: string | null;
}

async function eventBySlug(ctx: OfficeContext, slug: string): Promise<EventRecord> {
  const row = await ctx.db('events').where({ slug }).whereNull('deleted_at').first<EventRow | undefined>();
  if (!row) throw new NotFoundError(`event "${slug}"`, 'run `eventops events list` to see the slugs');
  return eventFromRow(row);
}

/**
 * Every entry of the event's list in queue order (the order of confirming; an unconfirmed entry where it
 * joined); those on it numbered 1, 2, … Entries that lapsed unconfirmed are counted, and listed only
 * with `all`. With the list's standing: free places, what the next pass offers, what is stranded and why.
 */
export async function listWaitlist(
  ctx: OfficeContext,
  slug: string,
  options: { all?: boolean } = {},
): Promise<{ event: EventRecord; entries: WaitlistLine[]; lapsed: number; standing: ListStanding }> {
  const event = await eventBySlug(ctx, slug);
  const rows = await ctx.db('waitlist_entries').where({ event_id: event.id }).orderBy('position').select<WaitlistEntryRow[]>('*');
  let live = 0;
  const shown = options.all ? rows : rows.filter((row) => row.state !== 'LAPSED');
  const entries = shown.map((row) => {
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
      tier: row.tier ?? null,
      state: row.state,
      skips: row.skips,
      joinedAt: row.created_at.toISOString(),
      confirmedAt: row.confirmed_at?.toISOString() ?? null,
      offerExpiresAt: row.state === 'OFFERED' && row.offer_expires_at ? row.offer_expires_at.toISOString() : null,
      registrationId: row.registration_id,
    };
  });
  const lapsed = rows.filter((row) => row.state === 'LAPSED').length;
  return { event, entries, lapsed, standing: await readListStanding(ctx.db, event, ctx.clock.now()) };
}

export interface EntryHistoryLine {
  at: string;
  action: WaitlistAction;
  actor: string;
  note: string | null;
  changes: Record<string, unknown>;
}

/** One entry as the office sees it (`waitlist show`): its details, place in the queue, and every change to it. */
export async function showEntry(
  ctx: OfficeContext,
  given: string,
): Promise<{ event: { slug: string; title: string }; entry: WaitlistLine; history: EntryHistoryLine[] }> {
  const { id } = await resolveEntryId(ctx.db, given);
  const row = await ctx.db('waitlist_entries').where({ id }).first<WaitlistEntryRow>();
  const event = await ctx.db('events').where({ id: row.event_id }).first<{ slug: string; title: string }>('slug', 'title');
  const contact = entryContact(ctx.cipher, row);
  const onList = row.state === 'WAITING' || row.state === 'OFFERED';
  const history = await ctx.db('waitlist_history')
    .where({ entry_id: id })
    .orderBy('id')
    .select<Array<{ created_at: Date; action: WaitlistAction; actor: string; note: string | null; changes: Record<string, unknown> }>>('created_at', 'action', 'actor', 'note', 'changes');
  return {
    event,
    entry: {
      entry: entryReference(row.id),
      id: row.id,
      position: onList ? await queuePosition(ctx.db, row) : null,
      name: contact.name,
      email: contact.email,
      mobile: contact.mobile ?? null,
      places: row.places,
      tier: row.tier ?? null,
      state: row.state,
      skips: row.skips,
      joinedAt: row.created_at.toISOString(),
      confirmedAt: row.confirmed_at?.toISOString() ?? null,
      offerExpiresAt: row.state === 'OFFERED' && row.offer_expires_at ? row.offer_expires_at.toISOString() : null,
      registrationId: row.registration_id,
    },
    history: history.map((line) => ({ at: line.created_at.toISOString(), action: line.action, actor: line.actor, note: line.note, changes: line.changes })),
  };
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
    const tierFree = entry.tier ? tierPlacesFree(locked).get(entry.tier) : undefined;
    if (tierFree !== undefined && tierFree < entry.places) {
      throw new AppError(
        'not_enough_places',
        `entry ${entryReference(id)} waits for ${entry.places} "${entry.tier}" place${entry.places === 1 ? '' : 's'} but only ${tierFree} ${tierFree === 1 ? 'is' : 'are'} free (open offers hold places too)`,
        { exitCode: 1, suggestion: "raise that ticket type's capacity with `eventops events update`, or register them with `eventops registrations add --over-capacity`" },
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

export interface WaitlistTotals {
  slug: string;
  waiting: number;
  offers: number;
  placesOffered: number;
  /** Joined through the form, not yet confirmed by their mailbox: on no list yet. */
  unconfirmed: number;
  /** Free places no offer is about to take, and why (see listStanding). */
  stranded?: ListStanding['stranded'];
}

/**
 * Per event with anyone on its list or asking to join: entries waiting, open offers with the places they
 * hold, unconfirmed joins, and stranded places with the reason (for `eventops status`).
 */
export async function waitlistTotals(db: OfficeContext['db'], now: Date): Promise<WaitlistTotals[]> {
  const rows = await db('waitlist_entries as w')
    .join('events as e', 'e.id', 'w.event_id')
    .whereIn('w.state', ['WAITING', 'OFFERED', 'UNCONFIRMED'])
    .whereNull('e.deleted_at')
    .groupBy('e.id')
    .orderBy('e.slug')
    .select<Array<EventRow & { waiting: number; offers: number; places_offered: number; unconfirmed: number }>>(
      'e.*',
      db.raw(`count(*) FILTER (WHERE w.state = 'WAITING')::int AS waiting`),
      db.raw(`count(*) FILTER (WHERE w.state = 'OFFERED')::int AS offers`),
      db.raw(`count(*) FILTER (WHERE w.state = 'UNCONFIRMED')::int AS unconfirmed`),
      db.raw(`COALESCE(sum(w.places) FILTER (WHERE w.state = 'OFFERED'), 0)::int AS places_offered`),
    );
  const totals: WaitlistTotals[] = [];
  for (const row of rows) {
    const standing = row.waiting > 0 ? await readListStanding(db, eventFromRow(row), now) : undefined;
    totals.push({
      slug: row.slug,
      waiting: row.waiting,
      offers: row.offers,
      placesOffered: row.places_offered,
      unconfirmed: row.unconfirmed,
      ...(standing?.stranded ? { stranded: standing.stranded } : {}),
    });
  }
  return totals;
}
