import type { Knex } from 'knex';
import { eventFromRow, type EventRecord, type EventRow } from './event-record.js';
import type { FieldCipher } from '../crypto/field-cipher.js';
import type { PricedRegistration, AttendeeChoice } from './pricing.js';
import { answerColumns, type Question, type RegistrationAnswers } from './answers.js';
import { holdsPlacesSql } from './card-checkouts.js';
import { placesForList, planOffers, tierPlacesForList, type OfferPlan, type QueuedEntry } from './waitlist/plan.js';
import type { EventPricing } from './event-pricing.js';
import type { AddonPick } from './addons.js';
import { addonRowsOf, insertAddonRows, withoutAddons } from './addon-stock.js';
import { stockedAddons } from './addons.js';

export type RegistrationStatus = 'PENDING' | 'PAID' | 'CANCELLED';
export type PaymentMethod = 'free' | 'bank' | 'card' | 'cash' | 'other';

export interface RegistrationContact {
  name: string;
  email: string;
  mobile?: string;
}

export interface LockedEvent {
  event: EventRecord;
  /** Attendees of PENDING and PAID registrations, and the places open waiting-list offers and card checkouts hold. */
  seatsTaken: number;
  /** null = unlimited. */
  seatsLeft: number | null;
  /** Places held by open waiting-list offers (already in seatsTaken). */
  seatsOffered: number;
  /** Places held by open, unexpired card checkouts (already in seatsTaken). */
  seatsInCheckout: number;
  /** Confirmed waiting-list entries still waiting (not yet offered). */
  waiting: number;
  /** Those entries in queue order, as the order rule needs them (unconfirmed entries are not on the list). */
  queue: QueuedEntry[];
  /**
   * Places taken of each ticket type with a capacity of its own, counted as the event's are: attendees of PENDING
   * and PAID registrations, the places open card checkouts hold of it, and open offers to entries waiting for it.
   */
  tierTaken: TierCounts;
  /** Of tierTaken, the places open, unexpired card checkouts hold. */
  tierInCheckout: TierCounts;
  /** The columns a caller counted along with the seats (CountedAlong), by name. */
  along?: Record<string, unknown>;
}

/** Places per ticket type id. */
export type TierCounts = Record<string, number>;

/**
 * Locks the event row (FOR UPDATE) for the rest of the transaction and counts
 * its taken seats, so two registrations can never both take the last seat.
 * Every path that takes places, offers them or claims an offer holds this lock.
 * `now` is the app clock's: a card checkout's hold counts only until its expiry.
 */
export async function lockEventForSeats(trx: Knex.Transaction, eventId: string, now: Date, along?: CountedAlong): Promise<LockedEvent | undefined> {
  const row = await trx('events').where({ id: eventId }).forUpdate().first();
  return row ? withSeatsTaken(trx, eventFromRow(row), now, along) : undefined;
}

/**
 * More columns for the seat count's statement, counted after the lock like the seats (a caller's holdings, say),
 * so that each costs no statement of its own while the lock is held. Named bindings (`:name`); `:id` is the
 * event's id and `:now` the clock's time. Read back from LockedEvent.along.
 */
export interface CountedAlong {
  columns: string[];
  bindings: Record<string, unknown>;
}

interface SeatCounts {
  registered: number;
  offered: number;
  /** Places card checkouts for new registrations hold while the payer is at the provider (open and unexpired). */
  inCheckout: number;
  waiting: number;
  queue: QueuedEntry[];
  tierTaken: TierCounts;
  tierInCheckout: TierCounts;
}

/** The ticket types of an event with a capacity of their own. */
export function cappedTiers(pricing: Pick<EventPricing, 'tiers'> | undefined): Array<{ id: string; capacity: number }> {
  return (pricing?.tiers ?? []).flatMap((tier) => (tier.capacity === undefined ? [] : [{ id: tier.id, capacity: tier.capacity }]));
}

/**
 * Places taken per ticket type (see LockedEvent.tierTaken), and of them those card checkouts hold: one statement.
 * Only for events with a type of limited places: every other event skips reading the attendees.
 */
