import type { AppContext } from '../../context.js';
import { UnknownKeyVersionError } from '../../crypto/field-cipher.js';
import { raiseOperationsAlert } from '../alerts.js';
import { createProviderClient, providerErrorDetails, type ProviderClient } from '../provider.js';
import { handleWebhookAction, type ActionableWebhookAction } from '../webhook/handle.js';
import { mapWebhookEvent } from '../webhook/map.js';
import { alertUnreadable } from '../webhook/unreadable.js';
import {
  chargeReversal,
  decide,
  delayedPaymentFailed,
  extendedForDelayedPayment,
  parseProviderSession,
  providerPaid,
  type KnownHere,
  type ProviderSessionView,
  type ReconcileAction,
  type ReconcileRow,
} from './compare.js';
import { PROVIDER_EVENT_RETENTION_MS } from './events.js';
import { listMissedReversals, replayMissedReversals } from './replay.js';
import { describeOurs, loadOurCheckouts, ourView, type OurRow } from './ours.js';

/**
 * eventops reconcile: the provider's Checkout Sessions created in the window
 * (one list call per 100, through the client's auto-pagination, PaymentIntent
 * and latest charge expanded) against our checkout rows. With `apply`, each
 * difference is repaired by the code the webhook runs, under a synthetic event
 * id so a second run, or the provider's own late delivery, changes nothing
 * more. Its only writing call to the provider expires a session; it never refunds.
 */

export const DEFAULT_RECONCILE_WINDOW_MS = 72 * 60 * 60_000;
/**
 * How far back checkouts scrubbed without the provider's word are still read one by one: a server
 * (or its access to the provider) out for longer than the 72 hours lets the sweep scrub a payment
 * nobody has seen, and the provider's own retries have stopped by then.
 */
export const UNSETTLED_LOOKBACK_MS = 30 * 24 * 60 * 60_000;
const PAGE_SIZE = 100;

export type { ReconcileRow } from './compare.js';

export interface ReconcileReport {
  since: string;
  applied: boolean;
  /** Provider sessions listed in the window. */
  listed: number;
  /** Refund and dispute events the provider listed, since `eventsSince`. */
  events: number;
  eventsSince: string;
  rows: ReconcileRow[];
  matched: number;
  repaired: number;
  unresolved: number;
}

export async function reconcileWithProvider(ctx: AppContext, options: { sinceMs: number; apply: boolean }): Promise<ReconcileReport> {
  const now = ctx.clock.now();
  const since = new Date(now.getTime() - options.sinceMs);
  const provider = await createProviderClient(ctx.config);
  // The provider's refund and dispute events are applied before the comparison (a refund that failed must drop its
  // waiting reversal before the payment it waits for is completed below) and again after it, for the events of
  // payments the comparison has just made ours (a dispute of a payment whose completion was lost). Event ids and
  // "already in the target state" keep an event from being applied twice.
  const eventsSince = new Date(Math.min(since.getTime(), now.getTime() - PROVIDER_EVENT_RETENTION_MS));
  const listed = await listMissedReversals(ctx, provider, eventsSince);
  const events = 'events' in listed ? listed.events : [];
  const replayedFirst = await replayMissedReversals(ctx, events, options.apply);
  const sessions = await listProviderSessions(provider, since);
  const ours = await loadOurCheckouts(ctx, sessions, since, new Date(now.getTime() - UNSETTLED_LOOKBACK_MS));

  const rows: ReconcileRow[] = [];
  const seen = new Set<string>();
  for (const session of sessions) {
    const row = ours.byProviderSession.get(session.id) ?? (session.ids.checkoutId ? ours.byId.get(session.ids.checkoutId) : undefined);
    if (!row && !session.ids.checkoutId) continue; // another integration's session on the same account
    if (row) seen.add(row.id);
    const known = row ? undefined : { unknownCheckoutAlerted: ours.unknownCheckoutsAlerted.has(session.id) };
    rows.push(await reconcileOne(ctx, provider, session, row, options.apply, known));
  }
  // Older than the window but still payable (a delayed payment extended for 14 days, or what was open when
  // the server went down for longer than the window), or scrubbed meanwhile without the provider's word:
  // each session is read on its own, until it is settled.
  for (const row of ours.unsettledBeforeWindow) {
    if (seen.has(row.id) || !row.provider_session_id) continue;
    seen.add(row.id);
    let session: ProviderSessionView | undefined;
    try {
      session = await retrieveSession(provider, row.provider_session_id);
    } catch (error) {
      // One session the provider will not return must not hold up every other repair: reported, read again next run.
      ctx.logger.error({ providerSessionId: row.provider_session_id, provider: providerErrorDetails(error) }, 'reconcile could not read a checkout session');
      const result = `failed: could not read the session (${error instanceof Error ? error.message : String(error)})`;
      rows.push({ session: row.provider_session_id, ours: describeOurs(row), provider: 'unknown', action: 'none', why: 'the provider did not return it', result, unresolved: true });
      continue;
    }
    rows.push(await reconcileOne(ctx, provider, session, row, options.apply));
  }
  for (const row of ours.completedInWindow) {
    if (!seen.has(row.id)) rows.push(await reconcileOne(ctx, provider, undefined, row, options.apply));
  }
  const replayedAfter = await replayMissedReversals(ctx, events, options.apply, new Set(replayedFirst.map((row) => row.session)));
  rows.push(...('failure' in listed ? [listed.failure] : []), ...replayedFirst, ...replayedAfter);
  const matched = rows.filter((row) => row.action === 'none' && !row.unresolved).length;
  const unresolved = rows.filter((row) => row.unresolved).length;
  return {
    since: since.toISOString(),
    applied: options.apply,
    listed: sessions.length,
    events: events.length,
    eventsSince: eventsSince.toISOString(),
    rows,
    matched,
    repaired: rows.length - matched - unresolved,
    unresolved,
  };
}

