import type { Knex } from 'knex';

/**
 * The round an event or payment reminder belonged to: its event's reminder_at when it was sent.
 * A run that takes over a round stopped mid-event skips the registrations recorded for that round.
 * Null for every other email, and for reminders recorded before this column.
 *
 * Indexed by round first: the recipient pages (ordered by registration id) read only the rows of
 * the round being sent, whether the planner merges them in order or probes one registration at a
 * time. Through (registration_id, id) a merge read every reminder ever recorded, for every page.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registration_emails', (t) => {
    t.timestamp('reminder_at', { useTz: true });
  });
  await knex.raw(
    'CREATE INDEX registration_emails_round_idx ON registration_emails (reminder_at, registration_id) WHERE reminder_at IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS registration_emails_round_idx');
  await knex.schema.alterTable('registration_emails', (t) => {
    t.dropColumn('reminder_at');
  });
}