async function countTierPlaces(db: Knex | Knex.Transaction, eventId: string, now: Date): Promise<Pick<SeatCounts, 'tierTaken' | 'tierInCheckout'>> {
  const result = await db.raw<{ rows: Array<{ source: string; tier: string; places: number }> }>(
    `SELECT 'registered' AS source, a->>'tier' AS tier, count(*)::int AS places
       FROM registrations r CROSS JOIN jsonb_array_elements(r.attendees) a
      WHERE r.event_id = :id AND r.status IN ('PENDING','PAID') GROUP BY 2
     UNION ALL
     SELECT 'checkout', t.key, sum(t.value::int)::int
       FROM checkout_sessions c CROSS JOIN jsonb_each_text(c.tier_places) t
      WHERE c.event_id = :id AND ${holdsPlacesSql('c', ':now')} GROUP BY 2
     UNION ALL
     SELECT 'offered', w.tier, sum(w.places)::int
       FROM waitlist_entries w WHERE w.event_id = :id AND w.state = 'OFFERED' AND w.tier IS NOT NULL GROUP BY 2`,
    { id: eventId, now },
  );
  const tierTaken: TierCounts = {};
  const tierInCheckout: TierCounts = {};
  for (const row of result.rows) {
    tierTaken[row.tier] = (tierTaken[row.tier] ?? 0) + Number(row.places);
    if (row.source === 'checkout') tierInCheckout[row.tier] = (tierInCheckout[row.tier] ?? 0) + Number(row.places);
  }
  return { tierTaken, tierInCheckout };
}

/**
 * Places registrations hold, places open waiting-list offers and card checkouts hold (holdsPlacesSql: open
 * and unexpired at `now`), and the confirmed entries waiting, in order: one statement.
 */
async function countSeats(db: Knex | Knex.Transaction, eventId: string, now: Date, tiered = false, along?: CountedAlong): Promise<SeatCounts & { along: Record<string, unknown> }> {
  const columns = [seatCountColumns(':id', ':now'), ...(along?.columns ?? [])].join(', ');
  const result = await db.raw<{ rows: Array<SeatCountRow & Record<string, unknown>> }>(`SELECT ${columns}`, { ...along?.bindings, id: eventId, now });
  return { ...seatCountsOf(result.rows[0], tiered ? await countTierPlaces(db, eventId, now) : undefined), along: result.rows[0] ?? {} };
}

/** The seat counts as seatCountColumns selects them. */
export type SeatCountRow = Record<'seats_registered' | 'seats_offered' | 'seats_in_checkout', string | number> & { seats_queue: QueuedEntry[] };

/**
 * The select-list of countSeats, for the event whose id is the SQL expression `eventId` and the app clock's time
 * `now` (a placeholder): so a statement that reads the event can count its seats too (the public page's one read).
 */
export function seatCountColumns(eventId: string, now: string): string {
  return `(SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE event_id = ${eventId} AND status IN ('PENDING','PAID')) AS seats_registered,
            (SELECT COALESCE(sum(places), 0) FROM waitlist_entries WHERE event_id = ${eventId} AND state = 'OFFERED') AS seats_offered,
            (SELECT COALESCE(sum(c.places), 0) FROM checkout_sessions c
              WHERE c.event_id = ${eventId} AND c.places > 0 AND ${holdsPlacesSql('c', now)}) AS seats_in_checkout,
            (SELECT COALESCE(json_agg(json_build_object('id', id, 'places', places, 'skips', skips, 'tier', tier) ORDER BY position), '[]'::json)
               FROM waitlist_entries WHERE event_id = ${eventId} AND state = 'WAITING') AS seats_queue`;
}

function seatCountsOf(row: SeatCountRow | undefined, tiers: Pick<SeatCounts, 'tierTaken' | 'tierInCheckout'> | undefined): SeatCounts {
  const queue = row?.seats_queue ?? [];
  return {
    registered: Number(row?.seats_registered ?? 0),
    offered: Number(row?.seats_offered ?? 0),
    inCheckout: Number(row?.seats_in_checkout ?? 0),
    waiting: queue.length,
    queue,
    ...(tiers ?? { tierTaken: {}, tierInCheckout: {} }),
  };
}

