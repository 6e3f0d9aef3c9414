import type { Knex } from 'knex';

/**
 * The roll on the day. `checkin_links`: links for volunteers (no accounts), only a SHA-256 of each token kept,
 * with a label, an expiry and a revocation. `attendee_checkins`: one state row per attendee (registration and
 * position in its attendees), changed by one statement each, so two volunteers checking in the same person at
 * once record one check-in. `checkin_log`: every check-in, undo and check-out, with its time and the link's label.
 * `checkin_nonces`: the ids of actions a page has sent, so an upload repeated after a lost answer counts once.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('checkin_links', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('event_id').notNullable().references('id').inTable('events').onDelete('CASCADE');
    t.text('label').notNullable();
    t.text('token_hash').notNullable().unique();
    t.boolean('can_take_payment').notNullable().defaultTo(false);
    t.text('created_by').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.text('revoked_by');
    t.index(['event_id']);
  });
  await knex.schema.createTable('attendee_checkins', (t) => {
    t.uuid('registration_id').notNullable().references('id').inTable('registrations').onDelete('CASCADE');
    t.integer('attendee_index').notNullable();
    t.uuid('event_id').notNullable().references('id').inTable('events').onDelete('CASCADE');
    t.timestamp('checked_in_at', { useTz: true });
    t.text('checked_in_by');
    t.timestamp('checked_out_at', { useTz: true });
    t.text('checked_out_by');
    /** Registered at the door (`registrations add --at-door`). */
    t.boolean('walk_in').notNullable().defaultTo(false);
    t.primary(['registration_id', 'attendee_index']);
    t.index(['event_id']);
  });
  await knex.schema.createTable('checkin_log', (t) => {
    t.bigIncrements('id');
    t.uuid('registration_id').notNullable().references('id').inTable('registrations').onDelete('CASCADE');
    t.integer('attendee_index').notNullable();
    t.text('action').notNullable();
    t.text('label').notNullable();
    t.uuid('link_id').references('id').inTable('checkin_links').onDelete('SET NULL');
    t.timestamp('at', { useTz: true }).notNullable();
    t.timestamp('recorded_at', { useTz: true }).notNullable();
    t.check(`action IN ('check_in', 'undo', 'check_out')`, [], 'checkin_log_action_check');
    t.index(['registration_id']);
  });
  await knex.schema.createTable('checkin_nonces', (t) => {
    t.uuid('id').primary();
    t.uuid('link_id').references('id').inTable('checkin_links').onDelete('CASCADE');
    t.timestamp('received_at', { useTz: true }).notNullable();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('checkin_nonces');
  await knex.schema.dropTable('checkin_log');
  await knex.schema.dropTable('attendee_checkins');
  await knex.schema.dropTable('checkin_links');
}
