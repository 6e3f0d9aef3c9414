import type { AppContext } from '../context.js';
import { moneyFormatter } from '../money-format.js';
import { nextUnmetStep } from '../registrations/balance-terms.js';
import { scheduleOf } from '../registrations/deposits.js';
import { paymentReference } from '../registrations/reference.js';

/** A balance past a due date of its schedule, as the monthly digest lists it. */
export interface OverdueBalanceEntry {
  reference: string;
  contactName: string;
  eventTitle: string;
  balance: string;
  /** The unmet due date, YYYY-MM-DD. */
  dueOn: string;
}

/**
 * PENDING registrations paying in parts whose first unmet due date is before `today` (church-local), on
 * events that have not started: what `registrations balances --overdue` lists for a schedule, across events.
 */
export async function overdueBalances(ctx: Pick<AppContext, 'db' | 'config' | 'clock'>, today: string): Promise<OverdueBalanceEntry[]> {
  const rows = await ctx.db('registrations as r')
    .join('events as e', 'e.id', 'r.event_id')
    .join('registration_money as m', 'm.registration_id', 'r.id')
    .where('r.status', 'PENDING')
    .where('m.balance_minor', '>', 0)
    .whereNull('e.deleted_at')
    .where('e.starts_at', '>', ctx.clock.now())
    .whereExists((q) => q.from('registration_schedules as s').whereRaw('s.registration_id = r.id').whereRaw('s.due_on < ?::date', [today]))
    .orderBy([{ column: 'e.starts_at' }, { column: 'r.created_at' }])
    .select<Array<{ id: string; contact_name: string; title: string; balance_minor: number; paid_minor: number; credited_minor: number }>>(
      'r.id', 'r.contact_name', 'e.title', 'm.balance_minor', 'm.paid_minor', 'm.credited_minor',
    );
  const money = moneyFormatter(ctx.config.regional);
  const entries: OverdueBalanceEntry[] = [];
  for (const row of rows) {
    const schedule = await scheduleOf(ctx.db, row.id);
    const step = schedule && nextUnmetStep(schedule.steps, Number(row.paid_minor) + Number(row.credited_minor));
    if (!step || step.dueOn >= today) continue;
    entries.push({ reference: paymentReference(row.id), contactName: row.contact_name, eventTitle: row.title, balance: money(Number(row.balance_minor)), dueOn: step.dueOn });
  }
  return entries;
}
