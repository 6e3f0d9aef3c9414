import { z } from 'zod';

/**
 * Provider webhook event → the one domain action it asks for (spec sections 3
 * and 6). Pure: no database, no clock, no provider calls, so every rule of the
 * mapping is testable on its own. Only the fields we act on are read, each
 * checked, so an unexpected shape becomes "ignore" rather than a crash.
 */

/** The envelope of a verified delivery, as the provider's package parses it. */
export interface ProviderEvent {
  id: string;
  type: string;
  data: { object: unknown };
}

/** Which of our records a provider object points back to (metadata set at checkout). */
export interface OurIds {
  /** checkout_sessions.id, when the metadata carries a well-formed one. */
  checkoutId?: string;
  /** registrations.id of a pay-now checkout. */
  registrationId?: string;
}

export type WebhookAction =
  | {
      kind: 'complete';
      providerSessionId: string;
      ids: OurIds;
      paymentIntentId: string | null;
      /** What the provider says it charged, minor units; null when absent. */
      amountTotal: number | null;
      /** Lower-case ISO code, as the provider sends it. */
      currency: string | null;
    }
  | { kind: 'extend'; providerSessionId: string; ids: OurIds; paymentIntentId: string | null }
  | { kind: 'expire'; providerSessionId: string; ids: OurIds }
  | {
      kind: 'reverse';
      reversal: ReversalKind;
      paymentIntentId: string;
      ids: OurIds;
      /** The charge (refund) or dispute id, for the alert trail. */
      providerObjectId: string;
      amountMinor: number;
    }
  | {
      kind: 'partial_refund';
      paymentIntentId: string | null;
      ids: OurIds;
      chargeId: string;
      amountMinor: number;
      amountRefundedMinor: number;
    }
  | {
      /**
       * A dispute that takes no money (yet, or any more): an inquiry (status warning_*: the bank asks,
       * no funds withdrawn) or a dispute the church won (the money came back). Only a person can act.
       */
      kind: 'dispute_notice';
      notice: DisputeNotice;
      paymentIntentId: string;
      ids: OurIds;
      disputeId: string;
      amountMinor: number;
    }
  | {
      /**
       * A refund the church made at the provider failed (the card was closed, say): the money came back
       * to the church's balance, and the payer has neither it nor, usually, the registration the refund
       * cancelled. Only a person can settle it.
       */
      kind: 'refund_failed';
      paymentIntentId: string;
      ids: OurIds;
      refundId: string;
      amountMinor: number;
      failureReason: string | null;
    }
  | { kind: 'ignore'; why: string };

export type ReversalKind = 'refund' | 'dispute';
export type DisputeNotice = 'inquiry' | 'won';

export const HANDLED_EVENT_TYPES = [
  'checkout.session.completed',
  'checkout.session.async_payment_succeeded',
  'checkout.session.async_payment_failed',
  'checkout.session.expired',
  'charge.refunded',
  'charge.dispute.created',
  'charge.dispute.closed',
  'charge.dispute.funds_withdrawn',
  'refund.failed',
] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

// Expandable references arrive as an id string or as the expanded object.
const reference = z.union([z.string(), z.object({ id: z.string() }).transform((o) => o.id)]).nullish();
const metadata = z.record(z.string(), z.string()).nullish();

const sessionSchema = z.object({
  id: z.string(),
  object: z.literal('checkout.session'),
  payment_status: z.string(),
  amount_total: z.number().int().nullish(),
  currency: z.string().nullish(),
  payment_intent: reference,
  metadata,
});

const chargeSchema = z.object({
  id: z.string(),
  object: z.literal('charge'),
  amount: z.number().int(),
  amount_refunded: z.number().int(),
  payment_intent: reference,
  metadata,
});

const refundSchema = z.object({
  id: z.string(),
  object: z.literal('refund'),
  amount: z.number().int(),
  payment_intent: reference,
  failure_reason: z.string().nullish(),
  metadata,
});

const disputeSchema = z.object({
  id: z.string(),
  object: z.literal('dispute'),
  amount: z.number().int(),
  status: z.string().nullish(),
  payment_intent: reference,
  metadata,
});

export function mapWebhookEvent(event: ProviderEvent): WebhookAction {
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
    case 'checkout.session.async_payment_failed':
    case 'checkout.session.expired':
      return mapSessionEvent(event.type, event.data.object);
    case 'charge.refunded':
      return mapRefund(event.data.object);
    case 'charge.dispute.created':
    case 'charge.dispute.closed':
    case 'charge.dispute.funds_withdrawn':
      return mapDispute(event.type, event.data.object);
    case 'refund.failed':
      return mapFailedRefund(event.data.object);
    default:
      return { kind: 'ignore', why: 'event type not used' };
  }
}

