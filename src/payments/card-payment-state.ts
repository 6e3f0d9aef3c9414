import type { Knex } from 'knex';
import { inFlightCheckoutsOf } from './pay-now.js';

/**
 * What the registrant may be told about the card payments of a registration,
 * from its pay-now checkouts: `in_flight` while one is OPEN or EXPIRED with its
 * payload kept (the provider may still confirm a payment, so no second one is
 * offered); `confirmed_unpaid` when the latest was confirmed unpaid by the
 * provider (only then may a page say nothing was charged); else `none`.
 */
export type CardPaymentState = 'none' | 'in_flight' | 'confirmed_unpaid';

export async function cardPaymentStateOf(db: Knex, registrationId: string): Promise<CardPaymentState> {
  if ((await inFlightCheckoutsOf(db, registrationId)).length > 0) return 'in_flight';
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