async function listProviderSessions(provider: ProviderClient, since: Date): Promise<ProviderSessionView[]> {
  const found: ProviderSessionView[] = [];
  const pages = provider.checkout.sessions.list({
    created: { gte: Math.floor(since.getTime() / 1000) },
    limit: PAGE_SIZE,
    expand: ['data.payment_intent.latest_charge'],
  });
  for await (const session of pages) {
    const view = parseProviderSession(session);
    if (view) found.push(view);
  }
  return found;
}

/** One session by id, as the list shows it; undefined when the provider has no such session. */
export async function retrieveSession(provider: ProviderClient, sessionId: string): Promise<ProviderSessionView | undefined> {
  try {
    return parseProviderSession(await provider.checkout.sessions.retrieve(sessionId, { expand: ['payment_intent.latest_charge'] }));
  } catch (error) {
    if (providerErrorDetails(error).statusCode === 404) return undefined;
    throw error;
  }
}

function describeProvider(session: ProviderSessionView | undefined): string {
  if (!session) return 'missing';
  const reversal = session.charge?.disputed ? ', disputed' : session.charge && session.charge.amountRefunded > 0 ? `, refunded ${session.charge.amountRefunded}` : '';
  const failed = delayedPaymentFailed(session) ? ', failed' : '';
  return `${session.status ?? '?'}/${session.paymentStatus}${failed}${reversal}`;
}

/**
 * A charge is marked disputed from the first inquiry on, but only a dispute opened with the money
 * withdrawn (not an inquiry, `warning_*`, and not one the church won) reverses the payment, as the
 * webhook decides: the disputes are read to tell.
 */
async function withDisputesWeighed(provider: ProviderClient, session: ProviderSessionView | undefined): Promise<ProviderSessionView | undefined> {
  if (!session?.charge?.disputed || !session.paymentIntentId) return session;
  const disputes = await provider.disputes.list({ payment_intent: session.paymentIntentId, limit: 100 });
  const withdrawn = disputes.data.some((dispute) => !dispute.status.startsWith('warning_') && dispute.status !== 'won');
  return { ...session, charge: { ...session.charge, disputed: withdrawn } };
}

