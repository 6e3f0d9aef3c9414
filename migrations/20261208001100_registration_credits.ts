import type { Knex } from 'knex';

/**
 * Help with the cost: a credit from a named fund (a scholarship) reduces what a registration owes
 * without being money received, and a reversal row takes one back (never a delete). With
 * registration_payments and registration_refunds it makes one ledger; the view registration_money
 * derives every registration's figures from it, so the running sum registrations.office_paid_minor
 * (the same money stored twice) goes.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('registration_credits', (t) => {
    t.bigIncrements('id');
    t.uuid('registration_id').notNullable().references('registrations.id');
    t.text('kind').notNullable();
    t.text('fund').notNullable();
    t.integer('amount_minor').notNullable();
    // A reversal names the credit it takes back, once.
    t.bigInteger('reverses_id').unique().references('registration_credits.id');
    t.text('note');
    t.text('recorded_by').notNullable();
    t.timestamp('recorded_at', { useTz: true }).notNullable();
    t.check('amount_minor > 0', [], 'registration_credits_amount_check');
    t.check(`(kind = 'credit' AND reverses_id IS NULL) OR (kind = 'reversal' AND reverses_id IS NOT NULL)`, [], 'registration_credits_kind_check');
    t.check(`length(fund) BETWEEN 1 AND 200`, [], 'registration_credits_fund_check');
    t.index(['registration_id']);
  });
  await knex.raw(CREATE_VIEW);
  await knex.schema.alterTable('registrations', (t) => t.dropColumn('office_paid_minor'));
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('registrations', (t) => t.integer('office_paid_minor').notNullable().defaultTo(0));
  await knex.raw(
    `UPDATE registrations r SET office_paid_minor = s.paid
       FROM (SELECT registration_id, SUM(amount_minor)::int AS paid FROM registration_payments GROUP BY registration_id) s
      WHERE s.registration_id = r.id`,
  );
  await knex.raw('DROP VIEW registration_money');
  await knex.schema.dropTable('registration_credits');
}

/**
 * Per registration, minor units: what the office received, paid back, and credited (net of reversals);
 * paid = money the church holds for it: Σpayments − Σrefunds, except that a card payment (one payment of
 * the whole total, kept on the registration, never a row) or a registration PAID with no office rows at all
 * counts its total; nothing once a card refund or dispute took it back. outstanding = total − paid −
 * credited, which is total − Σpayments + Σrefunds − Σcredits + Σreversals whenever the office's rows made
 * it; balance = outstanding while PENDING, else 0 (nobody owes for a paid or cancelled registration).
 */
const CREATE_VIEW = `CREATE VIEW registration_money AS
SELECT r.id AS registration_id, r.event_id, r.status, r.total_minor,
       p.office_paid_minor, f.refunded_minor, c.credited_minor, paid.paid_minor,
       r.total_minor - paid.paid_minor - c.credited_minor AS outstanding_minor,
       CASE WHEN r.status = 'PENDING' THEN r.total_minor - paid.paid_minor - c.credited_minor ELSE 0 END AS balance_minor
  FROM registrations r
  CROSS JOIN LATERAL (SELECT COALESCE(SUM(amount_minor), 0)::int AS office_paid_minor FROM registration_payments WHERE registration_id = r.id) p
  CROSS JOIN LATERAL (SELECT COALESCE(SUM(amount_minor), 0)::int AS refunded_minor FROM registration_refunds WHERE registration_id = r.id) f
  CROSS JOIN LATERAL (SELECT COALESCE(SUM(CASE WHEN kind = 'credit' THEN amount_minor ELSE -amount_minor END), 0)::int AS credited_minor,
                             COUNT(*) AS credit_rows
                        FROM registration_credits WHERE registration_id = r.id) c
  CROSS JOIN LATERAL (SELECT CASE WHEN r.cancel_reason IN ('refund', 'dispute') THEN 0
                                  ELSE CASE WHEN r.paid_at IS NOT NULL AND (r.payment_method = 'card' OR (p.office_paid_minor = 0 AND c.credit_rows = 0))
                                            THEN r.total_minor ELSE p.office_paid_minor END - f.refunded_minor
                             END AS paid_minor) paid`;
