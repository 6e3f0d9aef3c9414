import type { Knex } from 'knex';

/**
 * The once-per-session checks find an alert by its provider session (unknown_checkout: the webhook's
 * completion, reconcile's listing) or by its PaymentIntent (reversal_unfulfilled and
 * dispute_after_cancellation: the reversal webhooks, reconcile's per-checkout subqueries, the office's
 * kept-payment answer), always with the kind. Without an index each check read the whole table, which
 * only grows (alerts are resolved, never deleted), the webhook's under its lock. The id comes first, the
 * selective column, so a lookup by the id alone can use the index too; partial, because most alerts
 * carry neither id or only one of them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    `CREATE INDEX operations_alerts_provider_session_id_kind_index ON operations_alerts (provider_session_id, kind)
       WHERE provider_session_id IS NOT NULL`,
  );
  await knex.raw(
    `CREATE INDEX operations_alerts_payment_intent_id_kind_index ON operations_alerts (payment_intent_id, kind)
       WHERE payment_intent_id IS NOT NULL`,
  );
  // reconcile's reconcile_mismatch check and the kept-payment join (keptCardPaymentOpenSql) look alerts up by checkout.
  await knex.raw(
    `CREATE INDEX operations_alerts_checkout_session_id_kind_index ON operations_alerts (checkout_session_id, kind)
       WHERE checkout_session_id IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX operations_alerts_checkout_session_id_kind_index');
  await knex.raw('DROP INDEX operations_alerts_payment_intent_id_kind_index');
  await knex.raw('DROP INDEX operations_alerts_provider_session_id_kind_index');
}
