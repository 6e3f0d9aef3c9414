import type { Knex } from 'knex';

/**
 * A refund and a dispute of the same payment can both arrive before the payment
 * itself. With one waiting row per PaymentIntent the second was dropped, and the
 * dispute of a payment kept without a registration was never alerted. One row per
 * PaymentIntent and kind of reversal keeps both; a redelivery of the same kind
 * still finds its row and adds nothing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE pending_reversals DROP CONSTRAINT pending_reversals_pkey`);
  await knex.raw(`ALTER TABLE pending_reversals ADD CONSTRAINT pending_reversals_pkey PRIMARY KEY (payment_intent_id, kind)`);
}

/**
 * Back to one row per PaymentIntent. Where several kinds wait for the same
 * payment, the EARLIEST is kept (by created_at, then kind: the order in which a
 * completion applies them, and the row the old insert kept, since it ignored
 * every later one); the later ones are deleted, as the old code would have
 * dropped them on arrival. The table is locked first so no row of another kind
 * slips in between the delete and the new key.
 */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`LOCK TABLE pending_reversals IN ACCESS EXCLUSIVE MODE`);
  await knex.raw(`
    DELETE FROM pending_reversals later
     WHERE EXISTS (
       SELECT 1 FROM pending_reversals earlier
        WHERE earlier.payment_intent_id = later.payment_intent_id
          AND (earlier.created_at, earlier.kind) < (later.created_at, later.kind))`);
  await knex.raw(`ALTER TABLE pending_reversals DROP CONSTRAINT pending_reversals_pkey`);
  await knex.raw(`ALTER TABLE pending_reversals ADD CONSTRAINT pending_reversals_pkey PRIMARY KEY (payment_intent_id)`);
}
