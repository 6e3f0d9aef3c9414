import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';
import { AppError } from '../errors.js';
import { amountDueFor, nextUnmetStep } from '../registrations/balance-terms.js';
import { scheduleOf, type Schedule } from '../registrations/deposits.js';
import type { EventRecord } from '../registrations/event-record.js';
import { registrationMoney, type RegistrationMoney } from '../registrations/ledger.js';

/** A payment towards a balance refused: more than is owed, below the event's minimum, or after the event started. */
export class BalancePaymentError extends AppError {
  constructor(code: 'amount_refused' | 'event_started', message: string) {
    super(code, message, { httpStatus: 409 });
    this.name = 'BalancePaymentError';
  }
}

/** What a registration paying in parts owes, and what it may pay by card now. */
export interface BalanceState {
  money: RegistrationMoney;
  schedule: Schedule | undefined;
  /** What its schedule asks for now (the first unmet step, never more than the balance); undefined without a schedule. */
  dueNowMinor: number | undefined;
  /** The least part payment by card: the event's minimumPayment, never more than the balance; null: none is allowed. */
  minimumMinor: number | null;
}

export async function balanceStateOf(db: Db | Knex.Transaction, registrationId: string, event: Pick<EventRecord, 'balanceTerms'>): Promise<BalanceState> {
  const money = await registrationMoney(db, registrationId);
  const schedule = await scheduleOf(db, registrationId);
  const minimum = event.balanceTerms?.minimumPayment ?? null;
  return {
    money,
    schedule,
    dueNowMinor: instalmentDueNow(schedule, money),
    minimumMinor: minimum === null ? null : Math.min(minimum, Math.max(money.balanceMinor, 0)),
  };
}

/** Whether a registration pays in parts: it has a schedule, an earlier payment or help with the cost. */
export function paysInParts(state: BalanceState): boolean {
  return state.schedule !== undefined || state.money.officePaidMinor > 0 || state.money.creditedMinor > 0;
}

/**
 * What a pay-now checkout for a registration paying in parts charges (before its card fee), decided
 * under the registration's lock from the ledger (registration_money): never repriced, never more than
 * the balance left. A registration pays in parts once it has a schedule, an earlier payment or help with
 * the cost, or when a part is asked for. Any part may be paid that is the whole balance, the instalment
 * due now, or at least the event's minimumPayment; until the event starts (registration closing does not
 * stop it), then at the door. undefined: the whole-total payment of a registration with nothing settled.
 */
export async function balancePaymentDue(
  db: Db | Knex.Transaction,
  input: { registrationId: string; event: EventRecord; amountMinor: number | undefined; now: Date; money: (minor: number) => string },
): Promise<{ netMinor: number } | undefined> {
  const state = await balanceStateOf(db, input.registrationId, input.event);
  if (!paysInParts(state) && input.amountMinor === undefined) return undefined;
  if (input.now.getTime() >= input.event.startsAt.getTime()) {
    throw new BalancePaymentError('event_started', 'The event has started, so the balance can no longer be paid online; please pay it at the door.');
  }
  const balance = state.money.balanceMinor;
  if (balance <= 0) throw new BalancePaymentError('amount_refused', 'Nothing is owed on this registration.');
  const asked = input.amountMinor ?? balance;
  if (!partAllowed(asked, balance, state)) throw new BalancePaymentError('amount_refused', refusal(asked, balance, state.minimumMinor, input.money));
  return { netMinor: asked };
}

/** The instalment (or deposit, or balance) a registration's schedule asks for now: what pays its first unmet step. */
export function instalmentDueNow(schedule: Schedule | undefined, money: Pick<RegistrationMoney, 'paidMinor' | 'creditedMinor' | 'balanceMinor'>): number | undefined {
  if (!schedule) return undefined;
  const settled = money.paidMinor + money.creditedMinor;
  const step = nextUnmetStep(schedule.steps, settled);
  return step ? amountDueFor(step, settled, money.balanceMinor) : undefined;
}

function partAllowed(asked: number, balance: number, state: BalanceState): boolean {
  if (!Number.isInteger(asked) || asked <= 0 || asked > balance) return false;
  if (asked === balance || asked === state.dueNowMinor) return true;
  // The minimum never asks for more than is left (a discount or help that made the balance smaller).
  return state.minimumMinor !== null && asked >= state.minimumMinor;
}

function refusal(asked: number, balance: number, minimum: number | null, money: (minor: number) => string): string {
  if (asked > balance) return `That is more than the balance left (${money(balance)}); nothing was charged.`;
  return minimum === null
    ? 'Only the whole balance, or the instalment due, can be paid by card for this event; nothing was charged.'
    : `A part payment must be at least ${money(minimum)}; nothing was charged.`;
}
