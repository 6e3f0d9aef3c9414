import type { Knex } from 'knex';
import { CapacityChangedError } from '../../registrations/registrations.js';
import { delayedPaymentExpiry } from '../staging.js';
import { recordAndClaimCompletion, type DeliveredEvent } from './claim.js';
import { completeCheckout, completeClaimedCheckout, type CompletionOutcome } from './completion.js';
import type { WebhookAction } from './map.js';
import { alertDisputeNotice, alertFailedRefund, alertPartialRefund, reversePayment, type ReversalOutcome } from './reversal.js';
import { findStagingRow, lockPaymentIntent, noticeIsOurs, ourPaymentIntents, paymentIntentsWithRefundWaiting, type WebhookContext } from './staging-rows.js';
import { mayStillBePaid } from '../../registrations/card-checkouts.js';

export type { WebhookContext } from './staging-rows.js';
export type { DeliveredEvent } from './claim.js';

/** What one delivery did; every one of these is answered 200. */
export type WebhookOutcome =
  | 'duplicate_event'
  /** A notice (partial refund, inquiry, won dispute, failed refund) about a payment eventops never took. */
  | 'not_ours'
  | 'extended'
  | 'expired'
  | CompletionOutcome
  | ReversalOutcome;

export type ActionableWebhookAction = Exclude<WebhookAction, { kind: 'ignore' }>;

/**
 * Applies one verified provider event in ONE transaction. The event id is
 * recorded first (insert-or-nothing), so a redelivery of an event already
 * handled does nothing; a redelivery racing the first waits on that row and
 * then does nothing. Any database failure rolls everything back and reaches the
 * caller, which answers 500 so the provider delivers again.
 */
export async function handleWebhookAction(
  ctx: WebhookContext,
  event: DeliveredEvent,
  action: ActionableWebhookAction,
): Promise<WebhookOutcome> {
  try {
    return await applyOnce(ctx, event, action);
  } catch (error) {
    // Rare: an admin limited the event's capacity while this payment was completing. Start over with the seat lock.
    if (error instanceof CapacityChangedError) return applyOnce(ctx, event, action);
    throw error;
  }
}

function applyOnce(ctx: WebhookContext, event: DeliveredEvent, action: ActionableWebhookAction): Promise<WebhookOutcome> {
  return ctx.db.transaction(async (trx) => {
    if (action.kind === 'complete') return recordAndComplete(trx, ctx, event, action);
    const recorded = await trx('processed_webhook_events')
      .insert({ event_id: event.id, type: event.type, processed_at: ctx.clock.now() })
      .onConflict('event_id')
      .ignore()
      .returning<Array<{ event_id: string }>>('event_id');
    if (recorded.length === 0) return 'duplicate_event';
    const outcome = await apply(trx, ctx, event.id, action);
    // Not recorded as handled: should the payment turn out to be ours (its completion repaired later), a
    // redelivery or reconcile's replay of the same event is then news.
    if (outcome === 'not_ours') await trx('processed_webhook_events').where({ event_id: event.id }).delete();
    return outcome;
  });
}

/** A payment: recorded, locked and (commonly) claimed in the first statement; see recordAndClaimCompletion. */
async function recordAndComplete(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  event: DeliveredEvent,
  action: Extract<WebhookAction, { kind: 'complete' }>,
): Promise<WebhookOutcome> {
  const claim = await recordAndClaimCompletion(trx, event, action, ctx.clock.now());
  if (!claim.recorded) return 'duplicate_event';
  if (claim.claimed) return completeClaimedCheckout(trx, ctx, event.id, action, { ...claim, claimed: claim.claimed });
  return completeCheckout(trx, ctx, event.id, action);
}

