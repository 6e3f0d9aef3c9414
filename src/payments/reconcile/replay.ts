import type { AppContext } from '../../context.js';
import { providerErrorDetails, type ProviderClient } from '../provider.js';
import { handleWebhookAction, type WebhookOutcome } from '../webhook/handle.js';
import { noticeIsOurs, ourPaymentIntents, paymentIntentsWithRefundWaiting } from '../webhook/staging-rows.js';
import type { ProviderEvent } from '../webhook/map.js';
import { listReversalEvents, paymentOf, planReplay, type ActionableAction } from './events.js';
import type { ReconcileRow } from './compare.js';

/** Outcomes that mean the event's effect was already there (reconcile's own repair, or a delivery racing us). */
const ALREADY_THERE: ReadonlySet<WebhookOutcome> = new Set(['duplicate_event', 'already_cancelled', 'already_alerted', 'already_handled']);

export type ListedEvents = { events: ProviderEvent[] } | { failure: ReconcileRow };

/** The provider's refund and dispute events since `since`, or the row that reports they could not be listed. */
export async function listMissedReversals(ctx: AppContext, provider: ProviderClient, since: Date): Promise<ListedEvents> {
  try {
    return { events: await listReversalEvents(provider, since) };
  } catch (error) {
    // The sessions are still compared and repaired; the events are read again next run.
    ctx.logger.error({ provider: providerErrorDetails(error) }, "reconcile could not list the provider's refund and dispute events");
    const result = `failed: could not list the provider's events (${error instanceof Error ? error.message : String(error)})`;
    return { failure: { session: 'refund and dispute events', ours: '?', provider: 'unknown', action: 'replay', why: 'the provider did not list them', result, unresolved: true } };
  }
}

/**
 * Refunds and disputes the provider made whose webhook we never handled, applied by the webhook's own
 * code under the provider's event id: a later delivery of the same event, or the next run, is then a
 * duplicate. Without `apply` each is tried and rolled back, and reported. Events in `reported` (a first
 * pass of the same run) are not reported again.
 */
export async function replayMissedReversals(ctx: AppContext, events: readonly ProviderEvent[], apply: boolean, reported: ReadonlySet<string> = new Set()): Promise<ReconcileRow[]> {
  if (events.length === 0) return [];
  const handled = await handledEventIds(ctx, events.map((event) => event.id));
  const paymentIntents = [...new Set(events.map((event) => paymentIntentOf(event.data.object)).filter((id): id is string => id !== undefined))];
  const known = { ours: await ourPaymentIntents(ctx.db, paymentIntents), refundsWaiting: await paymentIntentsWithRefundWaiting(ctx.db, paymentIntents) };
  const isOurs = (action: ActionableAction) => noticeIsOurs(paymentOf(action), known);
  const disputedHere = await paymentsDisputedHere(ctx, paymentIntents);
  const rows: ReconcileRow[] = [];
  for (const step of planReplay(events, handled, isOurs, disputedHere)) {
    const event = step.event;
    if (reported.has(event.id)) continue;
    const objectId = (event.data.object as { id?: string }).id ?? '?';
    const base = { session: event.id, ours: 'not handled', provider: `${event.type} ${objectId}` };
    if (step.kind === 'settled') {
      if (apply) await recordSeen(ctx, event);
      continue;
    }
    const why = 'its webhook never reached us';
    if (!apply) {
      // Each event is tried on its own: a later event does not see what an earlier one would have done.
      const wouldBe = await whatReplayWouldDo(ctx, event, step.action).catch((error: unknown) => `failed: ${error instanceof Error ? error.message : String(error)}`);
      if (!ALREADY_THERE.has(wouldBe as WebhookOutcome)) rows.push({ ...base, action: 'replay', why, result: wouldBe.startsWith('failed') ? wouldBe : `would be ${wouldBe}`, unresolved: true });
      continue;
    }
    try {
      const outcome = await handleWebhookAction(ctx, { id: event.id, type: event.type }, step.action);
      if (!ALREADY_THERE.has(outcome)) rows.push({ ...base, action: 'replay', why, result: outcome, unresolved: false });
    } catch (error) {
      ctx.logger.error({ providerEventId: event.id, provider: providerErrorDetails(error) }, 'reconcile could not apply a missed provider event');
      rows.push({ ...base, action: 'replay', why, result: `failed: ${error instanceof Error ? error.message : String(error)}`, unresolved: true });
    }
  }
  return rows;
}

/**
 * A dry run's answer: the webhook's handling of the event in a transaction that is rolled back, so the
 * report names what --apply would do, and leaves out what is already in place (a refund reconcile applied
 * under its own id before it read the provider's events). Nothing it writes, alerts included, survives.
 */
async function whatReplayWouldDo(ctx: AppContext, event: { id: string; type: string }, action: ActionableAction): Promise<WebhookOutcome> {
  const trx = await ctx.db.transaction();
  try {
    // Silent: an alert it raises is rolled back, and must not be logged as raised.
    return await handleWebhookAction({ ...ctx, db: trx, logger: ctx.logger.child({ dryRun: true }, { level: 'silent' }) }, { id: event.id, type: event.type }, action);
  } finally {
    await trx.rollback();
  }
}

async function handledEventIds(ctx: AppContext, ids: string[]): Promise<Set<string>> {
  const rows = await ctx.db('processed_webhook_events').whereIn('event_id', ids).select<Array<{ event_id: string }>>('event_id');
  return new Set(rows.map((row) => row.event_id));
}

/**
 * The payments our records already show a dispute taking money from, however we heard of it (a delivery,
 * reconcile's own repair, a dispute older than the provider's list): their later events are news. A card
 * payment of several (registration_payments) shows it on its own ledger row, and in its part_payment_reversed alert.
 */
async function paymentsDisputedHere(ctx: AppContext, paymentIntentIds: string[]): Promise<Set<string>> {
  if (paymentIntentIds.length === 0) return new Set();
  const { rows } = await ctx.db.raw<{ rows: Array<{ payment_intent_id: string }> }>(
    `SELECT payment_intent_id FROM registrations WHERE payment_intent_id = ANY(:ids) AND cancel_reason = 'dispute'
     UNION SELECT payment_intent_id FROM registration_payments WHERE payment_intent_id = ANY(:ids) AND method = 'card' AND reversal = 'dispute'
     UNION SELECT payment_intent_id FROM pending_reversals WHERE payment_intent_id = ANY(:ids) AND kind = 'dispute'
     UNION SELECT payment_intent_id FROM operations_alerts WHERE payment_intent_id = ANY(:ids)
       AND (kind = 'dispute_after_cancellation' OR (kind IN ('reversal_unfulfilled', 'part_payment_reversed') AND details->>'reversal' = 'dispute'))`,
    { ids: paymentIntentIds },
  );
  return new Set(rows.map((row) => row.payment_intent_id));
}

function paymentIntentOf(object: unknown): string | undefined {
  const reference = (object as { payment_intent?: unknown } | null)?.payment_intent;
  if (typeof reference === 'string') return reference;
  const expanded = (reference as { id?: unknown } | null | undefined)?.id;
  return typeof expanded === 'string' ? expanded : undefined;
}

/** An event whose effect nets to nothing: remembered like a delivery, so it is not planned again. */
async function recordSeen(ctx: AppContext, event: { id: string; type: string }): Promise<void> {
  await ctx.db('processed_webhook_events').insert({ event_id: event.id, type: event.type, processed_at: ctx.clock.now() }).onConflict('event_id').ignore();
}
