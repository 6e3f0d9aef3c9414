import type { AppContext } from '../context.js';
import { scheduleChosen } from '../payments/deposit-checkout.js';
import type { PaymentChoice } from '../registrations/balance-terms.js';
import { insertSchedule } from '../registrations/deposits.js';
import type { EventRecord } from '../registrations/event-record.js';

/**
 * A bank-transfer registration choosing the deposit (or instalments): its schedule, fixed now. It is held
 * unpaid as any bank registration until its first payment arrives; from then its place is kept.
 */
export async function scheduleBankRegistration(
  ctx: Pick<AppContext, 'db'>,
  event: EventRecord,
  choice: PaymentChoice | undefined,
  outcome: { kind: 'registered'; registrationId: string; status: string; priced: { lines: unknown[]; total: number } } | { kind: 'checkout' },
  today: string,
): Promise<void> {
  if (outcome.kind !== 'registered' || outcome.status !== 'PENDING') return;
  const attendees = outcome.priced.lines.length > 0 ? await attendeeCount(ctx, outcome.registrationId) : 0;
  const schedule = scheduleChosen(event, choice, outcome.priced.total, { attendees, today });
  if (schedule) await insertSchedule(ctx.db, outcome.registrationId, schedule);
}

async function attendeeCount(ctx: Pick<AppContext, 'db'>, registrationId: string): Promise<number> {
  const row = await ctx.db('registrations').where({ id: registrationId }).first<{ attendee_count: number }>('attendee_count');
  return row?.attendee_count ?? 0;
}
