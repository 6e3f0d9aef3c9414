import type { Knex } from 'knex';
import { moneyFormatter } from '../money-format.js';
import { raiseOperationsAlert } from './alerts.js';
import { DEPOSIT_LINE_LABEL, PART_PAYMENT_LINE_LABEL, partPaymentLines } from './deposit-checkout.js';
import type { StagedRegistration } from './staging.js';
import type { StagingRow, WebhookContext } from './webhook/staging-rows.js';
import { insertCardPayment, insertSchedule, type Schedule } from '../registrations/deposits.js';
import { registrationMoney } from '../registrations/ledger.js';
import type { PricedLine } from '../registrations/pricing.js';

/**
 * The webhook's side of paying in parts: a deposit's new registration, and each pay-now checkout for part
 * of a balance, record one ledger row per card payment (registration_payments, method card, naming the
 * checkout) and never change the registration's total. It is PAID once nothing is owed.
 */

export interface PartPayment {
  lines: PricedLine[];
  /**
   * What the receipt says was paid in all and is left, counting this payment: read under the registration's lock
   * before its row is written, so the receipt can be rendered before the event's lock; recordPartPayment reads the
   * ledger again after the write, and the completion renders it again should the two differ.
   */
  receipt: { paidSoFarMinor: number; balanceLeftMinor: number };
}

/** A pay-now checkout opened for part of a balance (balance_part), with its receipt's lines; else undefined (the whole-total payment). */
export async function partPaymentOf(trx: Knex.Transaction, registrationId: string, claimed: StagingRow): Promise<PartPayment | undefined> {
  if (!claimed.balance_part) return undefined;
  const money = await registrationMoney(trx, registrationId);
  return {
    lines: partPaymentLines(PART_PAYMENT_LINE_LABEL, claimed.net_minor, claimed.surcharge_minor),
    receipt: { paidSoFarMinor: money.paidMinor + claimed.net_minor, balanceLeftMinor: Math.max(0, money.outstandingMinor - claimed.net_minor) },
  };
}

/** A new registration's deposit, as its receipt says it: the deposit paid, and the rest of its fixed total left. */
export function depositReceipt(staged: StagedRegistration, claimed: Pick<StagingRow, 'net_minor'>): PartPayment['receipt'] | undefined {
  if (!staged.schedule) return undefined;
  return { paidSoFarMinor: claimed.net_minor, balanceLeftMinor: Math.max(0, staged.priced.net - claimed.net_minor) };
}

/** A deposit's receipt lines: the deposit and its card fee. */
export function depositLines(claimed: Pick<StagingRow, 'net_minor' | 'surcharge_minor'>): PricedLine[] {
  return partPaymentLines(DEPOSIT_LINE_LABEL, claimed.net_minor, claimed.surcharge_minor);
}

/** What the staged registration's checkout must charge: its deposit plus the checkout's card fee, or its whole priced total. */
export function stagedFirstPaymentMinor(staged: StagedRegistration, claimed: Pick<StagingRow, 'surcharge_minor'>): number {
  const deposit = staged.schedule?.steps[0]?.settledTargetMinor;
  return deposit === undefined ? staged.priced.total : deposit + claimed.surcharge_minor;
}

/**
 * Records the card payment (and, for a new registration, its schedule) in the completion's transaction;
 * PAID once the ledger says nothing is owed. A payment worth more than was left (part of it was paid
 * another way meanwhile) is recorded whole, and the office is alerted of the excess: money is never refunded here.
 */
export async function recordPartPayment(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  input: { registrationId: string; claimed: StagingRow; paymentIntentId: string | null; now: Date; schedule?: Schedule; part?: PartPayment },
): Promise<PartPayment['receipt']> {
  const { registrationId, claimed, now } = input;
  if (input.schedule) await insertSchedule(trx, registrationId, input.schedule);
  const before = await registrationMoney(trx, registrationId);
  await insertCardPayment(trx, {
    registrationId,
    checkoutId: claimed.id,
    paymentIntentId: input.paymentIntentId,
    netMinor: claimed.net_minor,
    surchargeMinor: claimed.surcharge_minor,
    now,
  });
  const left = before.outstandingMinor - claimed.net_minor;
  if (left > 0) return ledgerAfter(trx, registrationId);
  await trx('registrations').where({ id: registrationId, status: 'PENDING' }).update({ status: 'PAID', paid_at: now, updated_at: now });
  if (left < 0) {
    await raiseOperationsAlert(trx, ctx, {
      kind: 'balance_overpaid',
      reason: `a card payment of part of the balance came to ${moneyFormatter(ctx.config.regional)(-left)} more than was still owed (part of it was paid another way meanwhile); recorded whole, the excess kept`,
      checkoutId: claimed.id,
      providerSessionId: claimed.provider_session_id ?? undefined,
      paymentIntentId: input.paymentIntentId ?? undefined,
      amountMinor: -left,
      details: { registrationId, eventId: claimed.event_id },
    });
  }
  return ledgerAfter(trx, registrationId);
}

/** What a receipt says was paid in all and is left, read from the ledger after the payment's row is written. */
async function ledgerAfter(trx: Knex.Transaction, registrationId: string): Promise<PartPayment['receipt']> {
  const after = await registrationMoney(trx, registrationId);
  return { paidSoFarMinor: after.paidMinor, balanceLeftMinor: Math.max(0, after.outstandingMinor) };
}
