import type { Knex } from 'knex';

/**
 * A cap on the unpaid places one client may hold on an event: the event's
 * max_unpaid_seats_per_client, and each public registration's client_key (the
 * grouped address it came from, as the rate limits count it: an IPv4 address,
 * an IPv6 /56), kept only while its places are held unpaid. Events that exist
 * get the default cap; their unpaid_hold_days is left as it is.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.integer('max_unpaid_seats_per_client').notNullable().defaultTo(30);
    t.check('max_unpaid_seats_per_client >= 1', [], 'events_max_unpaid_seats_per_client_check');
  });
  await knex.schema.alterTable('registrations', (t) => {
    t.text('client_key');
  });
  // The cap's count under the event lock reads only one client's live rows of one event.
  await knex.raw(
    `CREATE INDEX registrations_event_id_client_key_index ON registrations (event_id, client_key)
       WHERE client_key IS NOT NULL`,
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX registrations_event_id_client_key_index');
  await knex.schema.alterTable('registrations', (t) => {
    t.dropColumn('client_key');
  });
  await knex.schema.alterTable('events', (t) => {
    t.dropChecks(['events_max_unpaid_seats_per_client_check']);
    t.dropColumn('max_unpaid_seats_per_client');
  });
}
