import { z } from 'zod';

/**
 * An event's balance terms (the event file's deposit, balanceDueAt, minimumPayment, instalments and
 * overdue keys, stored together as events.balance_terms): how a registration may pay in parts, and what
 * happens when a balance is late. Amounts in minor units; dates are church-local calendar days.
 */
export interface BalanceTerms {
  deposit: { perAttendee: number } | { perRegistration: number };
  /** The day the whole balance is due (by its end, church-local). */
  balanceDueAt: string;
  /** The least a part payment by card may be; null: only the whole balance (or the instalment due). */
  minimumPayment: number | null;
  /** Payments after the deposit a family may choose to spread the balance over; null: no instalments. */
  instalments: { count: number } | null;
  /** What follows an overdue balance: the office's alert (always), and with cancel, cancelling N days after. */
  overdue: 'alert' | { cancel: { afterDays: number } };
}

export type PaymentChoice = 'full' | 'deposit' | 'instalments';

const MAX_MINOR = 100_000_000;
const amount = z.int({ error: 'an integer amount in minor units' }).min(1, { error: 'at least 1' }).max(MAX_MINOR, { error: `at most ${MAX_MINOR}` });
const day = z
  .string({ error: 'a date, e.g. 2027-05-01' })
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'a date written yyyy-mm-dd, e.g. 2027-05-01', abort: true })
  .refine((value) => new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) === value, { error: 'a date that exists on the calendar' });

/** The event file's keys, each strict (a misspelt key is refused by name); null clears on update. */
export const balanceTermsKeys = {
  deposit: z
    .union([z.strictObject({ perAttendee: amount }), z.strictObject({ perRegistration: amount })], {
      error: 'an object with one key: {"perAttendee": 5000} or {"perRegistration": 10000}',
    })
    .nullable()
    .optional(),
  balanceDueAt: day.nullable().optional(),
  minimumPayment: amount.nullable().optional(),
  instalments: z
    .strictObject({ count: z.int({ error: 'a whole number of payments' }).min(2, { error: 'at least 2' }).max(12, { error: 'at most 12' }) })
    .nullable()
    .optional(),
  overdue: z
    .union([
      z.literal('alert'),
      z.strictObject({
        cancel: z.strictObject({ afterDays: z.int({ error: 'a whole number of days' }).min(1, { error: 'at least 1' }).max(365, { error: 'at most 365' }) }),
      }),
    ], { error: '"alert", or {"cancel": {"afterDays": N}}' })
    .nullable()
    .optional(),
};

export const BALANCE_TERM_KEYS = ['deposit', 'balanceDueAt', 'minimumPayment', 'instalments', 'overdue'] as const;

export interface BalanceTermsInFile {
  deposit?: BalanceTerms['deposit'] | null;
  balanceDueAt?: string | null;
  minimumPayment?: number | null;
  instalments?: { count: number } | null;
  overdue?: BalanceTerms['overdue'] | null;
}

/**
 * The keys as one set of terms, with every problem across them: a deposit needs its balanceDueAt (before
 * the event's start) and the other keys need a deposit. undefined: the file gives none of the keys
 * (an update keeps what is stored); null: no terms.
 */
export function balanceTermsOf(file: BalanceTermsInFile, startsAt: Date): { terms: BalanceTerms | null | undefined; problems: Array<{ path: string; message: string }> } {
  const given = BALANCE_TERM_KEYS.filter((key) => file[key] !== undefined);
  if (given.length === 0) return { terms: undefined, problems: [] };
  const problems: Array<{ path: string; message: string }> = [];
  if (!file.deposit) {
    for (const key of given.filter((k) => k !== 'deposit' && file[k] !== null)) problems.push({ path: key, message: 'only with a "deposit"' });
    return { terms: null, problems };
  }
  if (!file.balanceDueAt) problems.push({ path: 'balanceDueAt', message: 'the day the balance is due, e.g. "2027-05-01" (a deposit needs one)' });
  else if (new Date(`${file.balanceDueAt}T00:00:00Z`).getTime() >= startsAt.getTime() - 24 * 60 * 60_000) {
    problems.push({ path: 'balanceDueAt', message: 'a day before the event starts' });
  }
  if (problems.length > 0) return { terms: undefined, problems };
  return {
    terms: {
      deposit: file.deposit,
      balanceDueAt: file.balanceDueAt as string,
      minimumPayment: file.minimumPayment ?? null,
      instalments: file.instalments ?? null,
      overdue: file.overdue ?? 'alert',
    },
    problems,
  };
}

/** The deposit for a registration of `attendees` costing `total`: never more than the total (at or below it, the total is paid). */
export function depositFor(terms: BalanceTerms, attendees: number, total: number): number {
  const deposit = 'perAttendee' in terms.deposit ? terms.deposit.perAttendee * attendees : terms.deposit.perRegistration;
  return Math.min(deposit, total);
}

/** Whether a registration made on `today` may choose to pay a deposit: its total is above the deposit, and the balance is not yet due. */
export function depositOffered(terms: BalanceTerms | null, attendees: number, total: number, today: string): terms is BalanceTerms {
  return terms !== null && depositFor(terms, attendees, total) < total && today < terms.balanceDueAt;
}

/** One due date of a registration's schedule: what must be settled (paid + credited) by the end of `dueOn`. */
export interface ScheduleStep {
  seq: number;
  dueOn: string;
  settledTargetMinor: number;
}

/**
 * The schedule fixed at registration: the deposit due on the day of registering, then the balance due on
 * balanceDueAt, or with instalments `count` payments due evenly between the day after registering and
 * balanceDueAt (the last on it), each an equal share of the balance (any odd minor unit in the last).
 */
export function scheduleFor(terms: BalanceTerms, choice: Exclude<PaymentChoice, 'full'>, input: { attendees: number; total: number; today: string }): ScheduleStep[] {
  const deposit = depositFor(terms, input.attendees, input.total);
  const rest = input.total - deposit;
  const steps: ScheduleStep[] = [{ seq: 0, dueOn: input.today, settledTargetMinor: deposit }];
  const count = choice === 'instalments' && terms.instalments ? terms.instalments.count : 1;
  const span = daysBetween(input.today, terms.balanceDueAt);
  for (let k = 1; k <= count; k += 1) {
    const dueOn = k === count ? terms.balanceDueAt : addDays(input.today, Math.max(1, Math.round((span * k) / count)));
    steps.push({ seq: k, dueOn, settledTargetMinor: deposit + Math.floor((rest * k) / count) });
  }
  // Two steps on one day (a short span) would ask twice on that day: the later target stands for both.
  return steps.filter((step, index) => steps[index + 1]?.dueOn !== step.dueOn || index === steps.length - 1);
}

/** The first step not yet settled (settled = paid + credited), or none once the schedule is met. */
export function nextUnmetStep(steps: readonly ScheduleStep[], settledMinor: number): ScheduleStep | undefined {
  return steps.find((step) => settledMinor < step.settledTargetMinor);
}

/** What pays a step now: the rest of its target, never more than the balance left. */
export function amountDueFor(step: ScheduleStep, settledMinor: number, balanceMinor: number): number {
  return Math.max(0, Math.min(step.settledTargetMinor - settledMinor, balanceMinor));
}

export function addDays(day: string, days: number): string {
  const date = new Date(`${day}T00:00:00Z`);
  date.setUTCDate(date.getUTCDate() + days);
  return date.toISOString().slice(0, 10);
}

export function daysBetween(from: string, to: string): number {
  return Math.round((new Date(`${to}T00:00:00Z`).getTime() - new Date(`${from}T00:00:00Z`).getTime()) / (24 * 60 * 60_000));
}