export async function reconcileOne(
  ctx: AppContext,
  provider: ProviderClient,
  listed: ProviderSessionView | undefined,
  row: OurRow | undefined,
  apply: boolean,
  known?: KnownHere,
): Promise<ReconcileRow> {
  let session: ProviderSessionView | undefined;
  try {
    session = await withDisputesWeighed(provider, listed);
  } catch (error) {
    ctx.logger.error({ providerSessionId: listed?.id, provider: providerErrorDetails(error) }, 'reconcile could not read the disputes of a payment');
    const result = `failed: could not read the disputes (${error instanceof Error ? error.message : String(error)})`;
    return { session: listed?.id ?? '?', ours: describeOurs(row), provider: describeProvider(listed), action: 'none', why: 'disputed at the provider', result, unresolved: true };
  }
  const decision = decide(session, row ? ourView(row) : undefined, ctx.clock.now(), known);
  const base = { session: session?.id ?? row?.provider_session_id ?? row?.id ?? '?', ours: describeOurs(row), provider: describeProvider(session), action: decision.action, why: decision.why };
  if (decision.action === 'none') return { ...base, unresolved: false };
  if (decision.action === 'alert_mismatch') {
    const result = row ? await raiseMismatchOnce(ctx, row, session, decision.why, apply) : 'no row';
    return { ...base, result, unresolved: result !== 'resolved by a person' };
  }
  if (!apply) return { ...base, unresolved: true };
  try {
    const result = await repair(ctx, provider, session as ProviderSessionView, row, decision.action, decision.reversal);
    return { ...base, result, unresolved: false };
  } catch (error) {
    if (error instanceof UnknownKeyVersionError) return { ...base, result: await unreadable(ctx, error, session, decision.action), unresolved: true };
    ctx.logger.error({ providerSessionId: base.session, action: decision.action, provider: providerErrorDetails(error) }, 'reconcile could not repair a checkout');
    return { ...base, result: `failed: ${error instanceof Error ? error.message : String(error)}`, unresolved: true };
  }
}

/**
 * A payment whose staged registration (or registration) is under a key this server lacks: the webhook's
 * payment_unreadable alert, one open alert per missing key whichever of them met it first. Read again next run.
 */
async function unreadable(ctx: AppContext, error: UnknownKeyVersionError, session: ProviderSessionView | undefined, action: ReconcileAction): Promise<string> {
  ctx.logger.error({ providerSessionId: session?.id, action, keyVersion: error.version }, 'reconcile could not read a payment: its encryption key is missing');
  const raised = await alertUnreadable(ctx, error, {
    providerEventId: `reconcile:${session?.id ?? '?'}:${action === 'complete' ? 'paid' : action}`,
    providerSessionId: session?.id,
    paymentIntentId: session?.paymentIntentId ?? undefined,
  });
  return `failed: encrypted with key ${error.version}, which this server lacks (payment_unreadable ${raised ? 'alert raised' : 'alert already open'})`;
}

async function repair(
  ctx: AppContext,
  provider: ProviderClient,
  session: ProviderSessionView,
  row: OurRow | undefined,
  action: Exclude<ReconcileAction, 'none' | 'alert_mismatch'>,
  reversal: 'refund' | 'dispute' | undefined,
): Promise<string> {
  switch (action) {
    case 'complete': {
      const completed = await completeAsWebhook(ctx, session);
      // A reversal that already happened at the provider follows the payment it reverses.
      const late = providerPaid(session) ? chargeReversal(session.charge) : undefined;
      if (late) await reverseAsWebhook(ctx, session, late);
      return completed;
    }
    case 'extend':
      return extendAsWebhook(ctx, session, row);
    case 'reverse':
      return reverseAsWebhook(ctx, session, reversal as 'refund' | 'dispute');
    case 'expire_at_provider': {
      const expired = await expireAtProvider(provider, session.id);
      // Paid (or completing) meanwhile: still a difference, which the next run repairs with what it then lists.
      if (expired.status !== 'expired') throw new Error(`not expired: the provider reports ${expired.status ?? '?'}/${expired.payment_status}; left for the next run`);
      return confirmUnpaidAsWebhook(ctx, session, row);
    }
    case 'confirm_unpaid':
      return confirmUnpaidAsWebhook(ctx, session, row);
  }
}

/** The completion the webhook would have run, built from the session as the provider reports it now. */
async function completeAsWebhook(ctx: AppContext, session: ProviderSessionView): Promise<string> {
  const action = mapWebhookEvent({ id: `reconcile:${session.id}:paid`, type: 'checkout.session.completed', data: { object: session.raw } });
  if (action.kind !== 'complete') return `not completed: ${action.kind}`;
  return handleWebhookAction(ctx, { id: `reconcile:${session.id}:paid`, type: 'checkout.session.completed' }, action);
}

