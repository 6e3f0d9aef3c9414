import type { Knex } from 'knex';

/**
 * A ticket's price may change by date (the event file's `prices`). A registration pays the prices of the
 * church-local day it was made on (or the office's `--price-at`), and keeps them: `priced_on` records that day
 * beside the amounts stored with it. Null for registrations made before schedules existed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registrations', (t) => {
    t.date('priced_on');
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registrations', (t) => {
    t.dropColumn('priced_on');
  });
}
