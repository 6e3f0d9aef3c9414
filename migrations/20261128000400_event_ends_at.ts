import type { Knex } from 'knex';

/**
 * When an event ends, if the office says: a camp or a retreat runs for days, and its calendar
 * entry and pages should say so. Null keeps the calendar's two-hour entry.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.timestamp('ends_at', { useTz: true });
    t.check('ends_at IS NULL OR ends_at > starts_at', [], 'events_ends_after_start_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropChecks(['events_ends_after_start_check']);
    t.dropColumn('ends_at');
  });
}
