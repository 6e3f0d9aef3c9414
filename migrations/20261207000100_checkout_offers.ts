import type { Knex } from 'knex';

/**
 * A card checkout started from a waiting-list offer names the offer (its entry and offer number) in
 * columns of its own, not only in its encrypted payload: so one offer has at most one open checkout
 * (a second attempt resumes it), and the offer's places stay held past its stated end only while the
 * checkout opened before that end is still open and unexpired. Both or neither are set.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.uuid('waitlist_entry_id').references('id').inTable('waitlist_entries');
    t.integer('waitlist_offer_seq');
    t.check('(waitlist_entry_id IS NULL) = (waitlist_offer_seq IS NULL)', [], 'checkout_sessions_waitlist_offer_check');
  });
  await knex.raw(`CREATE INDEX checkout_sessions_open_offer_idx ON checkout_sessions (waitlist_entry_id, waitlist_offer_seq) WHERE status = 'OPEN'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS checkout_sessions_open_offer_idx');
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.dropChecks(['checkout_sessions_waitlist_offer_check']);
    t.dropColumn('waitlist_offer_seq');
    t.dropColumn('waitlist_entry_id');
  });
}
