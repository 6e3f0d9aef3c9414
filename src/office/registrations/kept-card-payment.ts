import type { Knex } from 'knex';
import type { Db } from '../../db/connect.js';
import { AppError } from '../../errors.js';
import { paymentReference } from '../../registrations/reference.js';
import { CARD_FEE_LINE_LABEL, cardSurcharge, type PricedLine } from '../../registrations/pricing.js';
import type { RegisteredWithoutCard } from '../../signup/register.js';
import { lockPaymentIntent } from '../../payments/webhook/staging-rows.js';
import { getCardFeeRate } from '../../settings.js';

/** The columns of an operations alert that name the card payment it is about. */
export interface AlertPaymentColumns {
  id: number;
  kind: string;
  checkout_session_id: string | null;
  provider_session_id: string | null;
  payment_intent_id: string | null;
  amount_minor: number | null;
}

/** A card payment the provider took and we kept without a registration, as its alert records it. */
export interface KeptCardPayment {
  alertId: number;
  kind: string;
  checkoutId: string | null;
  providerSessionId: string | null;
  paymentIntentId: string | null;
  amountMinor: number | null;
}

/** What the registration answering the alert records of the card payment. */
export interface CardSettlement {
  amountMinor: number;
  lines: PricedLine[];
  /** The payment's reference at the provider, for the receipt (PaymentIntent, else Checkout Session). */
  providerReference: string;
}

/** The alert's card payment: one the provider knows by its ids; undefined for an alert that names none. */
export function keptCardPayment(alert: AlertPaymentColumns): KeptCardPayment | undefined {
  if (!alert.payment_intent_id && !alert.provider_session_id) return undefined;
  return {
    alertId: Number(alert.id),
    kind: alert.kind,
    checkoutId: alert.checkout_session_id,
    providerSessionId: alert.provider_session_id,
    paymentIntentId: alert.payment_intent_id,
    amountMinor: alert.amount_minor,
  };
}

/** Whether alert `id` is about a card payment (read without a lock: these columns never change). */
export async function alertIsForCardPayment(db: Db, id: number): Promise<boolean> {
  const alert = await db('operations_alerts').where({ id }).first<AlertPaymentColumns | undefined>();
  return alert !== undefined && keptCardPayment(alert) !== undefined;
}

const refuse = (payment: KeptCardPayment, why: string, suggestion: string) =>
  new AppError('alert_not_answered', `alert ${payment.alertId} ${why}; nothing was registered`, { exitCode: 1, suggestion });

/**
 * Records the kept card payment on the registration just made, as the webhook would have: PAID by
 * card for the amount charged (the card fee as its own line), linked to the PaymentIntent, so a
 * refund or dispute that comes later cancels it. Under the payment's lock, the one the webhook takes,
 * so a refund either came before (and is refused here) or finds the registration.
 */
export async function settleKeptCardPayment(
  trx: Knex.Transaction,
  payment: KeptCardPayment,
  registered: RegisteredWithoutCard,
  money: (minor: number) => string,
  now: Date,
): Promise<CardSettlement | undefined> {
  const charged = payment.amountMinor;
  if (charged === null) {
    throw refuse(
      payment,
      'does not record the amount the card was charged',
      `look the payment up in the card provider's dashboard, resolve the alert with \`eventops alerts resolve ${payment.alertId}\` and register without --resolve-alert`,
    );
  }
  let linkedTo: string | undefined;
  if (payment.paymentIntentId) {
    await lockPaymentIntent(trx, payment.paymentIntentId);
    linkedTo = await cancelledHolderUnlessTakenBack(trx, payment, payment.paymentIntentId);
  }
  const { priced } = registered;
  const fee = await cardFeeOf(trx, payment, registered);
  if (charged !== priced.net + fee) {
    const costs = fee > 0 ? `${money(priced.net + fee)} by card (${money(priced.net)} and the ${money(fee)} card fee)` : money(priced.net);
    throw refuse(
      payment,
      `is for a card payment of ${money(charged)}, but this registration costs ${costs}`,
      `check --attendee and --family against what was paid; to register for another amount, settle the difference with the payer, resolve the alert with \`eventops alerts resolve ${payment.alertId}\` and register without --resolve-alert`,
    );
  }
  // Nothing was charged for a free registration: it stays "free", with no receipt.
  if (priced.free) return undefined;

  const lines: PricedLine[] = fee > 0 ? [...priced.lines, { label: CARD_FEE_LINE_LABEL, amount: fee, kind: 'fee' }] : priced.lines;
  await trx('registrations')
    .where({ id: registered.registrationId })
    .update({
      line_items: JSON.stringify(lines),
      surcharge_minor: fee,
      total_minor: charged,
      // registrations.payment_intent_id is unique: a payment still linked to the registration a dispute cancelled (dispute_won) stays there.
      payment_intent_id: linkedTo === undefined ? payment.paymentIntentId : null,
      updated_at: now,
    });
  return { amountMinor: charged, lines, providerReference: (payment.paymentIntentId ?? payment.providerSessionId) as string };
}

