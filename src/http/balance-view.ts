import type { AppConfig } from '../config/types.js';
import type { Db } from '../db/connect.js';
import { balanceStateOf, paysInParts, type BalanceState } from '../payments/balance-checkout.js';
import { eventFromRow, type EventRecord, type EventRow } from '../registrations/event-record.js';
import { moneyFormatter } from '../money-format.js';

type Regional = Pick<AppConfig['regional'], 'locale' | 'currency'>;

/** The family's view of a registration paying in parts: what was paid, the help, the balance and its dates. */
export interface BalanceSectionView {
  depositPaid: boolean;
  paid: string;
  credited?: string;
  balance: string;
  /** Each payment after the deposit: its date, what it asks, and whether it is met. */
  schedule: Array<{ on: string; amount: string; met: boolean }>;
  nextDue?: { on: string; amount: string };
  /** The pay form (posting to pay-now) while card payment is possible. Amounts as typed, in the currency's main unit. */
  payForm?: { action: string; token: string; value: string; min: string; max: string; step: string };
}

export async function eventRecordOf(db: Db, eventId: string): Promise<EventRecord> {
  return eventFromRow((await db('events').where({ id: eventId }).first()) as EventRow);
}

/** The balance section, or undefined for a registration paying its whole total in one payment. */
export async function balanceSection(
  db: Db,
  regional: Regional,
  input: {
    registrationId: string;
    event: EventRecord;
    pending: boolean;
    /** leastByCard: the least part a card payment can be for (the provider's minimum, the card fee included). */
    payForm?: { action: string; token: string; leastByCard?: number };
  },
): Promise<BalanceSectionView | undefined> {
  const state = await balanceStateOf(db, input.registrationId, input.event);
  if (!paysInParts(state)) return undefined;
  const money = moneyFormatter(regional);
  const day = calendarDay(regional.locale);
  const settled = state.money.paidMinor + state.money.creditedMinor;
  const steps = state.schedule?.steps ?? [];
  const later = steps.filter((step) => step.seq > 0);
  const next = input.pending ? later.find((step) => settled < step.settledTargetMinor) : undefined;
  const balance = input.pending ? Math.max(state.money.balanceMinor, 0) : 0;
  return {
    depositPaid: steps[0] !== undefined && settled >= steps[0].settledTargetMinor,
    paid: money(state.money.paidMinor),
    ...(state.money.creditedMinor > 0 ? { credited: money(state.money.creditedMinor) } : {}),
    balance: money(balance),
    schedule: later.map((step, index) => ({
      on: day(step.dueOn),
      amount: money(step.settledTargetMinor - (index === 0 ? (steps[0]?.settledTargetMinor ?? 0) : (later[index - 1]?.settledTargetMinor ?? 0))),
      met: settled >= step.settledTargetMinor,
    })),
    ...(next && state.dueNowMinor !== undefined ? { nextDue: { on: day(next.dueOn), amount: money(Math.min(next.settledTargetMinor - settled, balance)) } } : {}),
    ...(input.payForm && balance > 0
      ? { payForm: { action: input.payForm.action, token: input.payForm.token, ...payFormAmounts(regional, state, balance, input.payForm.leastByCard) } }
      : {}),
  };
}

/**
 * The pay form's amount: the instalment due (or the balance), at least the minimum (or what is due), at most the
 * balance; never below what one card payment can be for (`leastByCard`), so the form does not offer a part the
 * provider would refuse (an instalment due below it defaults to the balance).
 */
function payFormAmounts(regional: Regional, state: BalanceState, balance: number, leastByCard = 0): { value: string; min: string; max: string; step: string } {
  const digits = fractionDigits(regional);
  const major = (minor: number) => (minor / 10 ** digits).toFixed(digits);
  const dueNow = state.dueNowMinor && state.dueNowMinor > 0 ? state.dueNowMinor : balance;
  const due = dueNow < leastByCard ? balance : dueNow;
  const min = Math.min(balance, Math.max(state.minimumMinor ?? Math.min(due, balance), leastByCard));
  return { value: major(due), min: major(min), max: major(balance), step: digits === 0 ? '1' : (1 / 10 ** digits).toFixed(digits) };
}

/** An amount typed in the currency's main unit ("35", "35.5", "35.50") as minor units; undefined when it is not one. */
export function minorFromTyped(regional: Regional, typed: string): number | undefined {
  const digits = fractionDigits(regional);
  const match = /^\s*(\d{1,9})(?:[.,](\d+))?\s*$/.exec(typed);
  if (!match) return undefined;
  const fraction = match[2] ?? '';
  if (fraction.length > digits) return undefined;
  return Number(match[1]) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
}

function fractionDigits(regional: Regional): number {
  return new Intl.NumberFormat(regional.locale, { style: 'currency', currency: regional.currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

/** A calendar day (YYYY-MM-DD, no time zone) as the emails write it. */
export function calendarDay(locale: string): (day: string) => string {
  const format = new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' });
  return (day) => format.format(new Date(`${day}T00:00:00Z`));
}
