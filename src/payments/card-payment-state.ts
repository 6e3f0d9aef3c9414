import type { Knex } from 'knex';
import { inFlightCheckoutsOf, resumableCheckout } from './pay-now.js';
import { abandonedClaim } from '../registrations/card-checkouts.js';

/**
 * What the registrant may be told about the card payments of a registration,
 * from its pay-now checkouts: `resumable` while the one in flight is a live session
 * that has taken no payment (pay-now hands it out again); `in_flight` while one is
 * OPEN or EXPIRED with its payload kept otherwise (the provider may still confirm a
 * payment, so no second one is offered) and it is not a claim abandoned before its
 * session was recorded (nothing can be paid on it; pay-now records it unpaid at the next
 * click, the sweep at its expiry); `confirmed_unpaid` when the latest was
 * confirmed unpaid by the provider (only then may a page say nothing was charged);
 * else `none`.
 */
export type CardPaymentState = 'none' | 'resumable' | 'in_flight' | 'confirmed_unpaid';

export async function cardPaymentStateOf(db: Knex, registrationId: string, now: Date): Promise<CardPaymentState> {
  const inFlight = (await inFlightCheckoutsOf(db, registrationId)).filter((row) => !abandonedClaim(row, now));
  if (inFlight.length > 0) return resumableCheckout(inFlight, now) ? 'resumable' : 'in_flight';
  const latest = await db('checkout_sessions')
    .where({ registration_id: registrationId })
    .whereNot('status', 'COMPLETED')
    .orderBy('created_at', 'desc')
    .first<{ unpaid_confirmed_at: Date | null } | undefined>('unpaid_confirmed_at');
  return latest?.unpaid_confirmed_at ? 'confirmed_unpaid' : 'none';
}

/** Whether a new-registration or pay-now checkout's outcome may be described as "nothing was charged". */
export function confirmedUnpaid(row: { status: string; unpaid_confirmed_at: Date | null }): boolean {
  return row.status === 'EXPIRED' && row.unpaid_confirmed_at !== null;
}