async function apply(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  action: Exclude<ActionableWebhookAction, { kind: 'complete' }>,
): Promise<WebhookOutcome> {
  switch (action.kind) {
    case 'extend':
      return extendCheckout(trx, ctx, action);
    case 'expire':
      return expireCheckout(trx, ctx, action);
    case 'reverse':
      return reversePayment(trx, ctx, eventId, action);
    case 'partial_refund':
      return (await ourPayment(trx, action)) ? alertPartialRefund(trx, ctx, eventId, action) : 'not_ours';
    case 'dispute_notice':
      return (await ourPayment(trx, action)) ? alertDisputeNotice(trx, ctx, eventId, action) : 'not_ours';
    case 'refund_failed':
      return (await ourPayment(trx, action)) ? alertFailedRefund(trx, ctx, eventId, action) : 'not_ours';
  }
}

/** noticeIsOurs, read under the payment's lock, as its completion and reversals are: a completion committing meanwhile is seen. */
async function ourPayment(trx: Knex.Transaction, action: Parameters<typeof noticeIsOurs>[0]): Promise<boolean> {
  if (!action.paymentIntentId) return noticeIsOurs(action, { ours: new Set(), refundsWaiting: new Set() });
  await lockPaymentIntent(trx, action.paymentIntentId);
  const ids = [action.paymentIntentId];
  return noticeIsOurs(action, { ours: await ourPaymentIntents(trx, ids), refundsWaiting: await paymentIntentsWithRefundWaiting(trx, ids) });
}

/**
 * Completed but not yet settled (delayed payment method): keep the row OPEN long enough for the
 * sweep to leave it. A row the sweep already expired with its payload kept is opened again: the
 * payment was made in time and is still under way (a late delivery of this event, or reconcile
 * finding it still settling at the provider). See delayedPaymentExpiry for how long.
 */
async function extendCheckout(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  action: Extract<WebhookAction, { kind: 'extend' }>,
): Promise<WebhookOutcome> {
  const staging = await findStagingRow(trx, action.providerSessionId, action.ids);
  if (!staging) return 'unknown_checkout';
  const now = ctx.clock.now();
  const updated = await trx('checkout_sessions')
    .where({ id: staging.id })
    .where(mayStillBePaid)
    .update({
      status: 'OPEN',
      expires_at: delayedPaymentExpiry(staging, now),
      payment_intent_id: action.paymentIntentId ?? staging.payment_intent_id,
      updated_at: now,
    });
  return updated > 0 ? 'extended' : 'already_handled';
}

/**
 * The provider says the session ended unpaid (it expired, or its delayed payment
 * failed): nothing was charged, so no registration; the staged payload is
 * scrubbed at once and the row records the confirmation our pages rely on.
 */
export async function expireCheckout(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  action: Extract<WebhookAction, { kind: 'expire' }>,
): Promise<WebhookOutcome> {
  const staging = await findStagingRow(trx, action.providerSessionId, action.ids);
  if (!staging) return 'unknown_checkout';
  const updated = await confirmUnpaid(trx, staging.id, ctx.clock.now());
  return updated ? 'expired' : 'already_handled';
}

/**
 * OPEN, or EXPIRED and kept → EXPIRED, scrubbed, confirmed unpaid by the provider. An EXPIRED
 * checkout the sweep scrubbed before the provider said anything is recorded as confirmed too
 * (keeping when it was scrubbed), so reconcile stops reading it and the pages may say nothing was charged.
 */
export async function confirmUnpaid(trx: Knex, checkoutId: string, now: Date, only?: (query: Knex.QueryBuilder) => void): Promise<boolean> {
  const updated = await trx('checkout_sessions')
    .where({ id: checkoutId })
    .where((query) => void only?.(query))
    .where((settled) => settled.where(mayStillBePaid).orWhere((scrubbed) => scrubbed.where('status', 'EXPIRED').whereNull('unpaid_confirmed_at')))
    .update({
      status: 'EXPIRED',
      payload_enc: null,
      scrubbed_at: trx.raw('COALESCE(scrubbed_at, ?)', [now]),
      unpaid_confirmed_at: now,
      updated_at: now,
    });
  return updated > 0;
}
