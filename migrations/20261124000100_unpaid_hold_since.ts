import type { Knex } from 'knex';

/**
 * When an event's unpaid hold limit was last set or shortened. A hold is never
 * released sooner than one day after that, so registrations made under a longer
 * limit (or none) are reminded before their seats are freed, instead of being
 * cancelled by the next sweep.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.timestamp('unpaid_hold_since', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropColumn('unpaid_hold_since');
  });
}