/**
 * The extension the webhook's unpaid completion would have made (a delayed payment still settling),
 * so the sweep keeps the staged payload until the payment settles or fails. Extended again while it
 * settles: each later extension is an event of its own, one per day at most.
 */
async function extendAsWebhook(ctx: AppContext, session: ProviderSessionView, row: OurRow | undefined): Promise<string> {
  const ids = row ? { ...session.ids, checkoutId: row.id } : session.ids;
  const again = row && extendedForDelayedPayment(ourView(row)) ? `:${ctx.clock.now().toISOString().slice(0, 10)}` : '';
  return handleWebhookAction(
    ctx,
    { id: `reconcile:${session.id}:settling${again}`, type: 'checkout.session.completed' },
    { kind: 'extend', providerSessionId: session.id, ids, paymentIntentId: session.paymentIntentId },
  );
}

async function reverseAsWebhook(ctx: AppContext, session: ProviderSessionView, reversal: 'refund' | 'dispute'): Promise<string> {
  const charge = session.charge;
  if (!charge || !session.paymentIntentId) return 'no charge to reverse';
  const action: ActionableWebhookAction = {
    kind: 'reverse',
    reversal,
    paymentIntentId: session.paymentIntentId,
    ids: session.ids,
    providerObjectId: charge.id,
    amountMinor: reversal === 'refund' ? charge.amountRefunded : charge.amount,
  };
  return handleWebhookAction(ctx, { id: `reconcile:${charge.id}:${reversal}`, type: reversal === 'refund' ? 'charge.refunded' : 'charge.dispute.created' }, action);
}

/** What the provider's checkout.session.expired, or async_payment_failed for a delayed payment that failed, would have recorded. */
async function confirmUnpaidAsWebhook(ctx: AppContext, session: ProviderSessionView, row: OurRow | undefined): Promise<string> {
  const ids = row ? { ...session.ids, checkoutId: row.id } : session.ids;
  const event = delayedPaymentFailed(session)
    ? { id: `reconcile:${session.id}:failed`, type: 'checkout.session.async_payment_failed' }
    : { id: `reconcile:${session.id}:expired`, type: 'checkout.session.expired' };
  return handleWebhookAction(ctx, event, { kind: 'expire', providerSessionId: session.id, ids });
}

/** The one writing call to the provider. A session completed or expired meanwhile is read back rather than treated as a failure. */
async function expireAtProvider(provider: ProviderClient, sessionId: string) {
  try {
    return await provider.checkout.sessions.expire(sessionId);
  } catch (error) {
    const current = await provider.checkout.sessions.retrieve(sessionId);
    if (current.status === 'open') throw error;
    return current;
  }
}

/**
 * One reconcile_mismatch alert per checkout, ever: later runs find it and raise
 * nothing. It stays unresolved (exit 1) until a person resolves the alert.
 */
async function raiseMismatchOnce(
  ctx: AppContext,
  row: OurRow,
  session: ProviderSessionView | undefined,
  why: string,
  apply: boolean,
): Promise<string> {
  const existing = await ctx.db('operations_alerts')
    .where({ kind: 'reconcile_mismatch', checkout_session_id: row.id })
    .first<{ id: number; resolved_at: Date | null } | undefined>('id', 'resolved_at');
  if (existing) return existing.resolved_at ? 'resolved by a person' : `alert ${existing.id} already raised`;
  if (!apply) return 'would alert';
  return ctx.db.transaction(async (trx) => {
    await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`reconcile_mismatch:${row.id}`]);
    const raced = await trx('operations_alerts').where({ kind: 'reconcile_mismatch', checkout_session_id: row.id }).first('id');
    if (raced) return 'alert already raised';
    const alert = await raiseOperationsAlert(trx, ctx, {
      kind: 'reconcile_mismatch',
      reason: `our records and the provider's differ: ${why}; check the payment in the provider's dashboard`,
      checkoutId: row.id,
      providerSessionId: row.provider_session_id ?? undefined,
      paymentIntentId: row.payment_intent_id ?? undefined,
      amountMinor: session?.amountTotal ?? undefined,
      details: { expectedMinor: row.net_minor + row.surcharge_minor, ours: row.status, provider: session ? `${session.status ?? '?'}/${session.paymentStatus}` : 'missing' },
    });
    return `alerted (alert ${alert.id})`;
  });
}
