import type { Knex } from 'knex';

/**
 * A waiting list per event. An entry waits in `position` order; an offer holds its places
 * (state OFFERED, counted as taken by every seat count) until it is claimed through the form,
 * expires, or the office removes it. `offer_seq` is raised by every offer, and a claim link
 * names the offer it was made for, so a link from an earlier offer never claims a later one.
 * Contact details are encrypted like registrations'; `email_hash` is the lookup hash of the
 * canonical mailbox, unique among the live (WAITING, OFFERED) entries of one event.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.boolean('waitlist_enabled').notNullable().defaultTo(false);
    t.integer('waitlist_offer_hours').notNullable().defaultTo(24);
    t.check('waitlist_offer_hours BETWEEN 1 AND 168', [], 'events_waitlist_offer_hours_check');
  });

  await knex.schema.createTable('waitlist_entries', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('event_id').notNullable().references('events.id');
    t.text('name_enc').notNullable();
    t.text('email_enc').notNullable();
    t.text('email_hash').notNullable();
    t.text('mobile_enc');
    t.integer('places').notNullable();
    t.text('state').notNullable().defaultTo('WAITING');
    // Offers made to entries behind this one while it waited: at WAITLIST_SKIP_LIMIT it blocks them.
    t.integer('skips').notNullable().defaultTo(0);
    t.integer('offer_seq').notNullable().defaultTo(0);
    t.timestamp('offered_at', { useTz: true });
    t.timestamp('offer_expires_at', { useTz: true });
    t.uuid('registration_id').references('registrations.id');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.check('places > 0', [], 'waitlist_entries_places_check');
    t.check(`state IN ('WAITING','OFFERED','CLAIMED','EXPIRED','LEFT','REMOVED')`, [], 'waitlist_entries_state_check');
    t.check(`state <> 'OFFERED' OR offer_expires_at IS NOT NULL`, [], 'waitlist_entries_offer_expiry_check');
  });
  await knex.raw('ALTER TABLE waitlist_entries ADD COLUMN position bigint GENERATED ALWAYS AS IDENTITY');
  await knex.raw(
    `CREATE UNIQUE INDEX waitlist_entries_live_mailbox_idx ON waitlist_entries (event_id, email_hash) WHERE state IN ('WAITING','OFFERED')`,
  );
  await knex.raw(`CREATE INDEX waitlist_entries_live_idx ON waitlist_entries (event_id, position) WHERE state IN ('WAITING','OFFERED')`);

  await knex.schema.createTable('waitlist_history', (t) => {
    t.bigIncrements('id');
    t.uuid('entry_id').notNullable().references('waitlist_entries.id');
    t.text('action').notNullable();
    t.jsonb('changes').notNullable().defaultTo('{}');
    t.text('note');
    t.text('actor').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['entry_id', 'id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('waitlist_history');
  await knex.schema.dropTableIfExists('waitlist_entries');
  await knex.schema.alterTable('events', (t) => {
    t.dropChecks(['events_waitlist_offer_hours_check']);
    t.dropColumn('waitlist_enabled');
    t.dropColumn('waitlist_offer_hours');
  });
}