/** The seats count is its own statement, after the lock: one statement's snapshot would predate the wait for it. */
async function withSeatsTaken(trx: Knex.Transaction, event: EventRecord, now: Date, along?: CountedAlong): Promise<LockedEvent> {
  const counts = await countSeats(trx, event.id, now, cappedTiers(event.pricing).length > 0, along);
  const seatsTaken = counts.registered + counts.offered + counts.inCheckout;
  return {
    event,
    seatsTaken,
    seatsLeft: event.capacity === null ? null : Math.max(0, event.capacity - seatsTaken),
    seatsOffered: counts.offered,
    seatsInCheckout: counts.inCheckout,
    waiting: counts.waiting,
    queue: counts.queue,
    tierTaken: counts.tierTaken,
    tierInCheckout: counts.tierInCheckout,
    along: counts.along,
  };
}

/** What the seat rules read of a locked (or counted) event. */
type Standing = {
  event: Partial<Pick<EventRecord, 'waitingList' | 'pricing'>>;
  seatsLeft: number | null;
  queue: readonly QueuedEntry[];
  tierTaken?: TierCounts;
};

/** The free places of each ticket type with a capacity of its own (never below 0), leaving out `except` (checkout holds, say). */
export function tierPlacesFree(locked: Pick<Standing, 'event' | 'tierTaken'>, except: TierCounts = {}): Map<string, number> {
  return new Map(
    cappedTiers(locked.event.pricing).map((tier) => [tier.id, Math.max(0, tier.capacity - ((locked.tierTaken?.[tier.id] ?? 0) - (except[tier.id] ?? 0)))]),
  );
}

/** The order rule's plan over the free places the public count starts from (event's and each capped type's). */
function listPlan(locked: Standing): OfferPlan | undefined {
  if (locked.seatsLeft === null || !locked.event.waitingList?.enabled || locked.queue.length === 0) return undefined;
  return planOffers(locked.seatsLeft, locked.queue, tierPlacesFree(locked));
}

/**
 * The places of ticket type `tier` the public may take: the type's free places, less those the waiting list takes
 * under the order rule (offered to entries waiting for that type); null when the type has no capacity of its own.
 */
export function publicTierPlacesLeft(locked: Standing, tier: string): number | null {
  const free = tierPlacesFree(locked).get(tier);
  if (free === undefined) return null;
  const plan = listPlan(locked);
  return Math.max(0, free - (plan ? tierPlacesForList(plan, tier) : 0));
}

/**
 * The attendees of each capped ticket type a registration names, against the room each has: the first type
 * short of places, with its places left, or undefined when every one fits. `left(tier)` gives a type's room
 * (null: no capacity of its own).
 */
export function tierShortOfPlaces(attendees: readonly AttendeeChoice[], left: (tier: string) => number | null): { tier: string; left: number; wanted: number } | undefined {
  const wanted = new Map<string, number>();
  for (const attendee of attendees) wanted.set(attendee.tier, (wanted.get(attendee.tier) ?? 0) + 1);
  for (const [tier, count] of wanted) {
    const room = left(tier);
    if (room !== null && room < count) return { tier, left: Math.max(0, room), wanted: count };
  }
  return undefined;
}

/** Attendees per ticket type, for the types with a capacity of their own: what a checkout holds of each (checkout_sessions.tier_places). */
export function tierPlacesOf(pricing: Pick<EventPricing, 'tiers'>, attendees: readonly AttendeeChoice[]): TierCounts {
  const capped = new Set(cappedTiers(pricing).map((tier) => tier.id));
  const places: TierCounts = {};
  for (const attendee of attendees) if (capped.has(attendee.tier)) places[attendee.tier] = (places[attendee.tier] ?? 0) + 1;
  return places;
}

/**
 * The places the public may take. Freed places go to the waiting list in order, not to whoever loads the
 * page next: on an enabled list, the free places some confirmed entry may take under the order rule
 * (planOffers) are the list's. The rest (only larger families wait, say) no one on the list can take,
 * so they stay on public sale rather than stranded. null = unlimited.
 */
