import type { Knex } from 'knex';

/**
 * Money the office paid back by hand (a bank transfer, cash) for a cancelled registration: recorded
 * so its "amount paid" stops counting what the church no longer holds. Apart from registration_payments,
 * whose rows are money received (amount > 0) and whose sum decides what is still owing.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('registration_refunds', (t) => {
    t.bigIncrements('id');
    t.uuid('registration_id').notNullable().references('registrations.id');
    t.integer('amount_minor').notNullable();
    t.text('method').notNullable();
    t.text('note');
    t.text('recorded_by').notNullable();
    t.timestamp('recorded_at', { useTz: true }).notNullable();
    t.check('amount_minor > 0', [], 'registration_refunds_amount_check');
    t.check(`method IN ('bank','cash','other')`, [], 'registration_refunds_method_check');
    t.index(['registration_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('registration_refunds');
}
