import { z } from 'zod';
import type { ProviderClient } from '../provider.js';
import { mapWebhookEvent, type OurIds, type ProviderEvent, type WebhookAction } from '../webhook/map.js';

/**
 * The provider's own record of refunds (and refunds that failed) and disputes, for the ones whose
 * webhook never reached us.
 * A refund made at the provider days after the payment is outside the sessions reconcile reads,
 * and the provider stops retrying a delivery after 3 days; its event list keeps 30 days.
 */
export const REPLAYED_EVENT_TYPES = ['charge.refunded', 'refund.failed', 'charge.dispute.created', 'charge.dispute.funds_withdrawn', 'charge.dispute.closed'] as const;

/** How long the provider keeps events listable. */
export const PROVIDER_EVENT_RETENTION_MS = 30 * 24 * 60 * 60_000;

export type ActionableAction = Exclude<WebhookAction, { kind: 'ignore' }>;

export type ReplayStep =
  | { kind: 'replay'; event: ProviderEvent; action: ActionableAction }
  /** Nothing to do now, and nothing to do later: recorded as seen so the next run does not list it. */
  | { kind: 'settled'; event: ProviderEvent; why: string };

/** The account's refund and dispute events since `since`, oldest first (the provider lists newest first). */
export async function listReversalEvents(provider: ProviderClient, since: Date): Promise<ProviderEvent[]> {
  const found: ProviderEvent[] = [];
  const pages = provider.events.list({ types: [...REPLAYED_EVENT_TYPES], created: { gte: Math.floor(since.getTime() / 1000) }, limit: 100 });
  for await (const event of pages) found.push({ id: event.id, type: event.type, data: { object: event.data.object } });
  return found.reverse();
}

const disputeState = z.object({
  id: z.string(),
  object: z.literal('dispute'),
  status: z.string().nullish(),
  payment_intent: z.union([z.string(), z.object({ id: z.string() }).transform((o) => o.id)]).nullish(),
});

/**
 * What to do with the events no delivery (and no earlier run) has handled: each is applied as its
 * delivery would have been, in the order the provider made them, with one exception. A dispute that
 * was won, or an inquiry that was closed, before we heard of any money leaving changed nothing for
 * good: the registration stays as it is and nobody needs telling, so none of its events is applied.
 * We heard of the money leaving when one of its withdrawing events (an opening that was not an
 * inquiry, or `funds_withdrawn`) was handled, or when `disputedHere` says our records already show a
 * dispute of that payment (the opening older than the list, or applied by reconcile under its own
 * id). Events of payments that are not ours (another integration on the same account) are left alone. Pure.
 */
export function planReplay(
  events: readonly ProviderEvent[],
  handled: ReadonlySet<string>,
  isOurs: (action: ActionableAction) => boolean,
  disputedHere: ReadonlySet<string> = new Set(),
): ReplayStep[] {
  const closedAs = new Map<string, string>();
  const heardOf = new Set<string>();
  for (const event of events) {
    const dispute = disputeOf(event);
    if (!dispute) continue;
    if (event.type === 'charge.dispute.closed') closedAs.set(dispute.id, dispute.status ?? '');
    if (handled.has(event.id) && withdraws(event.type, dispute.status)) heardOf.add(dispute.id);
    if (dispute.payment_intent && disputedHere.has(dispute.payment_intent)) heardOf.add(dispute.id);
  }
  const steps: ReplayStep[] = [];
  for (const event of events) {
    if (handled.has(event.id)) continue;
    const action = mapWebhookEvent(event);
    if (action.kind === 'ignore' || !isOurs(action)) continue;
    const dispute = disputeOf(event);
    const closed = dispute ? closedAs.get(dispute.id) : undefined;
    if (dispute && !heardOf.has(dispute.id) && (closed === 'won' || closed === 'warning_closed')) {
      steps.push({ kind: 'settled', event, why: closed === 'won' ? 'the dispute was won before we heard of it' : 'the inquiry was closed before we heard of it' });
      continue;
    }
    steps.push({ kind: 'replay', event, action });
  }
  return steps;
}

/** The events of a dispute that take the money: its opening unless an inquiry, and the withdrawal of an inquiry escalated. */
function withdraws(type: string, status: string | null | undefined): boolean {
  return type === 'charge.dispute.funds_withdrawn' || (type === 'charge.dispute.created' && !(status ?? '').startsWith('warning_'));
}

function disputeOf(event: ProviderEvent): z.infer<typeof disputeState> | undefined {
  if (!event.type.startsWith('charge.dispute.')) return undefined;
  const parsed = disputeState.safeParse(event.data.object);
  return parsed.success ? parsed.data : undefined;
}

/** The PaymentIntent and our ids an action names, as noticeIsOurs reads them. */
export function paymentOf(action: ActionableAction): { kind: string; paymentIntentId: string | null; ids: OurIds } {
  return { kind: action.kind, paymentIntentId: 'paymentIntentId' in action ? action.paymentIntentId : null, ids: action.ids };
}
