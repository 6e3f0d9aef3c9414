import type { Knex } from 'knex';

/**
 * Unpaid places counted per mailbox as well as per connection, and an alert when an event's unpaid places
 * pass a share of its capacity. Each public registration keeps mailbox_key (the lookup hash of its contact's
 * canonical mailbox, as the confirmation limit counts mailboxes) while its places are held unpaid, as it keeps
 * client_key. Each event gets unpaid_alert_share (default 0.4; null: no alert).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registrations', (t) => {
    t.text('mailbox_key');
  });
  await knex.raw(
    `CREATE INDEX registrations_event_id_mailbox_key_index ON registrations (event_id, mailbox_key)
       WHERE mailbox_key IS NOT NULL`,
  );
  await knex.schema.alterTable('events', (t) => {
    t.double('unpaid_alert_share').defaultTo(0.4);
    t.check('unpaid_alert_share IS NULL OR (unpaid_alert_share > 0 AND unpaid_alert_share <= 1)', [], 'events_unpaid_alert_share_check');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropChecks(['events_unpaid_alert_share_check']);
    t.dropColumn('unpaid_alert_share');
  });
  await knex.raw('DROP INDEX registrations_event_id_mailbox_key_index');
  await knex.schema.alterTable('registrations', (t) => {
    t.dropColumn('mailbox_key');
  });
}
