import type { Knex } from 'knex';
import type { FieldCipher } from '../../crypto/field-cipher.js';
import type { Db } from '../../db/connect.js';
import { AppError } from '../../errors.js';
import { PricingError } from '../pricing.js';
import { entryContact, lockEntry, recordWaitlistHistory, type WaitlistContact, type WaitlistEntryRow } from './entries.js';
import type { ClaimTokenPayload } from './tokens.js';

export type OfferClaim = ClaimTokenPayload;

export class OfferNotOpenError extends AppError {
  constructor() {
    super('offer_not_open', 'This waiting-list offer is no longer open: it was used, it expired, or it was withdrawn.', { httpStatus: 409 });
    this.name = 'OfferNotOpenError';
  }
}

function isOpen(entry: WaitlistEntryRow | undefined, eventId: string, claim: OfferClaim, now: Date, allowLate: boolean): entry is WaitlistEntryRow {
  return (
    entry !== undefined &&
    entry.event_id === eventId &&
    entry.state === 'OFFERED' &&
    entry.offer_seq === claim.offerSeq &&
    entry.offer_expires_at !== null &&
    (allowLate || entry.offer_expires_at.getTime() > now.getTime())
  );
}

/**
 * The open offer a claim names, locked, under the event's lock (taken first by the caller); else
 * OfferNotOpenError. `allowLate`: a card payment confirmed after the offer's time, while the sweep
 * has not yet passed its places on (they are still held), is honoured.
 */
export async function lockOpenOffer(
  trx: Knex.Transaction,
  eventId: string,
  claim: OfferClaim,
  now: Date,
  options: { allowLate?: boolean } = {},
): Promise<WaitlistEntryRow> {
  const entry = await lockEntry(trx, claim.entryId);
  if (!isOpen(entry, eventId, claim, now, options.allowLate ?? false)) throw new OfferNotOpenError();
  return entry;
}

/** The open offer for showing the form (no lock): its places, contact and expiry; undefined when not open. */
export async function findOpenOffer(
  db: Db,
  cipher: FieldCipher,
  eventId: string,
  claim: OfferClaim,
  now: Date,
): Promise<{ entry: WaitlistEntryRow; contact: WaitlistContact } | undefined> {
  const entry = await db('waitlist_entries').where({ id: claim.entryId }).first<WaitlistEntryRow | undefined>();
  return isOpen(entry, eventId, claim, now, false) ? { entry, contact: entryContact(cipher, entry) } : undefined;
}

/** OFFERED → CLAIMED with the registration that took its places, in the registration's transaction. */
export async function markOfferClaimed(
  trx: Knex.Transaction,
  entry: Pick<WaitlistEntryRow, 'id' | 'places'>,
  input: { registrationId: string; attendees: number; actor: string; now: Date },
): Promise<void> {
  const updated = await trx('waitlist_entries')
    .where({ id: entry.id, state: 'OFFERED' })
    .update({ state: 'CLAIMED', registration_id: input.registrationId, updated_at: input.now });
  if (updated !== 1) throw new OfferNotOpenError();
  await recordWaitlistHistory(trx, {
    entryId: entry.id,
    action: 'claimed',
    changes: { state: { from: 'OFFERED', to: 'CLAIMED' }, registrationId: input.registrationId, places: entry.places, attendees: input.attendees },
    actor: input.actor,
    now: input.now,
  });
}

/** A registration through an offer names at most the places the offer holds. */
export function assertWithinOffer(entry: Pick<WaitlistEntryRow, 'places'>, wanted: number): void {
  if (wanted > entry.places) {
    throw new PricingError(`your offer holds ${entry.places} ${entry.places === 1 ? 'place' : 'places'}: name at most ${entry.places}`, 'attendees');
  }
}
