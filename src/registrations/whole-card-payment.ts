import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';
import { insertCardPayment } from './deposits.js';

/**
 * The older shape of a paid registration: one payment of its whole total kept on the registration itself (paid_at,
 * payment method card, the PaymentIntent on registrations.payment_intent_id), with no card row in
 * registration_payments; or PAID with no ledger row at all (seeded or older data). The view registration_money counts
 * such a registration as having paid its total, whatever the total is: so before the total grows, the payment must
 * become a ledger row of the amount it paid, or the new amount would read as paid too.
 */

interface PaidRegistration {
  id: string;
  paid_at: Date | null;
  payment_method: string;
  total_minor: number;
  payment_intent_id: string | null;
  cancel_reason: string | null;
}

/** A whole-total card payment outside the ledger, with the checkout that took it. */
export interface WholeCardPayment {
  checkoutId: string;
  paymentIntentId: string | null;
  amountMinor: number;
  paidAt: Date;
}

/**
 * The payment the ledger counts as "the total" without a row of it: `undefined` when every payment is a row (or
 * nothing was paid); the card payment and its checkout when one can be found; `unrecorded` when the total is counted
 * paid and no checkout of ours took it (nothing to make the row from).
 */
export async function wholePaymentOutsideLedger(
  db: Db | Knex.Transaction,
  registration: PaidRegistration,
): Promise<WholeCardPayment | 'unrecorded' | undefined> {
  if (registration.paid_at === null || registration.total_minor <= 0) return undefined;
  if (registration.cancel_reason === 'refund' || registration.cancel_reason === 'dispute') return undefined;
  const counts = await db.raw<{ rows: Array<{ card_rows: number; paid_rows: number; credit_rows: number }> }>(
    `SELECT (SELECT count(*)::int FROM registration_payments WHERE registration_id = :id AND method = 'card') AS card_rows,
            (SELECT count(*)::int FROM registration_payments WHERE registration_id = :id AND reversal IS NULL AND amount_minor > 0) AS paid_rows,
            (SELECT count(*)::int FROM registration_credits WHERE registration_id = :id) AS credit_rows`,
    { id: registration.id },
  );
  const row = counts.rows[0] as { card_rows: number; paid_rows: number; credit_rows: number };
  const wholeCard = registration.payment_method === 'card' && row.card_rows === 0;
  const paidWithoutRows = row.paid_rows === 0 && row.credit_rows === 0;
  if (!wholeCard && !paidWithoutRows) return undefined;
  if (!wholeCard) return 'unrecorded';
  const checkout = await paidCheckoutOf(db, registration);
  if (!checkout) return 'unrecorded';
  return {
    checkoutId: checkout.id,
    paymentIntentId: registration.payment_intent_id ?? checkout.payment_intent_id,
    amountMinor: registration.total_minor,
    paidAt: registration.paid_at,
  };
}

/** The completed checkout that paid the whole total: the one carrying its PaymentIntent, else the registration's own whole-total one. */
async function paidCheckoutOf(db: Db | Knex.Transaction, registration: PaidRegistration): Promise<{ id: string; payment_intent_id: string | null } | undefined> {
  return db('checkout_sessions')
    .where((match) => {
      if (registration.payment_intent_id) void match.where('payment_intent_id', registration.payment_intent_id);
      else void match.where({ registration_id: registration.id, status: 'COMPLETED', balance_part: false });
    })
    .whereNotExists((recorded) => recorded.from('registration_payments as p').whereRaw('p.checkout_session_id = checkout_sessions.id'))
    .orderByRaw('completed_at DESC NULLS LAST')
    .first<{ id: string; payment_intent_id: string | null } | undefined>('id', 'payment_intent_id');
}

/**
 * The whole-total card payment as a ledger row of what it paid (the registration's total then, its card fee line
 * included: in this shape the fee was part of the total), naming the same checkout and PaymentIntent and dated when
 * it was paid. From then the registration counts its card rows, like one paying in parts.
 */
export async function recordWholeCardPayment(trx: Knex.Transaction, registrationId: string, payment: WholeCardPayment): Promise<void> {
  await insertCardPayment(trx, {
    registrationId,
    checkoutId: payment.checkoutId,
    paymentIntentId: payment.paymentIntentId,
    netMinor: payment.amountMinor,
    surchargeMinor: 0,
    now: payment.paidAt,
  });
}