function mapSessionEvent(type: string, object: unknown): WebhookAction {
  const parsed = sessionSchema.safeParse(object);
  if (!parsed.success) return { kind: 'ignore', why: 'not a checkout session object' };
  const session = parsed.data;
  const base = { providerSessionId: session.id, ids: ourIds(session.metadata) };
  const paymentIntentId = session.payment_intent ?? null;
  if (type === 'checkout.session.async_payment_failed' || type === 'checkout.session.expired') return { kind: 'expire', ...base };
  // A completion with payment_status "unpaid" is a delayed method (e.g. direct debit) still settling.
  // "no_payment_required" is final, so it is completed and the amount check decides (we never open
  // a checkout for a free registration, so it ends UNFULFILLED with an alert rather than silently).
  if (type === 'checkout.session.completed' && session.payment_status === 'unpaid') {
    return { kind: 'extend', ...base, paymentIntentId };
  }
  return {
    kind: 'complete',
    ...base,
    paymentIntentId,
    amountTotal: session.amount_total ?? null,
    currency: session.currency ?? null,
  };
}

function mapRefund(object: unknown): WebhookAction {
  const parsed = chargeSchema.safeParse(object);
  if (!parsed.success) return { kind: 'ignore', why: 'not a charge object' };
  const charge = parsed.data;
  const ids = ourIds(charge.metadata);
  const paymentIntentId = charge.payment_intent ?? null;
  if (charge.amount_refunded < charge.amount) {
    return {
      kind: 'partial_refund',
      paymentIntentId,
      ids,
      chargeId: charge.id,
      amountMinor: charge.amount,
      amountRefundedMinor: charge.amount_refunded,
    };
  }
  // Every charge of a hosted checkout belongs to a PaymentIntent; one without is not ours.
  if (!paymentIntentId) return { kind: 'ignore', why: 'refunded charge has no PaymentIntent' };
  return { kind: 'reverse', reversal: 'refund', paymentIntentId, ids, providerObjectId: charge.id, amountMinor: charge.amount_refunded };
}

function mapFailedRefund(object: unknown): WebhookAction {
  const parsed = refundSchema.safeParse(object);
  if (!parsed.success) return { kind: 'ignore', why: 'not a refund object' };
  const refund = parsed.data;
  if (!refund.payment_intent) return { kind: 'ignore', why: 'failed refund has no PaymentIntent' };
  return {
    kind: 'refund_failed',
    paymentIntentId: refund.payment_intent,
    ids: ourIds(refund.metadata),
    refundId: refund.id,
    amountMinor: refund.amount,
    failureReason: refund.failure_reason ?? null,
  };
}

/**
 * A dispute opened with the money withdrawn cancels the registration, like a full refund. An inquiry
 * (warning_needs_response: no money moved) leaves it PAID, and a dispute the church won brings the money
 * back to a cancelled registration: both only raise an alert. A lost dispute or a closed inquiry changes nothing.
 * `funds_withdrawn` cancels as `created` does: it is the only word of an inquiry escalated to a chargeback
 * (a chargeback opened as one sends both; the second finds the registration already cancelled).
 */
function mapDispute(type: string, object: unknown): WebhookAction {
  const parsed = disputeSchema.safeParse(object);
  if (!parsed.success) return { kind: 'ignore', why: 'not a dispute object' };
  const dispute = parsed.data;
  if (!dispute.payment_intent) return { kind: 'ignore', why: 'disputed charge has no PaymentIntent' };
  const notice = disputeNotice(type, dispute.status ?? '');
  if (notice === 'nothing') return { kind: 'ignore', why: `dispute closed as ${dispute.status ?? 'unknown'}: nothing changes` };
  if (notice !== 'withdrawn') {
    return { kind: 'dispute_notice', notice, paymentIntentId: dispute.payment_intent, ids: ourIds(dispute.metadata), disputeId: dispute.id, amountMinor: dispute.amount };
  }
  return {
    kind: 'reverse',
    reversal: 'dispute',
    paymentIntentId: dispute.payment_intent,
    ids: ourIds(dispute.metadata),
    providerObjectId: dispute.id,
    amountMinor: dispute.amount,
  };
}

function disputeNotice(type: string, status: string): DisputeNotice | 'withdrawn' | 'nothing' {
  if (type === 'charge.dispute.closed') return status === 'won' ? 'won' : 'nothing';
  // An inquiry the bank escalated to a chargeback sends no second `created`: this is how we hear the money went.
  if (type === 'charge.dispute.funds_withdrawn') return 'withdrawn';
  return status.startsWith('warning_') ? 'inquiry' : 'withdrawn';
}

/** Our ids from provider metadata; anything not shaped like our ids is dropped, never queried with. */
function ourIds(meta: Record<string, string> | null | undefined): OurIds {
  const ids: OurIds = {};
  const checkoutId = meta?.eventops_checkout_id;
  const registrationId = meta?.eventops_registration_id;
  if (checkoutId && UUID.test(checkoutId)) ids.checkoutId = checkoutId;
  if (registrationId && UUID.test(registrationId)) ids.registrationId = registrationId;
  return ids;
}
