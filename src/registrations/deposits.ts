import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';
import type { PaymentChoice, ScheduleStep } from './balance-terms.js';

/**
 * A registration's payment schedule (registration_schedules), fixed when it was made, and its card
 * payments as ledger rows (registration_payments, method 'card'). What is owed is always derived from
 * the ledger (registration_money); the schedule only says by when.
 */

export interface Schedule {
  choice: Exclude<PaymentChoice, 'full'>;
  steps: ScheduleStep[];
}

export async function insertSchedule(trx: Knex.Transaction | Db, registrationId: string, schedule: Schedule): Promise<void> {
  if (schedule.steps.length === 0) return;
  await trx('registration_schedules').insert(
    schedule.steps.map((step) => ({
      registration_id: registrationId,
      seq: step.seq,
      due_on: step.dueOn,
      settled_target_minor: step.settledTargetMinor,
      choice: schedule.choice,
    })),
  );
}

export async function scheduleOf(db: Db | Knex.Transaction, registrationId: string): Promise<Schedule | undefined> {
  const rows = await db('registration_schedules')
    .where({ registration_id: registrationId })
    .orderBy('seq')
    .select<Array<{ seq: number; due_on: string | Date; settled_target_minor: number; choice: Schedule['choice'] }>>('seq', db.raw(`to_char(due_on, 'YYYY-MM-DD') AS due_on`), 'settled_target_minor', 'choice');
  if (rows.length === 0) return undefined;
  return {
    choice: (rows[0] as { choice: Schedule['choice'] }).choice,
    steps: rows.map((row) => ({ seq: row.seq, dueOn: String(row.due_on), settledTargetMinor: row.settled_target_minor })),
  };
}

/** A card payment of part (or the rest) of a registration, recorded once per checkout (the unique checkout_session_id). */
export async function insertCardPayment(
  trx: Knex.Transaction,
  input: { registrationId: string; checkoutId: string; paymentIntentId: string | null; netMinor: number; surchargeMinor: number; now: Date },
): Promise<void> {
  await trx('registration_payments').insert({
    registration_id: input.registrationId,
    amount_minor: input.netMinor,
    surcharge_minor: input.surchargeMinor,
    method: 'card',
    checkout_session_id: input.checkoutId,
    payment_intent_id: input.paymentIntentId,
    note: null,
    recorded_by: 'card provider',
    recorded_at: input.now,
  });
}

/** Whether the registration has had any card payment recorded as a ledger row (a registration paying in parts). */
export async function hasCardRows(db: Db | Knex.Transaction, registrationId: string): Promise<boolean> {
  return Boolean(await db('registration_payments').where({ registration_id: registrationId, method: 'card' }).first('id'));
}
