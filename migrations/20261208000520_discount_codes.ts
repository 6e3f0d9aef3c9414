import type { Knex } from 'knex';

/**
 * Codes a church gives out (`eventops codes create`): a percent or amount off, or a price for a tier, or a hidden
 * tier revealed; limited by uses, a last day and tiers. A code is unique per event whatever its case.
 * A use is one registration: uses are never stored as a counter but counted live, under the event's lock, from the
 * registrations that name the code (PENDING or PAID) and the card checkouts holding it (open and unexpired), so a
 * cancelled or expired registration or checkout gives its use back by its state alone.
 * - `registrations.code_id` / `code_discount_minor`: the code used and what it took off, fixed with the price.
 * - `checkout_sessions.code_id`: the code a new registration's checkout holds a use of.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('discount_codes', (t) => {
    t.uuid('id').primary().defaultTo(knex.raw('gen_random_uuid()'));
    t.uuid('event_id').notNullable().references('id').inTable('events').onDelete('CASCADE');
    t.text('code').notNullable();
    t.decimal('percent', 5, 2);
    t.integer('amount_minor');
    t.jsonb('tier_prices');
    t.integer('max_uses');
    t.date('valid_until');
    t.jsonb('tiers');
    t.text('reveals');
    t.text('note');
    t.text('created_by').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('disabled_at', { useTz: true });
    t.text('disabled_by');
    t.check('(percent IS NULL OR (percent > 0 AND percent <= 100))', [], 'discount_codes_percent_check');
    t.check('(amount_minor IS NULL OR amount_minor > 0)', [], 'discount_codes_amount_check');
    t.check('(max_uses IS NULL OR max_uses >= 1)', [], 'discount_codes_max_uses_check');
    t.check(
      '((percent IS NOT NULL)::int + (amount_minor IS NOT NULL)::int + (tier_prices IS NOT NULL)::int <= 1)',
      [],
      'discount_codes_one_effect_check',
    );
  });
  await knex.raw('CREATE UNIQUE INDEX discount_codes_event_code_unique ON discount_codes (event_id, lower(code))');
  await knex.schema.alterTable('registrations', (t) => {
    t.uuid('code_id').references('id').inTable('discount_codes');
    t.integer('code_discount_minor').notNullable().defaultTo(0);
  });
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.uuid('code_id').references('id').inTable('discount_codes');
  });
  await knex.raw('CREATE INDEX registrations_code_id_index ON registrations (code_id) WHERE code_id IS NOT NULL');
  await knex.raw('CREATE INDEX checkout_sessions_code_id_index ON checkout_sessions (code_id) WHERE code_id IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkout_sessions', (t) => {
    t.dropColumn('code_id');
  });
  await knex.schema.alterTable('registrations', (t) => {
    t.dropColumn('code_discount_minor');
    t.dropColumn('code_id');
  });
  await knex.schema.dropTable('discount_codes');
}
