import type { Knex } from 'knex';

/**
 * The card side of a registration's money: which of its checkouts a payment may still arrive for.
 * Read by the office (may a card payment still come?), reminders, pages and the webhook alike.
 */

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

/**
 * A checkout holds its places while it is OPEN and its expiry (by the app clock) has not passed: the one
 * rule the seat count, the per-client cap on places in checkout and a waiting-list offer's end all read,
 * so a hold ends at its checkout's expiry whether or not a sweep has run since. `now` is the SQL text of a
 * placeholder bound to the app clock's now (e.g. ':now' or '?'), never SQL now().
 */
export function holdsPlacesSql(alias: string, now: string): string {
  return `(${alias}.status = 'OPEN' AND ${alias}.expires_at > CAST(${now} AS timestamptz))`;
}

/** holdsPlacesSql for a query builder naming checkout_sessions `alias`, at the app clock's `now`. */
export function holdsPlacesAs(alias: string, now: Date): (query: Knex.QueryBuilder) => void {
  return (query) => void query.where(`${alias}.status`, 'OPEN').where(`${alias}.expires_at`, '>', now);
}

/**
 * A waiting-list offer's open checkout: holding (holdsPlacesSql) and not a claim whose request died before
 * recording its session (abandonedClaim: an offer's checkout records its session only within its lease, so
 * such a claim never handed a payment page out). An offer has at most one; it keeps the offer's places past
 * the offer's stated end for its own lifetime, never longer. Conditions on checkout_sessions aliased `alias`.
 */
export function openOfferCheckoutAs(alias: string, now: Date): (query: Knex.QueryBuilder) => void {
  const abandonedBefore = new Date(now.getTime() - OPENING_LEASE_MS);
  return (query) =>
    void query
      .where(holdsPlacesAs(alias, now))
      .whereNot((claim) => claim.whereNull(`${alias}.provider_session_id`).where(`${alias}.created_at`, '<=', abandonedBefore));
}

/** For whereExists: the open checkout (openOfferCheckoutAs) of the offer a waitlist_entries row aliased `entry` holds now. */
export function offerCheckoutOf(entry: string, now: Date): (query: Knex.QueryBuilder) => void {
  return (query) =>
    void query
      .select(1)
      .from('checkout_sessions as oc')
      .whereRaw(`oc.waitlist_entry_id = ${entry}.id AND oc.waitlist_offer_seq = ${entry}.offer_seq`)
      .where(openOfferCheckoutAs('oc', now));
}

export interface OfferCheckoutRow {
  id: string;
  provider_session_id: string | null;
  provider_url: string | null;
  payment_intent_id: string | null;
}

/** The offer's open checkout (openOfferCheckoutAs), if it has one. Run under the offer's entry lock. */
export async function openCheckoutOfOffer(
  db: Knex | Knex.Transaction,
  offer: { entryId: string; offerSeq: number },
  now: Date,
): Promise<OfferCheckoutRow | undefined> {
  return db('checkout_sessions as c')
    .where({ 'c.waitlist_entry_id': offer.entryId, 'c.waitlist_offer_seq': offer.offerSeq })
    .where(openOfferCheckoutAs('c', now))
    .orderBy('c.created_at', 'desc')
    .first<OfferCheckoutRow | undefined>('c.id', 'c.provider_session_id', 'c.provider_url', 'c.payment_intent_id');
}
