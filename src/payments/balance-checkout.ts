import type { Knex } from 'knex';
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

/**
 * What a pay-now checkout for a registration paying in parts charges (before its card fee), decided
 * under the registration's lock from the ledger (registration_money): never repriced, never more than
 * the balance left. A registration pays in parts once it has a schedule, an earlier payment or help with
 * the cost, or when a part is asked for. Any part may be paid that is the whole balance, the instalment
 * due now, or at least the event's minimumPayment; until the event starts (registration closing does not
 * stop it), then at the door. undefined: the whole-total payment of a registration with nothing settled.
 */
export async function balancePaymentDue(
  trx: Knex.Transaction,
  input: { registrationId: string; event: EventRecord; amountMinor: number | undefined; now: Date; timeZone: string },
): Promise<{ netMinor: number } | undefined> {
  const money = await registrationMoney(trx, input.registrationId);
  const schedule = await scheduleOf(trx, input.registrationId);
  const inParts = schedule !== undefined || money.officePaidMinor > 0 || money.creditedMinor > 0 || input.amountMinor !== undefined;
  if (!inParts) return undefined;
  if (input.now.getTime() >= input.event.startsAt.getTime()) {
    throw new BalancePaymentError('event_started', 'The event has started, so the balance can no longer be paid online; please pay it at the door.');
  }
  const balance = money.balanceMinor;
  if (balance <= 0) throw new BalancePaymentError('amount_refused', 'Nothing is owed on this registration.');
  const asked = input.amountMinor ?? balance;
  if (!partAllowed(asked, balance, money, schedule, input.event.balanceTerms?.minimumPayment ?? null)) {
    throw new BalancePaymentError('amount_refused', refusal(asked, balance, input.event.balanceTerms?.minimumPayment ?? null));
  }
  return { netMinor: asked };
}

/** The instalment (or deposit, or balance) a registration's schedule asks for now: what pays its first unmet step. */
export function instalmentDueNow(schedule: Schedule | undefined, money: Pick<RegistrationMoney, 'paidMinor' | 'creditedMinor' | 'balanceMinor'>): number | undefined {
  if (!schedule) return undefined;
  const settled = money.paidMinor + money.creditedMinor;
  const step = nextUnmetStep(schedule.steps, settled);
  return step ? amountDueFor(step, settled, money.balanceMinor) : undefined;
}

function partAllowed(asked: number, balance: number, money: RegistrationMoney, schedule: Schedule | undefined, minimum: number | null): boolean {
  if (!Number.isInteger(asked) || asked <= 0 || asked > balance) return false;
  if (asked === balance || asked === instalmentDueNow(schedule, money)) return true;
  // The minimum never asks for more than is left (a discount or help that made the balance smaller).
  return minimum !== null && asked >= Math.min(minimum, balance);
}

function refusal(asked: number, balance: number, minimum: number | null): string {
  if (asked > balance) return `That is more than the balance left (${balance} minor units); nothing was charged.`;
  return minimum === null
    ? 'Only the whole balance, or the instalment due, can be paid by card for this event; nothing was charged.'
    : `A part payment must be at least the event's minimum (${minimum} minor units); nothing was charged.`;
}
