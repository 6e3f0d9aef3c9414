import type { Knex } from 'knex';
import { scheduleChosen } from '../payments/deposit-checkout.js';
import type { PaymentChoice } from '../registrations/balance-terms.js';
import { insertSchedule, type Schedule } from '../registrations/deposits.js';
import type { EventRecord } from '../registrations/event-record.js';

/**
 * A bank-transfer registration choosing the deposit (or instalments): its schedule, fixed in the
 * registration's own transaction. It is held unpaid as any bank registration until its first payment
 * arrives; from then its place is kept.
 */
export async function scheduleBankRegistration(
  trx: Knex.Transaction,
  event: EventRecord,
  choice: PaymentChoice | undefined,
  input: { registrationId: string; netMinor: number; attendees: number; today: string },
): Promise<Schedule | undefined> {
  const schedule = scheduleChosen(event, choice, input.netMinor, { attendees: input.attendees, today: input.today });
  if (schedule) await insertSchedule(trx, input.registrationId, schedule);
  return schedule;
}
