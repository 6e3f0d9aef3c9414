import { stringify } from 'csv-stringify/sync';
import { fromZonedTime } from 'date-fns-tz';
import { addDays, amountDueFor, nextUnmetStep } from '../../registrations/balance-terms.js';
import { scheduleOf } from '../../registrations/deposits.js';
import type { AppContext } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { heldUntil } from '../../payments/hold-release.js';
import { paymentReference } from '../../registrations/reference.js';
import type { RegistrationStatus } from '../../registrations/registrations.js';
import { helpOpenSql } from '../../registrations/help-requests.js';

/** One registration's money, as `registrations balances` lists it (minor units). */
export interface BalanceRow {
  reference: string;
  contactName: string;
  status: RegistrationStatus;
  totalMinor: number;
  /** Money the church holds for it (card, office payments, less refunds). */
  paidMinor: number;
  /** Help with the cost, net of reversals. */
  creditedMinor: number;
  /** total − paid − credited while PENDING, else 0. */
  balanceMinor: number;
  /** When what is owed is due: the unpaid hold's end where one applies, else the event's start; none when nothing is owed. */
  dueAt: Date | null;
  dueBecause: 'unpaid_hold' | 'event_start' | 'schedule' | null;
  /** Paying in parts (a schedule): the next unmet due date (church-local, YYYY-MM-DD; dueAt is the end of that day) and what it asks. */
  nextDueOn: string | null;
  nextDueMinor: number | null;
  /** Whole days since dueAt, when it is past and something is still owed. */
  overdueDays: number | null;
  /** The family asked to talk about help with the cost and the office has not decided: held, not due until then. */
  helpOpen: boolean;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Every live (PENDING or PAID) registration of the event that has something to pay, oldest first, with the
 * ledger's figures (the view registration_money). With `overdue`, only those owing past their due date.
 */
export async function listBalances(ctx: Pick<AppContext, 'db' | 'config' | 'clock'>, eventSlug: string, options: { overdue?: boolean } = {}): Promise<BalanceRow[]> {
  const event = await ctx.db('events').where({ slug: eventSlug }).first<{ id: string; starts_at: Date } | undefined>('id', 'starts_at');
  if (!event) throw new NotFoundError(`event "${eventSlug}"`, 'run `eventops events list --all` to see the slugs');
  const rows = await ctx.db('registrations as r')
    .join('registration_money as m', 'm.registration_id', 'r.id')
    .where('r.event_id', event.id)
    .whereIn('r.status', ['PENDING', 'PAID'])
    .where('r.total_minor', '>', 0)
    .orderBy([{ column: 'r.created_at' }, { column: 'r.id' }])
    .select<Array<{ id: string; contact_name: string; status: RegistrationStatus; total_minor: number; paid_minor: number; credited_minor: number; balance_minor: number; help_open: boolean }>>(
      'r.id',
      'r.contact_name',
      'r.status',
      'r.total_minor',
      'm.paid_minor',
      'm.credited_minor',
      'm.balance_minor',
      ctx.db.raw(`${helpOpenSql('r')} AS help_open`),
    );
  const now = ctx.clock.now();
  const listed: BalanceRow[] = [];
  for (const row of rows) {
    const balanceMinor = Number(row.balance_minor);
    const hold = balanceMinor > 0 ? await heldUntil(ctx.db, row.id, ctx.config.regional.timeZone) : undefined;
    const next = balanceMinor > 0 && !hold ? await nextScheduledDue(ctx, row.id, balanceMinor, Number(row.paid_minor) + Number(row.credited_minor)) : undefined;
    const dueAt = balanceMinor > 0 ? (hold ?? next?.dueAt ?? event.starts_at) : null;
    const overdueDays = dueAt && dueAt < now ? Math.floor((now.getTime() - dueAt.getTime()) / DAY_MS) : null;
    listed.push({
      reference: paymentReference(row.id),
      contactName: row.contact_name,
      status: row.status,
      totalMinor: Number(row.total_minor),
      paidMinor: Number(row.paid_minor),
      creditedMinor: Number(row.credited_minor),
      balanceMinor,
      dueAt,
      dueBecause: dueAt === null ? null : hold ? 'unpaid_hold' : next ? 'schedule' : 'event_start',
      nextDueOn: next?.dueOn ?? null,
      nextDueMinor: next?.dueMinor ?? null,
      overdueDays,
      helpOpen: row.help_open,
    });
  }
  return options.overdue ? listed.filter((row) => row.overdueDays !== null) : listed;
}

/** The first unmet step of a registration's schedule: its day, the end of that day (church-local), and what it asks. */
async function nextScheduledDue(
  ctx: Pick<AppContext, 'db' | 'config'>,
  registrationId: string,
  balanceMinor: number,
  settledMinor: number,
): Promise<{ dueOn: string; dueAt: Date; dueMinor: number } | undefined> {
  const schedule = await scheduleOf(ctx.db, registrationId);
  const step = schedule && nextUnmetStep(schedule.steps, settledMinor);
  if (!step) return undefined;
  return {
    dueOn: step.dueOn,
    dueAt: fromZonedTime(`${addDays(step.dueOn, 1)}T00:00:00`, ctx.config.regional.timeZone),
    dueMinor: amountDueFor(step, settledMinor, balanceMinor),
  };
}

/** CSV of the balances (amounts as plain numbers in the currency's units), through the export's CSV library, formulas escaped. */
export function balancesCsv(rows: BalanceRow[], plain: (minor: number) => string, minute: (date: Date) => string): string {
  return stringify(
    rows.map((row) => [
      row.reference,
      row.contactName,
      row.status,
      plain(row.totalMinor),
      plain(row.paidMinor),
      plain(row.creditedMinor),
      plain(row.balanceMinor),
      row.dueAt ? minute(row.dueAt) : '',
      row.dueBecause ?? '',
      row.nextDueOn ?? '',
      row.nextDueMinor === null ? '' : plain(row.nextDueMinor),
      row.overdueDays === null ? '' : String(row.overdueDays),
    ]),
    { header: true, columns: ['reference', 'contact', 'status', 'total', 'paid', 'credited', 'balance', 'due', 'due_because', 'next_due_on', 'next_due', 'overdue_days'], escape_formulas: true, bom: true },
  );
}
