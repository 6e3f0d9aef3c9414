import type { Knex } from 'knex';

/**
 * Deposits, balances and instalments. An event's balance terms (deposit, balanceDueAt, minimumPayment,
 * instalments, overdue) are one JSON value. A card payment of part of a registration is a row of
 * registration_payments (method 'card', naming its checkout, unique: one checkout pays once), so every
 * payment of a registration paid in parts is one ledger row and the view registration_money sums them;
 * the old shape (one card payment of the whole total, kept on the registration) still counts its total
 * while a registration has no card rows. A registration's schedule is what it must have settled (paid +
 * credited) by each date; the reminders sent for it are recorded once each.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => t.jsonb('balance_terms'));
  await knex.raw('ALTER TABLE registration_payments DROP CONSTRAINT registration_payments_method_check');
  await knex.raw(`ALTER TABLE registration_payments ADD CONSTRAINT registration_payments_method_check CHECK (method IN ('bank','cash','other','card'))`);
  await knex.schema.alterTable('registration_payments', (t) => {
    t.uuid('checkout_session_id').unique().references('checkout_sessions.id');
    t.text('payment_intent_id');
    // The card fee charged with this payment: money received, never part of the registration's total.
    t.integer('surcharge_minor').notNullable().defaultTo(0);
    // A card payment refunded or disputed at the provider: kept as a row, no longer counted as paid.
    t.text('reversal');
    t.timestamp('reversed_at', { useTz: true });
    t.check(`(method = 'card') = (checkout_session_id IS NOT NULL)`, [], 'registration_payments_card_check');
    t.check(`reversal IS NULL OR (method = 'card' AND reversal IN ('refund','dispute') AND reversed_at IS NOT NULL)`, [], 'registration_payments_reversal_check');
    t.check('surcharge_minor >= 0', [], 'registration_payments_surcharge_check');
  });
  // A pay-now checkout for part of a balance (or the rest of one paid in parts): its completion records a ledger row.
  await knex.schema.alterTable('checkout_sessions', (t) => t.boolean('balance_part').notNullable().defaultTo(false));
  await knex.schema.createTable('registration_schedules', (t) => {
    t.uuid('registration_id').notNullable().references('registrations.id');
    // 0: the deposit (due the day it was registered); 1..n: the balance, or each instalment.
    t.integer('seq').notNullable();
    t.date('due_on').notNullable();
    // What must be settled (paid + credited) by due_on; the last is the registration's total.
    t.integer('settled_target_minor').notNullable();
    t.text('choice').notNullable();
    t.primary(['registration_id', 'seq']);
    t.check('settled_target_minor > 0', [], 'registration_schedules_target_check');
    t.check(`choice IN ('deposit','instalments')`, [], 'registration_schedules_choice_check');
  });
  await knex.schema.createTable('balance_reminders', (t) => {
    t.uuid('registration_id').notNullable().references('registrations.id');
    t.integer('seq').notNullable();
    t.text('kind').notNullable();
    t.timestamp('sent_at', { useTz: true }).notNullable();
    t.primary(['registration_id', 'seq', 'kind']);
    t.check(`kind IN ('before','on','overdue','cancelled')`, [], 'balance_reminders_kind_check');
  });
  await knex.raw('DROP VIEW registration_money');
  await knex.raw(createView(true));
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP VIEW registration_money');
  await knex.raw(createView(false));
  await knex.schema.dropTable('balance_reminders');
  await knex.schema.dropTable('registration_schedules');
  await knex.schema.alterTable('checkout_sessions', (t) => t.dropColumn('balance_part'));
  // Card rows have no place in the older ledger: their registrations keep the card payment on the row.
  await knex('registration_payments').where({ method: 'card' }).delete();
  await knex.schema.alterTable('registration_payments', (t) => {
    t.dropChecks(['registration_payments_card_check', 'registration_payments_surcharge_check', 'registration_payments_reversal_check']);
    t.dropColumn('reversal');
    t.dropColumn('reversed_at');
    t.dropColumn('checkout_session_id');
    t.dropColumn('payment_intent_id');
    t.dropColumn('surcharge_minor');
  });
  await knex.raw('ALTER TABLE registration_payments DROP CONSTRAINT registration_payments_method_check');
  await knex.raw(`ALTER TABLE registration_payments ADD CONSTRAINT registration_payments_method_check CHECK (method IN ('bank','cash','other'))`);
  await knex.schema.alterTable('events', (t) => t.dropColumn('balance_terms'));
}

/** registration_money as 20261208001100 made it, and (withCardRows) counting card rows instead of the whole total once there are any. */
function createView(withCardRows: boolean): string {
  const cardRows = withCardRows ? `, COUNT(*) FILTER (WHERE method = 'card') AS card_rows` : '';
  const wholeCard = withCardRows ? `(r.payment_method = 'card' AND p.card_rows = 0)` : `r.payment_method = 'card'`;
  return `CREATE VIEW registration_money AS
SELECT r.id AS registration_id, r.event_id, r.status, r.total_minor,
       p.office_paid_minor, f.refunded_minor, c.credited_minor, paid.paid_minor,
       r.total_minor - paid.paid_minor - c.credited_minor AS outstanding_minor,
       CASE WHEN r.status = 'PENDING' THEN r.total_minor - paid.paid_minor - c.credited_minor ELSE 0 END AS balance_minor
  FROM registrations r
  CROSS JOIN LATERAL (SELECT COALESCE(SUM(amount_minor)${withCardRows ? ' FILTER (WHERE reversal IS NULL)' : ''}, 0)::int AS office_paid_minor${cardRows} FROM registration_payments WHERE registration_id = r.id) p
  CROSS JOIN LATERAL (SELECT COALESCE(SUM(amount_minor), 0)::int AS refunded_minor FROM registration_refunds WHERE registration_id = r.id) f
  CROSS JOIN LATERAL (SELECT COALESCE(SUM(CASE WHEN kind = 'credit' THEN amount_minor ELSE -amount_minor END), 0)::int AS credited_minor,
                             COUNT(*) AS credit_rows
                        FROM registration_credits WHERE registration_id = r.id) c
  CROSS JOIN LATERAL (SELECT CASE WHEN r.cancel_reason IN ('refund', 'dispute') THEN 0
                                  ELSE CASE WHEN r.paid_at IS NOT NULL AND (${wholeCard} OR (p.office_paid_minor = 0 AND c.credit_rows = 0))
                                            THEN r.total_minor ELSE p.office_paid_minor END - f.refunded_minor
                             END AS paid_minor) paid`;
}
