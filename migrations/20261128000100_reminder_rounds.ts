import type { Knex } from 'knex';

/**
 * The round an event or payment reminder belonged to: its event's reminder_at when it was sent.
 * A run that takes over a round stopped mid-event skips the registrations recorded for that round.
 * Null for every other email, and for reminders recorded before this column. No index of its own:
 * the round is looked up per registration through (registration_id, id), and a registration has
 * only a handful of these rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registration_emails', (t) => {
    t.timestamp('reminder_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registration_emails', (t) => {
    t.dropColumn('reminder_at');
  });
}
