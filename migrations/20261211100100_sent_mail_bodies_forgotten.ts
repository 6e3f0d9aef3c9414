import type { Knex } from 'knex';

/**
 * A sent (or given-up) message keeps its subject for `registrations show`, but its body (names, addresses,
 * answers, the family's private links) only for SENT_MAIL_KEPT_DAYS: the weekly purge empties it and marks when.
 * The partial index finds the rows still to empty without reading the forgotten ones.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('queued_mail', (t) => t.timestamp('body_forgotten_at', { useTz: true }));
  await knex.raw(
    `CREATE INDEX queued_mail_body_kept_idx ON queued_mail (COALESCE(sent_at, created_at)) WHERE status <> 'PENDING' AND body_forgotten_at IS NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX queued_mail_body_kept_idx');
  await knex.schema.alterTable('queued_mail', (t) => t.dropColumn('body_forgotten_at'));
}
