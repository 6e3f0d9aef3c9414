import type { Knex } from 'knex';

/**
 * Questions per event (the event file's `questions`, validated there) and their answers.
 * A registration keeps its non-sensitive answers in `answers` (jsonb) and its sensitive ones,
 * date of birth included, as one encrypted JSON document in `sensitive_answers_enc`
 * (both shaped as RegistrationAnswers, src/registrations/answers.ts). The purge empties
 * `sensitive_answers_enc` and stamps `sensitive_purged_at` sensitiveRetentionDays after the event ends.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.jsonb('questions').notNullable().defaultTo(knex.raw(`'[]'::jsonb`));
    t.integer('sensitive_retention_days').notNullable().defaultTo(30);
    t.check('sensitive_retention_days BETWEEN 0 AND 3650', [], 'events_sensitive_retention_days_check');
  });
  await knex.schema.alterTable('registrations', (t) => {
    t.jsonb('answers').notNullable().defaultTo(knex.raw(`'{"registration":{},"attendees":[]}'::jsonb`));
    t.text('sensitive_answers_enc');
    t.timestamp('sensitive_purged_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registrations', (t) => {
    t.dropColumn('answers');
    t.dropColumn('sensitive_answers_enc');
    t.dropColumn('sensitive_purged_at');
  });
  await knex.schema.alterTable('events', (t) => {
    t.dropChecks(['events_sensitive_retention_days_check']);
    t.dropColumn('questions');
    t.dropColumn('sensitive_retention_days');
  });
}