export function publicSeatsLeft(locked: Standing): number | null {
  if (locked.seatsLeft === null) return null;
  const plan = listPlan(locked);
  if (!plan) return locked.seatsLeft;
  return Math.max(0, locked.seatsLeft - placesForList(plan));
}

/**
 * A paid checkout's hold on its event: the event as locked and the seats left (null = unlimited): `seatsLeft`
 * counts the places other checkouts hold as taken; `seatsLeftForOwnHold` does not, for a checkout completing
 * into its own live hold (see lockEventForCompletion).
 */
export type CompletionLock = Pick<LockedEvent, 'event' | 'seatsLeft'> & {
  seatsLeftForOwnHold: number | null;
  /** The free places of each capped ticket type, counted as seatsLeft is (other checkouts' holds taken). */
  tierFree: Map<string, number>;
  /** As tierFree, leaving the checkouts' holds out, as seatsLeftForOwnHold does. */
  tierFreeForOwnHold: Map<string, number>;
  /** A refund or dispute of this payment that arrived before it (pending_reversals), read under the locks. */
  pendingReversal: boolean;
};

/** The event's capacity moved from unlimited to limited between our read and our lock: run the transaction again. */
export class CapacityChangedError extends Error {
  constructor(eventId: string) {
    super(`the capacity of event ${eventId} changed while a payment was being completed`);
    this.name = 'CapacityChangedError';
  }
}

/**
 * The lock a paid checkout takes on its event. With a capacity it is
 * lockEventForSeats (exclusive, seats counted). Without one there are no seats
 * to count, so a shared lock is enough: completions for the same event then run
 * side by side, while an edit or deletion of the event still waits for them
 * (and they for it). `seenLimited` is whether the event had a capacity (or a ticket type with a
 * capacity of its own) when read before locking; if it was unlimited but is limited under the lock, the caller must start again
 * (CapacityChangedError), because other shared holders may be taking seats.
 * The same statement reads whether a reversal of `paymentIntentId` is waiting:
 * the caller holds the payment's advisory lock, so that answer is stable.
 * A payment completes into the places its own checkout holds, and an open checkout's hold is never
 * taken by a payment that holds none: `seatsLeft` counts the places other checkouts hold (open and
 * unexpired at `now`; the caller has already claimed this one, so its own places show as free) as
 * taken, and is what a checkout without a live hold of its own (one from a waiting-list offer, one paid
 * after its expiry) may take. `seatsLeftForOwnHold` leaves the other holds out: in the usual course a
 * live holder's places fit either way, as holds are granted only while places are free; when they no
 * longer all fit (the office lowered the capacity below them) the holders' payments confirmed first
 * get the places, rather than every holder's payment failing while the others still hold.
 */
export async function lockEventForCompletion(
  trx: Knex.Transaction,
  eventId: string,
  seenLimited: boolean,
  paymentIntentId: string | null,
  now: Date,
): Promise<CompletionLock | undefined> {
  const pendingReversal = paymentIntentId
    ? trx.raw('EXISTS (SELECT 1 FROM pending_reversals WHERE payment_intent_id = ?) AS pending_reversal', [paymentIntentId])
    : trx.raw('false AS pending_reversal');
  const query = trx('events').where({ id: eventId }).first<(EventRow & { pending_reversal: boolean }) | undefined>('events.*', pendingReversal);
  if (seenLimited) {
    const row = await query.forUpdate();
    if (!row) return undefined;
    const locked = await withSeatsTaken(trx, eventFromRow(row), now);
    const { event, seatsLeft, seatsTaken, seatsInCheckout } = locked;
    const seatsLeftForOwnHold = event.capacity === null ? null : Math.max(0, event.capacity - (seatsTaken - seatsInCheckout));
    const tierFree = tierPlacesFree(locked);
    const tierFreeForOwnHold = tierPlacesFree(locked, locked.tierInCheckout);
    return { event, seatsLeft, seatsLeftForOwnHold, tierFree, tierFreeForOwnHold, pendingReversal: row.pending_reversal };
  }
  const row = await query.forShare();
  if (!row) return undefined;
  const event = eventFromRow(row);
  // A ticket type's own places are counted under the event's exclusive lock as the event's are.
  if (event.capacity !== null || cappedTiers(event.pricing).length > 0 || stockedAddons(event.pricing).length > 0) throw new CapacityChangedError(eventId);
  return { event, seatsLeft: null, seatsLeftForOwnHold: null, tierFree: new Map(), tierFreeForOwnHold: new Map(), pendingReversal: row.pending_reversal };
}

