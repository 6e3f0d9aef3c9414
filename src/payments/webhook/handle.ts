import type { Knex } from 'knex';
import { CapacityChangedError } from '../registrations.js';
import { DELAYED_PAYMENT_EXTENSION_MS } from '../staging.js';
import { completeCheckout, type CompletionOutcome } from './completion.js';
import type { WebhookAction } from './map.js';
import { alertPartialRefund, reversePayment, type ReversalOutcome } from './reversal.js';
import { findStagingRow, mayStillBePaid, type WebhookContext } from './staging-rows.js';

export type { WebhookContext } from './staging-rows.js';

/** What one delivery did; every one of these is answered 200. */
export type WebhookOutcome =
  | 'duplicate_event'
  | 'extended'
  | 'expired'
  | CompletionOutcome
  | ReversalOutcome;

export type ActionableWebhookAction = Exclude<WebhookAction, { kind: 'ignore' }>;

export interface DeliveredEvent {
  id: string;
  type: string;
}

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
    const recorded = await trx('processed_webhook_events')
      .insert({ event_id: event.id, type: event.type, processed_at: ctx.clock.now() })
      .onConflict('event_id')
      .ignore()
      .returning<Array<{ event_id: string }>>('event_id');
    if (recorded.length === 0) return 'duplicate_event';
    return apply(trx, ctx, event.id, action);
  });
}

async function apply(trx: Knex.Transaction, ctx: WebhookContext, eventId: string, action: ActionableWebhookAction): Promise<WebhookOutcome> {
  switch (action.kind) {
    case 'complete':
      return completeCheckout(trx, ctx, eventId, action);
    case 'extend':
      return extendCheckout(trx, ctx, action);
    case 'expire':
      return expireCheckout(trx, ctx, action);
    case 'reverse':
      return reversePayment(trx, ctx, eventId, action);
    case 'partial_refund':
      return alertPartialRefund(trx, ctx, eventId, action);
  }
}

/** Completed but not yet settled (delayed payment method): keep the row OPEN long enough for the sweep to leave it. */
async function extendCheckout(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  action: Extract<WebhookAction, { kind: 'extend' }>,
): Promise<WebhookOutcome> {
  const staging = await findStagingRow(trx, action.providerSessionId, action.ids);
  if (!staging) return 'unknown_checkout';
  const now = ctx.clock.now();
  const updated = await trx('checkout_sessions')
    .where({ id: staging.id, status: 'OPEN' })
    .update({
      expires_at: new Date(now.getTime() + DELAYED_PAYMENT_EXTENSION_MS),
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

/** OPEN, or EXPIRED and kept → EXPIRED, scrubbed, confirmed unpaid by the provider. */
export async function confirmUnpaid(trx: Knex, checkoutId: string, now: Date): Promise<boolean> {
  const updated = await trx('checkout_sessions')
    .where({ id: checkoutId })
    .where(mayStillBePaid)
    .update({ status: 'EXPIRED', payload_enc: null, scrubbed_at: now, unpaid_confirmed_at: now, updated_at: now });
  return updated > 0;
}
