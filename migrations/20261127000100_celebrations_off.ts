import type { Knex } from 'knex';

/**
 * A person's birthday and anniversary emails turned off: when, and how (`office`: by
 * `eventops people celebrations --off`; `unsubscribe`: by the member, from a link in one of
 * the emails), with the office's note. The people import never writes these columns, so
 * re-importing a file that still has the dates keeps the emails off.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('people', (t) => {
    t.timestamp('celebrations_off_at', { useTz: true });
    t.text('celebrations_off_by');
    t.text('celebrations_off_note');
    t.check(`celebrations_off_by IN ('office','unsubscribe')`, [], 'people_celebrations_off_by_check');
    t.check(
      `(celebrations_off_at IS NULL) = (celebrations_off_by IS NULL) AND (celebrations_off_note IS NULL OR celebrations_off_at IS NOT NULL)`,
      [],
      'people_celebrations_off_check',
    );
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('people', (t) => {
    t.dropChecks(['people_celebrations_off_check', 'people_celebrations_off_by_check']);
    t.dropColumns('celebrations_off_at', 'celebrations_off_by', 'celebrations_off_note');
  });
}