/** Seats left without locking, for showing on the public page: as publicSeatsLeft counts them, at the app clock's `now`. */
export async function seatsLeft(db: Knex, event: SeatEvent, now: Date): Promise<number | null> {
  return (await publicSeatCount(db, event, now)).seatsLeft;
}

/** The public count without locking, how many wait on the list (and in what order), and the places free to anyone at all, at the app clock's `now`. */
export async function publicSeatCount(db: Knex, event: SeatEvent, now: Date): Promise<PublicSeatCount> {
  return publicSeatCountOf(event, await countSeats(db, event.id, now, cappedTiers(event.pricing).length > 0));
}

/**
 * publicSeatCount from counts a statement already read (seatCountColumns), with the places per ticket type read for
 * an event that has types with places of their own.
 */
export async function publicSeatCountFromRow(db: Knex, event: SeatEvent, row: SeatCountRow, now: Date): Promise<PublicSeatCount> {
  const tiers = cappedTiers(event.pricing).length > 0 ? await countTierPlaces(db, event.id, now) : undefined;
  return publicSeatCountOf(event, seatCountsOf(row, tiers));
}

/** publicSeatCount from the counts read under the event's lock: what a refusal's page shows, without reading them again. */
export function publicSeatCountOfLocked(locked: LockedEvent): PublicSeatCount {
  return publicSeatCountOf(locked.event, {
    registered: locked.seatsTaken - locked.seatsOffered - locked.seatsInCheckout,
    offered: locked.seatsOffered,
    inCheckout: locked.seatsInCheckout,
    waiting: locked.waiting,
    queue: locked.queue,
    tierTaken: locked.tierTaken,
    tierInCheckout: locked.tierInCheckout,
  });
}

export interface PublicSeatCount {
  seatsLeft: number | null;
  waiting: number;
  free: number | null;
  queue: QueuedEntry[];
  /** Places taken of each ticket type with places of its own (as LockedEvent.tierTaken). */
  tierTaken: TierCounts;
  /** The places of such a type the public may take (publicTierPlacesLeft), by type id. */
  tierLeft: Map<string, number>;
}

function publicSeatCountOf(event: SeatEvent, counts: SeatCounts): PublicSeatCount {
  const tierOf = (seatsLeftNow: number | null) => {
    const standing = { event, seatsLeft: seatsLeftNow, queue: counts.queue, tierTaken: counts.tierTaken };
    return new Map(cappedTiers(event.pricing).map((tier) => [tier.id, publicTierPlacesLeft(standing, tier.id) ?? 0]));
  };
  if (event.capacity === null) {
    return { seatsLeft: null, waiting: counts.waiting, free: null, queue: counts.queue, tierTaken: counts.tierTaken, tierLeft: tierOf(null) };
  }
  // Below 0 when the office registered over the capacity: the places others must free before any is free.
  const free = event.capacity - counts.registered - counts.offered - counts.inCheckout;
  const standing = { event, seatsLeft: Math.max(0, free), queue: counts.queue, tierTaken: counts.tierTaken };
  return {
    seatsLeft: publicSeatsLeft(standing),
    waiting: counts.waiting,
    free,
    queue: counts.queue,
    tierTaken: counts.tierTaken,
    tierLeft: tierOf(Math.max(0, free)),
  };
}

/** An event as the seat counts need it (a test's row may leave out its waiting list: off; its pricing: no capped types). */
type SeatEvent = Pick<EventRecord, 'id' | 'capacity'> & Partial<Pick<EventRecord, 'waitingList' | 'pricing'>>;

