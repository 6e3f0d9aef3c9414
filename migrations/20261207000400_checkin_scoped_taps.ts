import type { Knex } from 'knex';

/**
 * Check-in taps scoped to their link, and flagged when out of the event's days. `checkin_nonces`: a tap's id is
 * unique per link (its key is the link and the id), no longer across every link and event, so one link's page can
 * never claim, or be refused, an id another link sent. `checkin_log.outside_event_days` and the state row's
 * `checked_in_outside_event_days`/`checked_out_outside_event_days`: the tap's time fell outside the event's days
 * (its first to its last calendar day in APP_TIMEZONE); it is recorded all the same, and `registrations show` and
 * `export` say so.
 */
export async function up(knex: Knex): Promise<void> {
  // Only the page sends tap ids, always with its link; a row without one (none are written) would block the key.
  await knex('checkin_nonces').whereNull('link_id').delete();
  await knex.raw('ALTER TABLE checkin_nonces DROP CONSTRAINT checkin_nonces_pkey');
  await knex.raw('ALTER TABLE checkin_nonces ALTER COLUMN link_id SET NOT NULL');
  await knex.raw('ALTER TABLE checkin_nonces ADD CONSTRAINT checkin_nonces_pkey PRIMARY KEY (link_id, id)');
  await knex.schema.alterTable('checkin_log', (t) => {
    t.boolean('outside_event_days').notNullable().defaultTo(false);
  });
  await knex.schema.alterTable('attendee_checkins', (t) => {
    t.boolean('checked_in_outside_event_days').notNullable().defaultTo(false);
    t.boolean('checked_out_outside_event_days').notNullable().defaultTo(false);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('attendee_checkins', (t) => {
    t.dropColumn('checked_in_outside_event_days');
    t.dropColumn('checked_out_outside_event_days');
  });
  await knex.schema.alterTable('checkin_log', (t) => {
    t.dropColumn('outside_event_days');
  });
  // One row per id again: of an id two links sent, the earlier stays (each one's tap was recorded already).
  await knex.raw(`DELETE FROM checkin_nonces a USING checkin_nonces b
                  WHERE a.id = b.id AND (a.received_at, a.link_id::text) > (b.received_at, b.link_id::text)`);
  await knex.raw('ALTER TABLE checkin_nonces DROP CONSTRAINT checkin_nonces_pkey');
  await knex.raw('ALTER TABLE checkin_nonces ALTER COLUMN link_id DROP NOT NULL');
  await knex.raw('ALTER TABLE checkin_nonces ADD CONSTRAINT checkin_nonces_pkey PRIMARY KEY (id)');
}
