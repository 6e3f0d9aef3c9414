import type { Knex } from 'knex';

/**
 * Help with the cost asked for on the form: an event offers the checkbox ("helpWithCost" in its file), and a
 * registration records when the family asked and when the office decided. Open while asked, not decided and
 * PENDING: the unpaid hold does not release it, and the office's lists say so.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.boolean('help_with_cost').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('registrations', (t) => {
    t.timestamp('help_requested_at', { useTz: true });
    t.timestamp('help_decided_at', { useTz: true });
    t.text('help_decided_by');
    t.check('help_decided_at IS NULL OR help_requested_at IS NOT NULL', [], 'registrations_help_decided_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registrations', (t) => {
    t.dropChecks('registrations_help_decided_check');
    t.dropColumn('help_decided_by');
    t.dropColumn('help_decided_at');
    t.dropColumn('help_requested_at');
  });
  await knex.schema.alterTable('events', (t) => t.dropColumn('help_with_cost'));
}
