import { z } from 'zod';
import { DELAYED_PAYMENT_EXTENSION_MS, DELAYED_PAYMENT_LIMIT_MS, DELAYED_PAYMENT_RENEW_WITHIN_MS } from '../staging.js';
import type { OurIds } from '../webhook/map.js';
import type { CheckoutStatus } from '../webhook/staging-rows.js';

/**
 * Our record of a checkout against the provider's, as a pure decision: what
 * the provider says, what we hold, and the one action that makes them agree
 * (decisions.md "Late payments and reconciliation").
 */

export type ReconcileAction =
  /** Both sides agree. */
  | 'none'
  /** Paid at the provider, not completed here: the webhook's completion, as if delivered now. */
  | 'complete'
  /** Completed unpaid at the provider (a delayed payment), in flight here and not extended: the webhook's extension. */
  | 'extend'
  /** Expired at the provider, or its delayed payment failed there, still possibly in flight here: record it as confirmed unpaid. */
  | 'confirm_unpaid'
  /** Still open at the provider although our checkout expired: expire it there, then record it unpaid. */
  | 'expire_at_provider'
  /** Fully refunded or disputed at the provider, PAID here: the reversal webhook's handling. */
  | 'reverse'
  /** COMPLETED here, but the provider has no such session, another amount, or no payment: a person must look. */
  | 'alert_mismatch';

