import type { Knex } from 'knex';

/**
 * The weekly purge of sensitive answers reaches the answers a card checkout staged too (its encrypted
 * payload_enc), whatever the checkout's status: a payment kept without a registration (UNFULFILLED) keeps
 * its payload for the office, so its sensitive answers are taken out of it and the rest kept.
 * sensitive_purged_at marks a payload done, so the next run does not read it again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.timestamp('sensitive_purged_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.dropColumn('sensitive_purged_at');
  });
}
