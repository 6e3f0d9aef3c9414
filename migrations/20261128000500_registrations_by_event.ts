import type { Knex } from 'knex';

/**
 * An event's registrations in id order: the reminder job's keyset pages (and the office's listings of
 * one event) otherwise walk the primary key over every event's registrations, filtering by event,
 * so their cost grew with the whole table instead of the event.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registrations', (t) => {
    t.index(['event_id', 'id'], 'registrations_event_id_id_index');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registrations', (t) => {
    t.dropIndex(['event_id', 'id'], 'registrations_event_id_id_index');
  });
}