/** One line of reconcile's report: a session compared, or (`replay`) a provider event applied as its delivery would have been. */
export interface ReconcileRow {
  session: string;
  ours: string;
  provider: string;
  action: ReconcileAction | 'replay';
  why: string;
  /** With apply: what was done (the webhook outcome, `alerted`, `alert already raised`, or the error). */
  result?: string;
  /** The difference is still there after this run. */
  unresolved: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const chargeSchema = z.object({
  id: z.string(),
  amount: z.number().int(),
  amount_refunded: z.number().int(),
  refunded: z.boolean().nullish(),
  disputed: z.boolean().nullish(),
});

const paymentIntentSchema = z.union([
  z.string().transform((id) => ({ id, status: null, charge: undefined })),
  z
    .object({ id: z.string(), status: z.string().nullish(), latest_charge: z.union([z.string(), chargeSchema]).nullish() })
    .transform((intent) => ({
      id: intent.id,
      status: intent.status ?? null,
      charge: intent.latest_charge && typeof intent.latest_charge === 'object' ? intent.latest_charge : undefined,
    })),
]);

const sessionSchema = z.object({
  id: z.string(),
  object: z.literal('checkout.session'),
  status: z.string().nullish(),
  payment_status: z.string(),
  amount_total: z.number().int().nullish(),
  currency: z.string().nullish(),
  expires_at: z.number().int().nullish(),
  payment_intent: paymentIntentSchema.nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
});

export interface ProviderCharge {
  id: string;
  amount: number;
  amountRefunded: number;
  disputed: boolean;
}

/** A provider Checkout Session as reconcile reads it (the list's objects, PaymentIntent and latest charge expanded). */
export interface ProviderSessionView {
  id: string;
  status: string | null;
  paymentStatus: string;
  amountTotal: number | null;
  paymentIntentId: string | null;
  /** The PaymentIntent's status when it was expanded (e.g. processing, requires_payment_method), else null. */
  paymentIntentStatus: string | null;
  ids: OurIds;
  charge: ProviderCharge | undefined;
  /** The object as listed, which the webhook's mapping reads as it reads a delivered session. */
  raw: unknown;
}

export function parseProviderSession(object: unknown): ProviderSessionView | undefined {
  const parsed = sessionSchema.safeParse(object);
  if (!parsed.success) return undefined;
  const session = parsed.data;
  const ids: OurIds = {};
  const checkoutId = session.metadata?.eventops_checkout_id;
  const registrationId = session.metadata?.eventops_registration_id;
  if (checkoutId && UUID.test(checkoutId)) ids.checkoutId = checkoutId;
  if (registrationId && UUID.test(registrationId)) ids.registrationId = registrationId;
  const charge = session.payment_intent?.charge;
  return {
    id: session.id,
    status: session.status ?? null,
    paymentStatus: session.payment_status,
    amountTotal: session.amount_total ?? null,
    paymentIntentId: session.payment_intent?.id ?? null,
    paymentIntentStatus: session.payment_intent?.status ?? null,
    ids,
    charge: charge
      ? { id: charge.id, amount: charge.amount, amountRefunded: charge.amount_refunded, disputed: charge.disputed === true }
      : undefined,
    raw: object,
  };
}

/** Our side of one checkout: the staging row and the registration it made or pays. */
export interface OurCheckoutView {
  id: string;
  status: CheckoutStatus;
  createdAt: Date;
  expiresAt: Date;
  /** The payload (or pay-now claim) is still kept: a payment may still be honoured. */
  kept: boolean;
  /** The provider confirmed it unpaid (its expiry event, a failed delayed payment, or reconcile). */
  confirmedUnpaid: boolean;
  expectedMinor: number;
  registrationStatus: 'PENDING' | 'PAID' | 'CANCELLED' | null;
  /** The status of the registration this checkout's PaymentIntent pays, if any (an UNFULFILLED one the office registered by hand). */
  paymentRegistrationStatus?: 'PENDING' | 'PAID' | 'CANCELLED' | null;
  /** Reversals of this payment already told as reversal_unfulfilled. */
  reversalsAlerted?: ReadonlyArray<'refund' | 'dispute'>;
  /**
   * Present for a card payment of a registration paying in parts (its ledger row): the reversal recorded on that
   * row, or null while it counts as paid.
   */
  cardPartReversal?: 'refund' | 'dispute' | null;
}

export interface ReconcileDecision {
  action: ReconcileAction;
  /** Why, in a few words, for the table and the alert. */
  why: string;
  reversal?: 'refund' | 'dispute';
}

export function providerPaid(session: ProviderSessionView): boolean {
  return session.paymentStatus === 'paid' && session.status === 'complete';
}

/**
 * A delayed payment (the session complete and unpaid) that failed: its PaymentIntent went back to
 * requires_payment_method, or was canceled, which is what async_payment_failed reports. A complete
 * session takes no second payment, so nothing can arrive for it any more. One still settling is
 * `processing` (or `requires_action` while, say, a bank account is verified).
 */
export function delayedPaymentFailed(session: ProviderSessionView): boolean {
  return (
    session.status === 'complete' &&
    session.paymentStatus === 'unpaid' &&
    (session.paymentIntentStatus === 'requires_payment_method' || session.paymentIntentStatus === 'canceled')
  );
}

/** The reversal the provider's latest charge shows: a full refund or a dispute; a partial refund is the webhook's alert, not ours. */
export function chargeReversal(charge: ProviderCharge | undefined): 'refund' | 'dispute' | undefined {
  if (!charge) return undefined;
  if (charge.disputed) return 'dispute';
  if (charge.amountRefunded >= charge.amount && charge.amount > 0) return 'refund';
  return undefined;
}

/**
 * Already given the provider's delayed-payment window: the webhook's extension sets the expiry
 * 14 days after it runs, so never less than 14 days after the checkout was created (an
 * ordinary checkout expires 31 minutes after). Read from the row, not the clock, so an
 * extension that has run its course is not extended again on every run.
 */
export function extendedForDelayedPayment(ours: OurCheckoutView): boolean {
  return ours.expiresAt.getTime() - ours.createdAt.getTime() >= DELAYED_PAYMENT_EXTENSION_MS;
}

/**
 * A delayed payment still settling at the provider is extended the first time as its webhook would,
 * then again whenever its expiry is less than 3 days off (or has passed, its payload still kept), so a
 * slow debit is not expired under the payer; but never beyond DELAYED_PAYMENT_LIMIT_MS after creation.
 */
export function delayedPaymentExtensionDue(ours: OurCheckoutView, now: Date): boolean {
  const limit = ours.createdAt.getTime() + DELAYED_PAYMENT_LIMIT_MS;
  if (now.getTime() >= limit || ours.expiresAt.getTime() >= limit) return false;
  return !extendedForDelayedPayment(ours) || ours.expiresAt.getTime() - now.getTime() < DELAYED_PAYMENT_RENEW_WITHIN_MS;
}

/**
 * A reversal of a payment kept without a registration that the webhook's handling has not yet seen: the
 * registration the office made with the payment is still PAID, or, with none, no reversal_unfulfilled
 * alert of this kind was raised. A registration already cancelled is left as for a COMPLETED checkout.
 */
function keptReversalUntold(ours: OurCheckoutView, reversal: 'refund' | 'dispute'): boolean {
  if (ours.paymentRegistrationStatus) return ours.paymentRegistrationStatus === 'PAID';
  return !(ours.reversalsAlerted ?? []).includes(reversal);
}

/**
 * A completed payment the provider shows reversed whose reversal our records do not show yet. A card payment of
 * several is judged on its own ledger row: still counting as paid while its registration stands, PAID or PENDING
 * (the webhook takes that one payment out, or cancels a registration it alone paid). The whole-total payment:
 * its registration still PAID.
 */
function reversalUnrecorded(ours: OurCheckoutView): boolean {
  if (ours.cardPartReversal !== undefined) {
    return ours.cardPartReversal === null && (ours.registrationStatus === 'PAID' || ours.registrationStatus === 'PENDING');
  }
  return ours.registrationStatus === 'PAID';
}

/** What is known here of a session without a checkout row of ours. */
export interface KnownHere {
  /** Its payment was already alerted as unknown_checkout (by the webhook or an earlier run). */
  unknownCheckoutAlerted?: boolean;
}

export function decide(session: ProviderSessionView | undefined, ours: OurCheckoutView | undefined, now: Date, known: KnownHere = {}): ReconcileDecision {
  if (!session) {
    if (ours?.status === 'COMPLETED') return { action: 'alert_mismatch', why: 'completed here, but the provider has no such session' };
    return { action: 'none', why: 'not at the provider' };
  }
  if (!ours) {
    // Paid and carrying our id without a row: the completion raises unknown_checkout, as the webhook would; once.
    if (providerPaid(session) && session.ids.checkoutId) {
      return known.unknownCheckoutAlerted
        ? { action: 'none', why: 'paid at the provider, no record here; its unknown_checkout alert was raised' }
        : { action: 'complete', why: 'paid at the provider, no record here' };
    }
    return { action: 'none', why: 'not ours' };
  }
  const inFlight = ours.status === 'OPEN' || (ours.status === 'EXPIRED' && ours.kept);
  // Scrubbed when its 72 hours ran out with no word from the provider (the server or the provider's API was out of
  // reach): nothing can be honoured any more, but a payment taken must still surface, and an unpaid one be recorded.
  const unsettled = ours.status === 'EXPIRED' && !ours.kept && !ours.confirmedUnpaid;
  if (providerPaid(session)) {
    if (ours.status === 'OPEN' || ours.status === 'EXPIRED') return { action: 'complete', why: 'paid at the provider, not completed here' };
    if (ours.status === 'COMPLETED' && session.amountTotal !== ours.expectedMinor) {
      return { action: 'alert_mismatch', why: `charged ${String(session.amountTotal)} at the provider, ${ours.expectedMinor} here` };
    }
    const reversal = chargeReversal(session.charge);
    if (reversal && ours.status === 'COMPLETED' && reversalUnrecorded(ours)) {
      const here = ours.cardPartReversal === undefined ? 'PAID here' : 'counted as paid here (one payment of several)';
      return { action: 'reverse', why: `${reversal === 'refund' ? 'refunded' : 'disputed'} at the provider, ${here}`, reversal };
    }
    if (reversal && ours.status === 'UNFULFILLED' && keptReversalUntold(ours, reversal)) {
      return { action: 'reverse', why: `${reversal === 'refund' ? 'refunded' : 'disputed'} at the provider, kept without a registration here`, reversal };
    }
    return { action: 'none', why: ours.status === 'UNFULFILLED' ? 'paid at the provider, kept here with its alert' : 'paid on both sides' };
  }
  if (ours.status === 'COMPLETED') return { action: 'alert_mismatch', why: `completed here, ${session.status ?? '?'} and ${session.paymentStatus} at the provider` };
  if (session.status === 'expired') {
    return inFlight || unsettled ? { action: 'confirm_unpaid', why: 'expired unpaid at the provider' } : { action: 'none', why: 'expired on both sides' };
  }
  // Its async_payment_failed was lost: extending it (or leaving it extended) would hold it "processing" for 14 days.
  if (delayedPaymentFailed(session)) {
    return inFlight || unsettled
      ? { action: 'confirm_unpaid', why: 'the delayed payment failed at the provider' }
      : { action: 'none', why: 'failed at the provider, unpaid here' };
  }
  if (session.status === 'complete' && session.paymentStatus === 'unpaid' && inFlight && delayedPaymentExtensionDue(ours, now)) {
    return extendedForDelayedPayment(ours)
      ? { action: 'extend', why: 'still settling at the provider (a delayed payment) as our checkout nears its expiry' }
      : { action: 'extend', why: 'completed unpaid at the provider (a delayed payment), not extended here' };
  }
  if (session.status === 'open' && session.paymentStatus === 'unpaid' && (inFlight || unsettled) && ours.expiresAt <= now) {
    return { action: 'expire_at_provider', why: 'still open at the provider after our checkout expired' };
  }
  return { action: 'none', why: 'not settled yet' };
}
