import type { Knex } from 'knex';

/**
 * A ticket type may have places of its own inside the event's capacity (`"capacity"` on a tier). They are counted
 * as the event's are, under the event's lock: attendees of PENDING and PAID registrations (their `attendees`),
 * plus what open card checkouts hold, plus open offers to entries waiting for that type.
 * - `checkout_sessions.tier_places`: the places of each capped type a checkout holds while open and unexpired
 *   (a map from tier id to places; `{}` for none). Its payload is encrypted, so the count cannot read its attendees.
 * - `waitlist_entries.tier`: the ticket type an entry waits for; null for any.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.jsonb('tier_places').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
  });
  await knex.schema.alterTable('waitlist_entries', (t) => {
    t.text('tier');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('waitlist_entries', (t) => {
    t.dropColumn('tier');
  });
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.dropColumn('tier_places');
  });
}