/**
 * A refund of the payment, or a dispute that withdrew the money (unless the alert answered is that
 * dispute won back), means the money is no longer here to register with; a payment that pays a
 * registration still standing is not kept. Answers the cancelled registration the payment is linked to, if any.
 */
async function cancelledHolderUnlessTakenBack(trx: Knex.Transaction, payment: KeptCardPayment, paymentIntentId: string): Promise<string | undefined> {
  const reversals = await trx('operations_alerts')
    .where({ kind: 'reversal_unfulfilled', payment_intent_id: paymentIntentId })
    .select<Array<{ details: { reversal?: string } }>>('details');
  const waiting = await trx('pending_reversals').where({ payment_intent_id: paymentIntentId }).pluck<string[]>('kind');
  const holder = await trx('registrations').where({ payment_intent_id: paymentIntentId }).first<{ id: string; status: string; cancel_reason: string | null } | undefined>('id', 'status', 'cancel_reason');
  const cancelledBy = holder?.cancel_reason === 'refund' || holder?.cancel_reason === 'dispute' ? [holder.cancel_reason] : [];
  const kinds = [...reversals.map((r) => r.details.reversal ?? 'refund'), ...waiting, ...cancelledBy];
  const takenBack = kinds.find((kind) => kind === 'refund' || (kind === 'dispute' && payment.kind !== 'dispute_won'));
  if (takenBack) {
    throw refuse(
      payment,
      `is for a card payment that was ${takenBack === 'refund' ? 'refunded' : 'disputed'} at the card provider, so the money is not here to register with`,
      'settle with the payer first; resolve the alerts with `eventops alerts resolve` once handled',
    );
  }
  if (payment.kind === 'dispute_won' && holder?.status === 'CANCELLED' && holder.cancel_reason !== 'dispute') {
    // The win gave the cancelled registration its earlier reason back: the money already counts there, and a new
    // registration would count it twice.
    throw refuse(
      payment,
      `is for a won dispute whose money already counts on registration ${paymentReference(holder.id)} (cancelled, ${holder.cancel_reason ?? 'no reason'}), so there is nothing to register with`,
      `refund the payer or settle with them, then resolve the alert with \`eventops alerts resolve ${payment.alertId}\``,
    );
  }
  if (holder && holder.status !== 'CANCELLED') {
    throw refuse(
      payment,
      `is for a card payment that already pays registration ${paymentReference(holder.id)}`,
      `look at it with \`eventops registrations show ${paymentReference(holder.id)}\``,
    );
  }
  return holder?.id;
}

/**
 * The card fee in the amount charged: the one snapshotted on the payment's checkout, as the webhook
 * checks it; for a payment we have no checkout of, the event's rule today.
 */
async function cardFeeOf(trx: Knex.Transaction, payment: KeptCardPayment, registered: RegisteredWithoutCard): Promise<number> {
  const checkout = await trx('checkout_sessions')
    .where((q) => {
      // An unknown checkout's id comes from the provider's metadata: compared as text, it may be anything.
      if (payment.checkoutId) q.orWhereRaw('id::text = ?', [payment.checkoutId]);
      if (payment.paymentIntentId) q.orWhere('payment_intent_id', payment.paymentIntentId);
      if (payment.providerSessionId) q.orWhere('provider_session_id', payment.providerSessionId);
    })
    .orderBy('created_at', 'desc')
    .first<{ surcharge_minor: number } | undefined>('surcharge_minor');
  if (checkout) return checkout.surcharge_minor;
  return registered.event.passCardFee ? cardSurcharge(registered.priced.net, await getCardFeeRate(trx)) : 0;
}
