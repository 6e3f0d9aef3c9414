import type { Knex } from 'knex';

/**
 * `cardFee.percent` takes at most 4 decimals (the surcharge is computed exactly
 * from those digits). A value stored before that rule with more decimals failed
 * the check on every read and the default rate was charged instead, silently:
 * round it to 4 decimals, the nearest rate the rule allows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE app_settings
       SET value = to_jsonb(round((value #>> '{}')::numeric, 4)), updated_at = now()
     WHERE key = 'cardFee.percent'
       AND jsonb_typeof(value) = 'number'
       AND (value #>> '{}')::numeric >= 0 AND (value #>> '{}')::numeric < 10
       AND (value #>> '{}')::numeric <> round((value #>> '{}')::numeric, 4)`);
}

export async function down(): Promise<void> {
  // The digits dropped are not kept; nothing to undo.
}
