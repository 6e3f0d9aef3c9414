import type { Knex } from 'knex';

/**
 * The registrant's own "Manage your registration" link: its token is signed over the registration's id and
 * manage_link_version, so raising the version (an email change, `registrations resend --new-link`) revokes every
 * link sent before. And the event's changes_close_at: until when a family may correct its details itself
 * (null: until the event starts).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registrations', (t) => {
    t.integer('manage_link_version').notNullable().defaultTo(1);
  });
  await knex.schema.alterTable('events', (t) => {
    t.timestamp('changes_close_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.dropColumn('changes_close_at');
  });
  await knex.schema.alterTable('registrations', (t) => {
    t.dropColumn('manage_link_version');
  });
}
