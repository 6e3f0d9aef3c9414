import type { Knex } from 'knex';

/**
 * A waiting-list entry joined through the public form is UNCONFIRMED until its mailbox confirms it
 * through the link of the join email: until then it is not on the list (no position that counts, no
 * hold on the public count), and a day after joining it LAPSES. `confirmed_at` is when it came on
 * the list (the office's `waitlist add` confirms at once); every entry already on a list counts as
 * confirmed when it joined. Lapsing is found by the partial index on the unconfirmed entries.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('waitlist_entries', (t) => {
    t.timestamp('confirmed_at', { useTz: true });
  });
  await knex.raw(`UPDATE waitlist_entries SET confirmed_at = created_at`);
  await knex.raw('ALTER TABLE waitlist_entries DROP CONSTRAINT waitlist_entries_state_check');
  await knex.raw(
    `ALTER TABLE waitlist_entries ADD CONSTRAINT waitlist_entries_state_check
       CHECK (state IN ('UNCONFIRMED','LAPSED','WAITING','OFFERED','CLAIMED','EXPIRED','LEFT','REMOVED'))`,
  );
  await knex.raw(`CREATE INDEX waitlist_entries_unconfirmed_idx ON waitlist_entries (created_at) WHERE state = 'UNCONFIRMED'`);
}

/** Entries that never came on a list are taken off it (LEFT) first: the older states have no name for them. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS waitlist_entries_unconfirmed_idx');
  await knex.raw('ALTER TABLE waitlist_entries DROP CONSTRAINT waitlist_entries_state_check');
  await knex.raw(`UPDATE waitlist_entries SET state = 'LEFT' WHERE state IN ('UNCONFIRMED','LAPSED')`);
  await knex.raw(
    `ALTER TABLE waitlist_entries ADD CONSTRAINT waitlist_entries_state_check
       CHECK (state IN ('WAITING','OFFERED','CLAIMED','EXPIRED','LEFT','REMOVED'))`,
  );
  await knex.schema.alterTable('waitlist_entries', (t) => {
    t.dropColumn('confirmed_at');
  });
}
