import type { Knex } from 'knex';

/**
 * A row queued for delivery (mail, website notification) notifies channel
 * `eventops_outbox` when its transaction commits, so every server's delivery
 * loop wakes at once instead of at its next timer tick.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION eventops_notify_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('eventops_outbox', TG_TABLE_NAME);
      RETURN NULL;
    END $$`);
  for (const table of ['queued_mail', 'website_sync_outbox']) {
    await knex.raw(`CREATE TRIGGER ${table}_notify AFTER INSERT ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION eventops_notify_outbox()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['queued_mail', 'website_sync_outbox']) await knex.raw(`DROP TRIGGER IF EXISTS ${table}_notify ON ${table}`);
  await knex.raw('DROP FUNCTION IF EXISTS eventops_notify_outbox()');
}
