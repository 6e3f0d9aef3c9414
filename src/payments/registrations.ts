import type { Knex } from 'knex';
import { eventFromRow, type EventRecord } from '../admin/events.js';
import type { FieldCipher } from '../crypto/field-cipher.js';
import type { PricedRegistration, AttendeeChoice } from './pricing.js';

export type RegistrationStatus = 'PENDING' | 'PAID' | 'CANCELLED';
export type PaymentMethod = 'free' | 'bank' | 'card';

export interface RegistrationContact {
  name: string;
  email: string;
  mobile?: string;
}

export interface LockedEvent {
  event: EventRecord;
  /** Attendees of PENDING and PAID registrations. */
  seatsTaken: number;
  /** null = unlimited. */
  seatsLeft: number | null;
}

/**
 * Locks the event row (FOR UPDATE) for the rest of the transaction and counts
 * its taken seats, so two registrations can never both take the last seat.
 */
export async function lockEventForSeats(trx: Knex.Transaction, eventId: string): Promise<LockedEvent | undefined> {
  const row = await trx('events').where({ id: eventId }).forUpdate().first();
  if (!row) return undefined;
  const taken = await trx('registrations')
    .where({ event_id: eventId })
    .whereIn('status', ['PENDING', 'PAID'])
    .sum<{ seats: string | number | null }>({ seats: 'attendee_count' })
    .first();
  const seatsTaken = Number(taken?.seats ?? 0);
  const event = eventFromRow(row);
  return { event, seatsTaken, seatsLeft: event.capacity === null ? null : Math.max(0, event.capacity - seatsTaken) };
}

/** Seats left without locking, for showing on the public page. */
export async function seatsLeft(db: Knex, event: Pick<EventRecord, 'id' | 'capacity'>): Promise<number | null> {
  if (event.capacity === null) return null;
  const taken = await db('registrations')
    .where({ event_id: event.id })
    .whereIn('status', ['PENDING', 'PAID'])
    .sum<{ seats: string | number | null }>({ seats: 'attendee_count' })
    .first();
  return Math.max(0, event.capacity - Number(taken?.seats ?? 0));
}

export interface NewRegistration {
  eventId: string;
  status: RegistrationStatus;
  method: PaymentMethod;
  contact: RegistrationContact;
  attendees: AttendeeChoice[];
  family: boolean;
  priced: PricedRegistration;
  paymentIntentId?: string;
  now: Date;
}

/** Inserts a registration (contact encrypted, lookup hash from key v1) inside the caller's transaction. */
export async function insertRegistration(trx: Knex.Transaction, cipher: FieldCipher, input: NewRegistration): Promise<{ id: string }> {
  const [row] = await trx('registrations')
    .insert({
      event_id: input.eventId,
      status: input.status,
      contact_name: input.contact.name,
      contact_email_enc: cipher.encrypt(input.contact.email),
      contact_email_hash: cipher.lookupHash('email', input.contact.email),
      contact_mobile_enc: input.contact.mobile ? cipher.encrypt(input.contact.mobile) : null,
      attendees: JSON.stringify(input.attendees),
      attendee_count: input.attendees.length,
      family: input.family,
      payment_method: input.method,
      line_items: JSON.stringify(input.priced.lines),
      total_minor: input.priced.total,
      surcharge_minor: input.priced.surcharge,
      payment_intent_id: input.paymentIntentId ?? null,
      paid_at: input.status === 'PAID' ? input.now : null,
      created_at: input.now,
      updated_at: input.now,
    })
    .returning<Array<{ id: string }>>('id');
  return row as { id: string };
}
