import type { Knex } from 'knex';
import { AppError } from '../errors.js';
import type { EventRecord } from '../registrations/event-record.js';
import { lockEventForSeats } from '../registrations/registrations.js';
import { openCheckoutOfOffer } from '../registrations/card-checkouts.js';
import { assertWithinOffer, lockOpenOffer, type OfferClaim } from '../registrations/waitlist/claim.js';
import { EventClosedError } from './registration-errors.js';
import { tierPlacesForOfferCheckout, type CheckoutHold } from './checkout-hold.js';
import type { AttendeeChoice } from '../registrations/pricing.js';

/**
 * A card checkout from a waiting-list offer. The offer ends at the time its email stated: a checkout may be
 * opened only before then, and opening one never moves that time. The checkout holds no places of its own
 * (the offer holds them); it keeps the offer's places held past the offer's end only while it is itself open
 * and unexpired (offers.ts), so its payment can complete within its own lifetime. One offer has at most one
 * open checkout: a second attempt is sent back to the same provider page.
 */

/** The offer's checkout has taken a payment that is still settling: nothing new is opened, and the old page is not handed out. */
export class OfferPaymentInProgressError extends AppError {
  constructor() {
    super(
      'offer_payment_in_progress',
      'A card payment for this waiting-list offer is already being processed. We will email you as soon as it is confirmed; you do not need to pay again.',
      { httpStatus: 409 },
    );
    this.name = 'OfferPaymentInProgressError';
  }
}

export type OfferCheckoutStep =
  /** The offer's open checkout, to be handed out again. */
  | { kind: 'resume'; checkoutId: string; redirectUrl: string }
  /** Another request is opening the offer's checkout (its row staged, the provider not yet answered): wait and decide again. */
  | { kind: 'wait' }
  /** No open checkout: the caller stages one in this transaction (under the locks taken here), with what it holds. */
  | { kind: 'stage'; hold: CheckoutHold };

/**
 * Under the event's lock and the offer's entry lock: the offer must be open now (not past its stated
 * end) and hold the places wanted; then its open checkout decides what happens.
 */
export async function offerCheckoutStep(
  trx: Knex.Transaction,
  event: Pick<EventRecord, 'id'>,
  claim: OfferClaim,
  attendees: readonly AttendeeChoice[],
  now: Date,
): Promise<OfferCheckoutStep> {
  const locked = await lockEventForSeats(trx, event.id, now);
  if (!locked || locked.event.deletedAt) throw new EventClosedError();
  const entry = await lockOpenOffer(trx, event.id, claim, now);
  assertWithinOffer(entry, attendees.length);
  const open = await openCheckoutOfOffer(trx, claim, now);
  if (!open) {
    const hold = tierPlacesForOfferCheckout(locked, entry, attendees);
    if (hold instanceof Error) throw hold;
    return { kind: 'stage', hold };
  }
  if (open.provider_session_id === null) return { kind: 'wait' };
  if (open.payment_intent_id !== null || open.provider_url === null) throw new OfferPaymentInProgressError();
  return { kind: 'resume', checkoutId: open.id, redirectUrl: open.provider_url };
}
