import type { Knex } from 'knex';

/**
 * Add-ons chosen (registrations/addons.ts): one row per unit, each belonging to a registration (a foreign key, so an
 * add-on can never stand alone) and, for a per-attendee one, to one of its attendees by position; the price is fixed
 * when it is made. Stock is never stored as a counter: it is counted live, under the event's lock, from the rows of
 * PENDING and PAID registrations and the units open card checkouts hold, so a cancelled, expired, refunded or
 * disputed registration gives its stock back by its state alone.
 * - `registration_addons.attendee_index`: the attendee's 0-based position in `registrations.attendees`; null for a
 *   per-registration add-on. A trigger refuses a position the registration does not have.
 * - `checkout_sessions.addon_units`: units of each stocked add-on a new registration's card checkout holds while it
 *   is open and unexpired (its payload is encrypted, so the count cannot read it); `{}` for none.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('registration_addons', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('registration_id').notNullable().references('id').inTable('registrations').onDelete('CASCADE');
    t.integer('attendee_index');
    t.text('addon_id').notNullable();
    t.text('option');
    t.integer('price_minor').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.check('(attendee_index IS NULL OR attendee_index >= 0)', [], 'registration_addons_attendee_index_check');
    t.check('(price_minor >= 0)', [], 'registration_addons_price_check');
    t.index(['registration_id']);
  });
  // Runs after the statement's rows are in, so a registration and its add-ons inserted in one statement pass.
  await knex.raw(`
    CREATE FUNCTION registration_addons_attendee_exists() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.attendee_index IS NOT NULL AND NOT EXISTS (
        SELECT 1 FROM registrations r WHERE r.id = NEW.registration_id AND NEW.attendee_index < r.attendee_count
      ) THEN
        RAISE EXCEPTION 'registration % has no attendee %', NEW.registration_id, NEW.attendee_index + 1 USING ERRCODE = 'foreign_key_violation';
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER registration_addons_attendee_exists AFTER INSERT OR UPDATE ON registration_addons
    FOR EACH ROW EXECUTE FUNCTION registration_addons_attendee_exists()`);
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.jsonb('addon_units').notNullable().defaultTo(knex.raw(`'{}'::jsonb`));
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.dropColumn('addon_units');
  });
  await knex.schema.dropTable('registration_addons');
  await knex.raw('DROP FUNCTION registration_addons_attendee_exists()');
}
