import type { Knex } from 'knex';

/**
 * The SEQUENCE of an event's calendar entry, raised by one with every change of the event.
 * Reminders sent it as the seconds from the event's creation to its last change, which two
 * changes within one second left equal; existing events start from that value, so a calendar
 * holding an entry from an earlier reminder still takes the next one as newer.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.integer('calendar_sequence').notNullable().defaultTo(0);
  });
  await knex.raw(`
    UPDATE events
       SET calendar_sequence = LEAST(GREATEST(floor(EXTRACT(EPOCH FROM updated_at - created_at)), 0), 2147483647)::integer`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropColumn('calendar_sequence');
  });
}
