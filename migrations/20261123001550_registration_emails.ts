import type { Knex } from 'knex';

/**
 * Email a job sends straight to a registrant (event and payment reminders),
 * not through queued_mail: what it was and when, so `registrations show` lists
 * every email a registration was sent. No address or content is kept here.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('registration_emails', (t) => {
    t.bigIncrements('id');
    t.uuid('registration_id').notNullable().references('registrations.id');
    t.text('kind').notNullable();
    t.timestamp('sent_at', { useTz: true }).notNullable();
    t.index(['registration_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('registration_emails');
}
