import type { Knex } from 'knex';
import type { AppContext } from '../../context.js';
import type { OurIds } from './map.js';

/** What the webhook handlers share: the parts of the context a transaction needs. */
export type WebhookContext = Pick<AppContext, 'db' | 'config' | 'clock' | 'logger' | 'cipher'>;

export type CheckoutStatus = 'OPEN' | 'COMPLETED' | 'EXPIRED' | 'UNFULFILLED';

export interface StagingRow {
  id: string;
  event_id: string;
  status: CheckoutStatus;
  created_at: Date;
  expires_at: Date;
  /** The places this checkout holds while it is open and unexpired (0: none of its own). */
  places: number;
  /** The places of each capped ticket type it holds while open and unexpired ({} for none). */
  tier_places: Record<string, number>;
  payload_enc: string | null;
  registration_id: string | null;
  net_minor: number;
  surcharge_minor: number;
  provider_session_id: string | null;
  payment_intent_id: string | null;
  unfulfilled_reason: string | null;
  /** A pay-now checkout for part of a balance (or the rest of one paid in parts): recorded as a ledger row. */
  balance_part?: boolean;
}

/**
 * The staging row a provider session belongs to: by our id from its metadata
 * (when that row is not tied to a different provider session), else by the
 * provider session id.
 */
export async function findStagingRow(trx: Knex.Transaction, providerSessionId: string, ids: OurIds): Promise<StagingRow | undefined> {
  if (ids.checkoutId) {
    const byId = await trx('checkout_sessions').where({ id: ids.checkoutId }).first<StagingRow | undefined>();
    if (byId && (byId.provider_session_id === null || byId.provider_session_id === providerSessionId)) return byId;
  }
  return trx('checkout_sessions').where({ provider_session_id: providerSessionId }).first<StagingRow | undefined>();
}

/**
 * Serialises everything the webhook does for one PaymentIntent (its completion,
 * and a refund or dispute of it), so a reversal racing the completion is either
 * seen by it or sees the registration it created: never neither.
 */
export async function lockPaymentIntent(trx: Knex.Transaction, paymentIntentId: string): Promise<void> {
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`payment_intent:${paymentIntentId}`]);
}

/** Alerts raised only about notices (they were once raised for other tools' payments too): no proof a payment is ours. */
const NOTICE_ALERT_KINDS = ['partial_refund', 'dispute_inquiry', 'dispute_won', 'refund_failed'];

/**
 * The PaymentIntents among `ids` that are payments of ours: one of our checkouts or registrations was
 * paid with it, or an alert about one of our payments names it (a payment for an unknown checkout of
 * ours is recorded only there). Refunds and disputes carry no metadata of ours, so this is how their
 * notices are told from those of another tool on the same account.
 */
export async function ourPaymentIntents(db: Knex, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const list = [...ids];
  const { rows } = await db.raw<{ rows: Array<{ payment_intent_id: string }> }>(
    `SELECT payment_intent_id FROM checkout_sessions WHERE payment_intent_id = ANY(?)
     UNION SELECT payment_intent_id FROM registrations WHERE payment_intent_id = ANY(?)
     UNION SELECT payment_intent_id FROM registration_payments WHERE payment_intent_id = ANY(?) AND method = 'card'
     UNION SELECT payment_intent_id FROM operations_alerts WHERE payment_intent_id = ANY(?) AND kind <> ALL(?)`,
    [list, list, list, list, NOTICE_ALERT_KINDS],
  );
  return new Set(rows.map((row) => row.payment_intent_id));
}

/** The PaymentIntents among `ids` with a refund waiting in pending_reversals for their payment to complete. */
export async function paymentIntentsWithRefundWaiting(db: Knex, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  return new Set(await db('pending_reversals').whereIn('payment_intent_id', [...ids]).where({ kind: 'refund' }).pluck<string[]>('payment_intent_id'));
}

/** What is known of the payments a notice may be about: ourPaymentIntents and paymentIntentsWithRefundWaiting. */
export interface KnownPayments {
  ours: ReadonlySet<string>;
  refundsWaiting: ReadonlySet<string>;
}

/**
 * Whether a notice is about a payment of ours: its object carries our ids, or its PaymentIntent is ours.
 * A failed refund whose refund is still waiting for its payment to complete is ours to undo, whoever's the
 * payment turns out to be. The webhook and reconcile's replay decide by this one rule.
 */
export function noticeIsOurs(
  action: { kind: string; paymentIntentId: string | null; ids: { checkoutId?: string; registrationId?: string } },
  known: KnownPayments,
): boolean {
  if (action.ids.checkoutId || action.ids.registrationId) return true;
  if (action.paymentIntentId === null) return false;
  return known.ours.has(action.paymentIntentId) || (action.kind === 'refund_failed' && known.refundsWaiting.has(action.paymentIntentId));
}
