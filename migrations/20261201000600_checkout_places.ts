import type { Knex } from 'knex';

/**
 * An open card checkout for a new registration holds its places until it is paid, expires or fails,
 * so a payer at the provider's page is never charged for a place the next bank transfer took.
 * `places` is 0 for checkouts that hold none themselves (pay-now: the registration holds them;
 * a waiting-list offer: the offer does). `client_key` lets the per-client cap on unpaid places
 * count open checkouts too, so holding by card is not a way round it; it is blanked once the
 * checkout is no longer open.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.integer('places').notNullable().defaultTo(0);
    t.text('client_key');
    t.check('places >= 0', [], 'checkout_sessions_places_check');
  });
  await knex.raw(`CREATE INDEX checkout_sessions_open_places_idx ON checkout_sessions (event_id) WHERE status = 'OPEN' AND places > 0`);
  // The sweep blanks the client keys of checkouts no longer open: only the few rows that carry one are looked at.
  await knex.raw(`CREATE INDEX checkout_sessions_client_key_idx ON checkout_sessions (status) WHERE client_key IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS checkout_sessions_client_key_idx');
  await knex.raw('DROP INDEX IF EXISTS checkout_sessions_open_places_idx');
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.dropChecks(['checkout_sessions_places_check']);
    t.dropColumn('places');
    t.dropColumn('client_key');
  });
}
