import type { Knex } from 'knex';

/**
 * Late card payments and reconciliation. An EXPIRED checkout keeps its staged
 * payload until `scrubbed_at` is set (72 hours after expiry, or as soon as the
 * provider confirms the session unpaid), so a completion the provider delivers
 * late is still honoured. `unpaid_confirmed_at` records that the provider said
 * nothing was charged: only then do our pages say so.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.timestamp('scrubbed_at', { useTz: true });
    t.timestamp('unpaid_confirmed_at', { useTz: true });
  });
  // Rows expired before this release were scrubbed when they expired.
  await knex.raw(`UPDATE checkout_sessions SET scrubbed_at = updated_at WHERE status = 'EXPIRED'`);
  await knex.raw(
    `CREATE INDEX checkout_sessions_kept_expiry_idx ON checkout_sessions (expires_at) WHERE status = 'EXPIRED' AND scrubbed_at IS NULL`,
  );
  await knex.raw('CREATE INDEX checkout_sessions_created_idx ON checkout_sessions (created_at)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS checkout_sessions_created_idx');
  await knex.raw('DROP INDEX IF EXISTS checkout_sessions_kept_expiry_idx');
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.dropColumn('unpaid_confirmed_at');
    t.dropColumn('scrubbed_at');
  });
}
