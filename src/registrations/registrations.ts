import type { Knex } from 'knex';
import { eventFromRow, type EventRecord, type EventRow } from './event-record.js';
import type { FieldCipher } from '../crypto/field-cipher.js';
import type { PricedRegistration, AttendeeChoice } from './pricing.js';
import { answerColumns, type Question, type RegistrationAnswers } from './answers.js';
import { holdsPlacesSql } from './card-checkouts.js';
import { placesForList, planOffers, type QueuedEntry } from './waitlist/plan.js';

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
}

/**
 * Locks the event row (FOR UPDATE) for the rest of the transaction and counts
 * its taken seats, so two registrations can never both take the last seat.
 * Every path that takes places, offers them or claims an offer holds this lock.
 * `now` is the app clock's: a card checkout's hold counts only until its expiry.
 */
export async function lockEventForSeats(trx: Knex.Transaction, eventId: string, now: Date): Promise<LockedEvent | undefined> {
  const row = await trx('events').where({ id: eventId }).forUpdate().first();
  return row ? withSeatsTaken(trx, eventFromRow(row), now) : undefined;
}

interface SeatCounts {
  registered: number;
  offered: number;
  /** Places card checkouts for new registrations hold while the payer is at the provider (open and unexpired). */
  inCheckout: number;
  waiting: number;
  queue: QueuedEntry[];
}

/**
 * Places registrations hold, places open waiting-list offers and card checkouts hold (holdsPlacesSql: open
 * and unexpired at `now`), and the confirmed entries waiting, in order: one statement.
 */
async function countSeats(db: Knex | Knex.Transaction, eventId: string, now: Date): Promise<SeatCounts> {
  const result = await db.raw<{ rows: Array<Record<Exclude<keyof SeatCounts, 'waiting' | 'queue'>, string | number> & { queue: QueuedEntry[] }> }>(
    `SELECT (SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE event_id = :id AND status IN ('PENDING','PAID')) AS registered,
            (SELECT COALESCE(sum(places), 0) FROM waitlist_entries WHERE event_id = :id AND state = 'OFFERED') AS offered,
            (SELECT COALESCE(sum(c.places), 0) FROM checkout_sessions c
              WHERE c.event_id = :id AND c.places > 0 AND ${holdsPlacesSql('c', ':now')}) AS "inCheckout",
            (SELECT COALESCE(json_agg(json_build_object('id', id, 'places', places, 'skips', skips) ORDER BY position), '[]'::json)
               FROM waitlist_entries WHERE event_id = :id AND state = 'WAITING') AS queue`,
    { id: eventId, now },
  );
  const row = result.rows[0];
  const queue = row?.queue ?? [];
  return {
    registered: Number(row?.registered ?? 0),
    offered: Number(row?.offered ?? 0),
    inCheckout: Number(row?.inCheckout ?? 0),
    waiting: queue.length,
    queue,
  };
}

/** The seats count is its own statement, after the lock: one statement's snapshot would predate the wait for it. */
async function withSeatsTaken(trx: Knex.Transaction, event: EventRecord, now: Date): Promise<LockedEvent> {
  const counts = await countSeats(trx, event.id, now);
  const seatsTaken = counts.registered + counts.offered + counts.inCheckout;
  return {
    event,
    seatsTaken,
    seatsLeft: event.capacity === null ? null : Math.max(0, event.capacity - seatsTaken),
    seatsOffered: counts.offered,
    seatsInCheckout: counts.inCheckout,
    waiting: counts.waiting,
    queue: counts.queue,
  };
}

/**
 * The places the public may take. Freed places go to the waiting list in order, not to whoever loads the
 * page next: on an enabled list, the free places some confirmed entry may take under the order rule
 * (planOffers) are the list's. The rest (only larger families wait, say) no one on the list can take,
 * so they stay on public sale rather than stranded. null = unlimited.
 */
export function publicSeatsLeft(locked: { event: Partial<Pick<EventRecord, 'waitingList'>>; seatsLeft: number | null; queue: readonly QueuedEntry[] }): number | null {
  if (locked.seatsLeft === null) return null;
  if (!locked.event.waitingList?.enabled || locked.queue.length === 0) return locked.seatsLeft;
  return Math.max(0, locked.seatsLeft - placesForList(planOffers(locked.seatsLeft, locked.queue)));
}

