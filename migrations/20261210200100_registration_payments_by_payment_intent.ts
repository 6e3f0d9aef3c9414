import type { Knex } from 'knex';

/**
 * Card payments of a registration paying in parts are found by their PaymentIntent (a refund, a dispute, its win,
 * a failed refund, reconcile's comparison of each checkout): only the first is also on registrations.payment_intent_id.
 * Office payments carry none, so the index holds card rows only.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(
    'CREATE INDEX registration_payments_payment_intent_idx ON registration_payments (payment_intent_id) WHERE payment_intent_id IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX registration_payments_payment_intent_idx');
}
