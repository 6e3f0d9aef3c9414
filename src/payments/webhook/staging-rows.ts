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
  payload_enc: string | null;
  registration_id: string | null;
  net_minor: number;
  surcharge_minor: number;
  provider_session_id: string | null;
  payment_intent_id: string | null;
  unfulfilled_reason: string | null;
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

/**
 * Checkouts a payment may still arrive for and be honoured: OPEN, or EXPIRED
 * with the payload kept (within the provider's redelivery window and not
 * confirmed unpaid). For `.where(mayStillBePaid)`.
 */
export function mayStillBePaid(query: Knex.QueryBuilder): void {
  mayStillBePaidAs('checkout_sessions')(query);
}

/** mayStillBePaid as an SQL condition on checkout_sessions aliased `alias`, for raw statements. */
export function mayStillBePaidSql(alias: string): string {
  return `(${alias}.status = 'OPEN' OR (${alias}.status = 'EXPIRED' AND ${alias}.scrubbed_at IS NULL))`;
}

/**
 * How long a pay-now claim (a checkout row claimed before its provider session is opened, without a
 * lock) may wait for that session before another request may take over: longer than the provider
 * client's worst case (a 20-second timeout, tried three times). A claim older than this without a
 * session never handed a payment page out (pay-now hands the address out only in the response of
 * the request that recorded it, and records nothing once the lease is over), so nobody can pay on it.
 */
export const OPENING_LEASE_MS = 2 * 60_000;

/** A pay-now claim whose request died before recording its session (see OPENING_LEASE_MS): nothing can be paid on it. */
export function abandonedClaim(row: { provider_session_id: string | null; created_at: Date }, now: Date): boolean {
  return row.provider_session_id === null && row.created_at.getTime() <= now.getTime() - OPENING_LEASE_MS;
}

/**
 * "Is a card payment in flight?", for what we tell a registrant, remind them of or let the office
 * record: mayStillBePaid, less abandoned claims (see abandonedClaim). Not for the webhook, reconcile
 * or the sweep: a payment that does arrive for an abandoned claim's row is still honoured
 * (mayStillBePaid), and the row is expired and scrubbed by the rules for every checkout.
 * `now` is the SQL text of a placeholder bound to the app clock's now (e.g. ':now' or '?'), never SQL now().
 */
export function cardPaymentInFlightSql(alias: string, now: string): string {
  return `(${mayStillBePaidSql(alias)} AND NOT (${alias}.provider_session_id IS NULL
     AND ${alias}.created_at <= CAST(${now} AS timestamptz) - interval '${OPENING_LEASE_MS} milliseconds'))`;
}

/** cardPaymentInFlightSql for a query builder naming checkout_sessions `alias`, at the app clock's `now`. */
export function cardPaymentInFlightAs(alias: string, now: Date): (query: Knex.QueryBuilder) => void {
  const abandonedBefore = new Date(now.getTime() - OPENING_LEASE_MS);
  return (query) =>
    void query
      .where(mayStillBePaidAs(alias))
      .whereNot((claim) => claim.whereNull(`${alias}.provider_session_id`).where(`${alias}.created_at`, '<=', abandonedBefore));
}

/**
 * An SQL condition: the registration `registrationId` (an SQL expression) has a card payment that was
 * kept without settling it (an UNFULFILLED checkout of its own) and the office has not yet answered
 * its alert. Nothing should then tell the registrant that no payment arrived, or ask them to pay.
 */
export function keptCardPaymentOpenSql(registrationId: string): string {
  return `EXISTS (SELECT 1 FROM checkout_sessions k JOIN operations_alerts a ON a.checkout_session_id = k.id::text
     WHERE k.registration_id = ${registrationId} AND k.status = 'UNFULFILLED' AND a.resolved_at IS NULL)`;
}

/** mayStillBePaid for a query that names checkout_sessions by an alias (beside a join whose columns share its names). */
export function mayStillBePaidAs(alias: string): (query: Knex.QueryBuilder) => void {
  return (query) =>
    void query.where(`${alias}.status`, 'OPEN').orWhere((expired) => expired.where(`${alias}.status`, 'EXPIRED').whereNull(`${alias}.scrubbed_at`));
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
     UNION SELECT payment_intent_id FROM operations_alerts WHERE payment_intent_id = ANY(?) AND kind <> ALL(?)`,
    [list, list, list, NOTICE_ALERT_KINDS],
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