/**
 * A paid checkout's hold on its event: the event as locked and the seats left (null = unlimited): `seatsLeft`
 * counts the places other checkouts hold as taken; `seatsLeftForOwnHold` does not, for a checkout completing
 * into its own live hold (see lockEventForCompletion).
 */
export type CompletionLock = Pick<LockedEvent, 'event' | 'seatsLeft'> & {
  seatsLeftForOwnHold: number | null;
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
 * (and they for it). `seenCapacity` is the capacity read before locking; if it
 * was unlimited but is limited under the lock, the caller must start again
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
  seenCapacity: number | null,
  paymentIntentId: string | null,
  now: Date,
): Promise<CompletionLock | undefined> {
  const pendingReversal = paymentIntentId
    ? trx.raw('EXISTS (SELECT 1 FROM pending_reversals WHERE payment_intent_id = ?) AS pending_reversal', [paymentIntentId])
    : trx.raw('false AS pending_reversal');
  const query = trx('events').where({ id: eventId }).first<(EventRow & { pending_reversal: boolean }) | undefined>('events.*', pendingReversal);
  if (seenCapacity !== null) {
    const row = await query.forUpdate();
    if (!row) return undefined;
    const { event, seatsLeft, seatsTaken, seatsInCheckout } = await withSeatsTaken(trx, eventFromRow(row), now);
    const seatsLeftForOwnHold = event.capacity === null ? null : Math.max(0, event.capacity - (seatsTaken - seatsInCheckout));
    return { event, seatsLeft, seatsLeftForOwnHold, pendingReversal: row.pending_reversal };
  }
  const row = await query.forShare();
  if (!row) return undefined;
  const event = eventFromRow(row);
  if (event.capacity !== null) throw new CapacityChangedError(eventId);
  return { event, seatsLeft: null, seatsLeftForOwnHold: null, pendingReversal: row.pending_reversal };
}

/** Seats left without locking, for showing on the public page: as publicSeatsLeft counts them, at the app clock's `now`. */
export async function seatsLeft(db: Knex, event: SeatEvent, now: Date): Promise<number | null> {
  return (await publicSeatCount(db, event, now)).seatsLeft;
}

/** The public count without locking, how many wait on the list (and in what order), and the places free to anyone at all, at the app clock's `now`. */
export async function publicSeatCount(
  db: Knex,
  event: SeatEvent,
  now: Date,
): Promise<{ seatsLeft: number | null; waiting: number; free: number | null; queue: QueuedEntry[] }> {
  const counts = await countSeats(db, event.id, now);
  if (event.capacity === null) return { seatsLeft: null, waiting: counts.waiting, free: null, queue: counts.queue };
  // Below 0 when the office registered over the capacity: the places others must free before any is free.
  const free = event.capacity - counts.registered - counts.offered - counts.inCheckout;
  return { seatsLeft: publicSeatsLeft({ event, seatsLeft: Math.max(0, free), queue: counts.queue }), waiting: counts.waiting, free, queue: counts.queue };
}

/** An event as the seat counts need it (a test's row may leave out its waiting list: off). */
type SeatEvent = Pick<EventRecord, 'id' | 'capacity'> & Partial<Pick<EventRecord, 'waitingList'>>;

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
  return row as { id: string };
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
    attendees: JSON.stringify(input.attendees),
    attendee_count: input.attendees.length,
    family: input.family,
    payment_method: input.method,
    line_items: JSON.stringify(input.priced.lines),
    total_minor: input.priced.total,
    surcharge_minor: input.priced.surcharge,
    priced_on: input.pricedOn ?? null,
    payment_intent_id: input.paymentIntentId ?? null,
    client_key: input.clientKey ?? null,
    mailbox_key: input.mailboxKey ?? null,
    ...(input.answers ? answerColumns(cipher, input.answers.questions, input.answers.values) : {}),
    paid_at: input.status === 'PAID' ? input.now : null,
    created_at: input.now,
    updated_at: input.now,
  };
}
