import type { EventRecord } from '../admin/events.js';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { startEventCheckout } from './checkout.js';
import { queueRegistrationConfirmation } from './confirmations.js';
import { cardPaymentPossible } from './links.js';
import { priceRegistration, type AttendeeChoice, type PricedRegistration } from './pricing.js';
import { insertRegistration, lockEventForSeats, type RegistrationContact } from './registrations.js';

/**
 * A registration submitted on the public event page, already validated. Every
 * amount is priced here on the server from these choices; nothing the
 * registrant sends is taken as a price.
 */
export interface RegistrationSubmission {
  contact: RegistrationContact;
  attendees: AttendeeChoice[];
  family: boolean;
  payment: 'card' | 'bank';
}

export type RegistrationOutcome =
  | { kind: 'registered'; registrationId: string; status: 'PAID' | 'PENDING'; method: 'free' | 'bank'; priced: PricedRegistration }
  | { kind: 'checkout'; checkoutId: string; redirectUrl: string };

export class SoldOutError extends AppError {
  constructor(readonly seatsLeft: number) {
    super(
      'sold_out',
      seatsLeft === 0
        ? 'Sorry, this event is sold out.'
        : `Sorry, only ${seatsLeft} ${seatsLeft === 1 ? 'place is' : 'places are'} left for this event.`,
      { httpStatus: 409 },
    );
    this.name = 'SoldOutError';
  }
}

export class EventClosedError extends AppError {
  constructor() {
    super('event_not_found', 'This event is not open for registration.', { httpStatus: 404 });
    this.name = 'EventClosedError';
  }
}

/**
 * Registers for an event. Free (net 0) → PAID at once, whatever payment was
 * chosen; bank transfer → PENDING; card → a provider checkout (no
 * registration until the webhook).
 * Card falls back to bank transfer when card payment is not possible for the
 * event (spec section 7). Free and bank registrations lock the event row so
 * capacity is never exceeded.
 */
export async function registerForEvent(
  ctx: AppContext,
  event: EventRecord,
  submission: RegistrationSubmission,
): Promise<RegistrationOutcome> {
  const priced = priceRegistration(event.pricing, { attendees: submission.attendees, family: submission.family });
  const wantsCard = submission.payment === 'card' && cardPaymentPossible(ctx.config, { online_payment: event.onlinePayment });
  if (!priced.free && wantsCard) {
    // startEventCheckout answers a full event early (sold_out); the webhook re-checks under the event lock.
    const started = await startEventCheckout(ctx, {
      event,
      contact: submission.contact,
      attendees: submission.attendees,
      family: submission.family,
    });
    return { kind: 'checkout', checkoutId: started.checkoutId, redirectUrl: started.redirectUrl };
  }
  return registerWithoutCard(ctx, event, submission);
}

async function registerWithoutCard(
  ctx: AppContext,
  event: EventRecord,
  submission: RegistrationSubmission,
): Promise<RegistrationOutcome> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (trx) => {
    const locked = await lockEventForSeats(trx, event.id);
    if (!locked || locked.event.deletedAt || !locked.event.published) throw new EventClosedError();
    if (locked.seatsLeft !== null && locked.seatsLeft < submission.attendees.length) throw new SoldOutError(locked.seatsLeft);
    // Priced again from the locked row, so a price change committed meanwhile is the one that counts.
    const priced = priceRegistration(locked.event.pricing, { attendees: submission.attendees, family: submission.family });
    const free = priced.free;
    const status = free ? 'PAID' : 'PENDING';
    const method = free ? 'free' : 'bank';
    const { id } = await insertRegistration(trx, ctx.cipher, {
      eventId: event.id,
      status,
      method,
      contact: submission.contact,
      attendees: submission.attendees,
      family: submission.family,
      priced,
      now,
    });
    await queueRegistrationConfirmation(trx, ctx, { registrationId: id, contact: submission.contact, event: locked.event, priced }, now);
    return { kind: 'registered', registrationId: id, status, method, priced };
  });
}