export interface NewRegistration {
  /** Chosen by the caller when it must know the id before the insert; else the database's. */
  id?: string;
  eventId: string;
  status: RegistrationStatus;
  method: PaymentMethod;
  contact: RegistrationContact;
  attendees: AttendeeChoice[];
  family: boolean;
  priced: PricedRegistration;
  /** The church-local day (yyyy-MM-dd) whose prices it pays: fixed when it is made, never priced again. */
  pricedOn?: string;
  /** The code it used (discount_codes.id): one use of it while the registration is PENDING or PAID. */
  codeId?: string;
  /** The family asked to talk about help with the cost: open until the office decides (help-requests.ts). */
  helpRequested?: boolean;
  /** Its per-registration add-ons (each attendee's are on the attendee): stored as registration_addons rows. */
  addons?: AddonPick[];
  paymentIntentId?: string;
  /** The public form's client (clientKey), counted by the unpaid-places cap; none for the office and card payments. */
  clientKey?: string;
  /** The public form's contact mailbox (mailboxKey), counted by the unpaid-places cap per mailbox; none for the office. */
  mailboxKey?: string;
  /** Validated answers to the event's questions, stored plain or encrypted by each question's `sensitive`. */
  answers?: { questions: readonly Question[]; values: RegistrationAnswers };
  now: Date;
}

/**
 * A contact email's stored columns: the address encrypted and its lookup hash (key v1), which
 * `registrations list --search` compares. A new registration and the office's correction of one both write it so.
 */
export function contactEmailColumns(cipher: FieldCipher, email: string): { contact_email_enc: string; contact_email_hash: string } {
  return { contact_email_enc: cipher.encrypt(email), contact_email_hash: cipher.lookupHash('email', email) };
}

/** A contact mobile's stored column: encrypted, or null for none. */
export function contactMobileColumn(cipher: FieldCipher, mobile: string | undefined): { contact_mobile_enc: string | null } {
  return { contact_mobile_enc: mobile ? cipher.encrypt(mobile) : null };
}

/** Inserts a registration (contact encrypted, lookup hash from key v1) inside the caller's transaction. */
export async function insertRegistration(trx: Knex.Transaction, cipher: FieldCipher, input: NewRegistration): Promise<{ id: string }> {
  const [row] = await trx('registrations').insert(registrationRow(cipher, input)).returning<Array<{ id: string }>>('id');
  const { id } = row as { id: string };
  await insertAddonRows(trx, addonRowsOf(id, input.attendees, input.addons, input.priced, input.now));
  return { id };
}

/** The registrations row for a new registration, for an insert of the caller's (e.g. one statement with other writes). */
export function registrationRow(cipher: FieldCipher, input: NewRegistration): Record<string, unknown> {
  return {
    ...(input.id ? { id: input.id } : {}),
    event_id: input.eventId,
    status: input.status,
    contact_name: input.contact.name,
    ...contactEmailColumns(cipher, input.contact.email),
    ...contactMobileColumn(cipher, input.contact.mobile),
    // Add-ons are rows of their own (registration_addons), written beside it.
    attendees: JSON.stringify(withoutAddons(input.attendees)),
    attendee_count: input.attendees.length,
    family: input.family,
    payment_method: input.method,
    line_items: JSON.stringify(input.priced.lines),
    total_minor: input.priced.total,
    surcharge_minor: input.priced.surcharge,
    priced_on: input.pricedOn ?? null,
    code_id: input.codeId ?? null,
    code_discount_minor: input.priced.codeDiscount ?? 0,
    ...(input.helpRequested ? { help_requested_at: input.now } : {}),
    payment_intent_id: input.paymentIntentId ?? null,
    client_key: input.clientKey ?? null,
    mailbox_key: input.mailboxKey ?? null,
    ...(input.answers ? answerColumns(cipher, input.answers.questions, input.answers.values) : {}),
    paid_at: input.status === 'PAID' ? input.now : null,
    created_at: input.now,
    updated_at: input.now,
  };
}
