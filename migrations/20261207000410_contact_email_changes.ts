import type { Knex } from 'knex';

/**
 * A contact email changed on the manage page takes effect only once the new address confirms it, and the old
 * address may undo it for a week after. `contact_email_changes`: one row per request, both addresses encrypted
 * (rotate-keys re-encrypts them). Pending until confirmed (by `confirm_by`), replaced by a later request, or
 * confirmed (`confirmed_at`), then undoable until `undo_until` (`undone_at` once undone).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contact_email_changes', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('registration_id').notNullable().references('id').inTable('registrations').onDelete('CASCADE');
    t.text('old_email_enc').notNullable();
    t.text('new_email_enc').notNullable();
    t.timestamp('requested_at', { useTz: true }).notNullable();
    t.timestamp('confirm_by', { useTz: true }).notNullable();
    t.timestamp('confirmed_at', { useTz: true });
    t.timestamp('undo_until', { useTz: true });
    t.timestamp('undone_at', { useTz: true });
    t.timestamp('replaced_at', { useTz: true });
    t.index(['registration_id']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contact_email_changes');
}
