import type { Knex } from 'knex';
import { AppError } from '../../errors.js';
import { enqueueMail } from '../../mail/queue.js';
import { localDay, localMinute } from '../../local-time.js';
import { renderReceipt } from '../../payments/receipts.js';
import { paymentReference } from '../../registrations/reference.js';
import { recordHistory } from '../../registrations/history.js';
import { closeHelpRequest } from '../../registrations/help-requests.js';
import { officePaidByMethod } from '../../registrations/paid-by.js';
import { SAME_PAYMENT_WINDOW_MS, cardPaymentMayArrive, registrationMoney } from '../../registrations/ledger.js';
import { insertCredit, insertReversal, listCredits, recentSameCredit, standingHelp } from '../../registrations/credits.js';
import { lockRegistration, resolveRegistrationId, type RegistrationRow } from './lookup.js';
import type { OfficeContext } from './mark-paid.js';
import { plainAmount } from './money.js';

export interface CreditInput {
  registration: string;
  amountMinor: number;
  fund: string;
  note?: string;
  /** Records it even when the same fund, amount and note was credited in the last 24 hours. */
  again?: boolean;
  actor: string;
}

export interface CreditResult {
  registrationId: string;
  reference: string;
  creditId: number;
  fund: string;
  creditedMinor: number;
  balanceMinor: number;
  status: 'PAID' | 'PENDING';
  receiptQueued: boolean;
}

export interface ReverseCreditInput {
  registration: string;
  creditId: number;
  note?: string;
  actor: string;
}

export interface ReverseCreditResult {
  registrationId: string;
  reference: string;
  reversalId: number;
  fund: string;
  reversedMinor: number;
  balanceMinor: number;
  status: string;
}

/** A credit (or its reversal) that was not recorded, and why. */
export class NotCreditableError extends AppError {
  constructor(message: string, suggestion?: string) {
    super('not_creditable', message, { exitCode: 1, suggestion });
    this.name = 'NotCreditableError';
  }
}

/**
 * Records help with the cost from a named fund, under the registration's row lock. A credit is not money
 * received: it lowers the balance and is never in the payment totals compared with the card provider. At
 * most the balance (help beyond what is owed would be money the fund gives away); refused for a cancelled,
 * paid or free registration, while a card payment for the whole total may still arrive, and for the same
 * credit recorded in the last 24 hours unless `again`. The balance at 0 makes the registration PAID; the
 * receipt is queued when money was received too (a registration the fund covers whole gets no "payment received").
 */
export async function creditRegistration(ctx: OfficeContext, input: CreditInput, money: (minor: number) => string): Promise<CreditResult> {
  const id = await resolveRegistrationId(ctx.db, input.registration);
  return ctx.db.transaction(async (trx) => {
    const registration = await lockRegistration(trx, id);
    const reference = paymentReference(id);
    const now = ctx.clock.now();
    refuseUnlessOwing(registration, ctx.config.regional.timeZone);
    if (await cardPaymentMayArrive(trx, id, now)) {
      throw new NotCreditableError(
        `a card payment for the whole total of registration ${reference} may still arrive; help recorded now could have it paid for twice; nothing was recorded`,
        'try again once the checkout has expired and the card provider has confirmed it unpaid (`eventops registrations show`)',
      );
    }
    if (!input.again) await refuseRecordedAlready(trx, ctx, input, id, money);
    const before = await registrationMoney(trx, id);
    if (input.amountMinor > before.balanceMinor) {
      throw new NotCreditableError(
        `${money(input.amountMinor)} is more than registration ${reference} owes (${money(before.balanceMinor)}); help is never more than the balance; nothing was recorded`,
        `credit at most the balance: --amount ${plainAmount(before.balanceMinor, ctx.config.regional)}`,
      );
    }
    const creditId = await insertCredit(trx, { registrationId: id, fund: input.fund, amountMinor: input.amountMinor, note: input.note, actor: input.actor, now });
    // Help recorded is the office's decision on the family's request for it.
    await closeHelpRequest(trx, id, { actor: input.actor, now, how: `credit #${creditId} of ${money(input.amountMinor)} from ${input.fund}` });
    const balance = before.balanceMinor - input.amountMinor;
    const full = balance === 0;
    let receiptQueued = false;
    if (full) {
      await trx('registrations').where({ id }).update({ status: 'PAID', paid_at: now, updated_at: now });
      if (before.officePaidMinor > 0) {
        await queueReceipt(trx, ctx, registration, now, before.officePaidMinor, `credit-${creditId}`);
        receiptQueued = true;
      }
    }
    await recordHistory(trx, {
      registrationId: id,
      action: 'credit_recorded',
      changes: {
        creditId,
        fund: input.fund,
        amountMinor: input.amountMinor,
        balanceMinor: balance,
        ...(full ? { status: { from: 'PENDING', to: 'PAID' } } : {}),
        ...(input.again ? { again: true } : {}),
      },
      note: input.note,
      actor: input.actor,
      now,
    });
    return { registrationId: id, reference, creditId, fund: input.fund, creditedMinor: input.amountMinor, balanceMinor: balance, status: full ? 'PAID' : 'PENDING', receiptQueued };
  });
}

/**
 * Takes a credit back with a reversal row (the credit stays, for the fund's books). A PAID registration
 * that owes again goes back to PENDING, so its reminders and the balances list ask for what is owed;
 * a cancelled one stays cancelled (nothing is owed for it), its fund's report nets the help back.
 */
export async function reverseCredit(ctx: OfficeContext, input: ReverseCreditInput): Promise<ReverseCreditResult> {
  const id = await resolveRegistrationId(ctx.db, input.registration);
  return ctx.db.transaction(async (trx) => {
    const registration = await lockRegistration(trx, id);
    const reference = paymentReference(id);
    const now = ctx.clock.now();
    const entries = await listCredits(trx, id);
    const credit = entries.find((entry) => entry.id === input.creditId);
    const standing = entries.filter((entry) => entry.kind === 'credit' && entry.reversedBy === null).map((entry) => `#${entry.id}`);
    const which = standing.length > 0 ? `its credits standing: ${standing.join(', ')}` : 'look at it with `eventops registrations show`';
    if (!credit || credit.kind !== 'credit') {
      throw new NotCreditableError(`registration ${reference} has no credit #${input.creditId}; nothing was reversed`, which);
    }
    if (credit.reversedBy !== null) {
      throw new NotCreditableError(`credit #${credit.id} of registration ${reference} was already reversed (#${credit.reversedBy}); nothing was reversed`, which);
    }
    const reversalId = await insertReversal(trx, { registrationId: id, credit, note: input.note, actor: input.actor, now });
    const after = await registrationMoney(trx, id);
    const reopened = registration.status === 'PAID' && after.outstandingMinor > 0;
    if (reopened) await trx('registrations').where({ id }).update({ status: 'PENDING', paid_at: null, updated_at: now });
    const balance = reopened ? (await registrationMoney(trx, id)).balanceMinor : after.balanceMinor;
    await recordHistory(trx, {
      registrationId: id,
      action: 'credit_reversed',
      changes: { creditId: credit.id, reversalId, fund: credit.fund, amountMinor: credit.amountMinor, balanceMinor: balance, ...(reopened ? { status: { from: 'PAID', to: 'PENDING' } } : {}) },
      note: input.note,
      actor: input.actor,
      now,
    });
    return { registrationId: id, reference, reversalId, fund: credit.fund, reversedMinor: credit.amountMinor, balanceMinor: balance, status: reopened ? 'PENDING' : registration.status };
  });
}

function refuseUnlessOwing(registration: RegistrationRow, timeZone: string): void {
  const reference = paymentReference(registration.id);
  if (registration.status === 'CANCELLED') {
    throw new NotCreditableError(
      `registration ${reference} was cancelled on ${registration.cancelled_at ? localDay(registration.cancelled_at, timeZone) : '?'}; nothing is owed and nothing was recorded`,
    );
  }
  if (registration.payment_method === 'free' || registration.total_minor <= 0) {
    throw new NotCreditableError(`registration ${reference} is free (nothing to pay); nothing was recorded`);
  }
  if (registration.status === 'PAID') {
    throw new NotCreditableError(
      `registration ${reference} is already paid since ${registration.paid_at ? localDay(registration.paid_at, timeZone) : '?'}; help is only for what is still owed; nothing was recorded`,
      'if money was received that the fund should have covered, pay it back and record it with `eventops registrations record-refund` once cancelled, or talk to the treasurer',
    );
  }
}

async function refuseRecordedAlready(trx: Knex.Transaction, ctx: OfficeContext, input: CreditInput, registrationId: string, money: (minor: number) => string): Promise<void> {
  const since = new Date(ctx.clock.now().getTime() - SAME_PAYMENT_WINDOW_MS);
  const earlier = await recentSameCredit(trx, { registrationId, fund: input.fund, amountMinor: input.amountMinor, note: input.note, since });
  if (!earlier) return;
  throw new NotCreditableError(
    `${money(input.amountMinor)} from "${input.fund}"${input.note ? ` ("${input.note}")` : ''} was already credited to registration ${paymentReference(registrationId)} ` +
      `on ${localMinute(earlier.recordedAt, ctx.config.regional.timeZone)} by ${earlier.recordedBy}; nothing was recorded`,
    'look at it with `eventops registrations show`; if this is more help of the same amount, run the command again with --again',
  );
}

/** The receipt for the money received, naming the help that settled the rest. */
async function queueReceipt(trx: Knex.Transaction, ctx: OfficeContext, registration: RegistrationRow, now: Date, receivedMinor: number, key: string): Promise<void> {
  const event = await trx('events').where({ id: registration.event_id }).first<{ title: string; starts_at: Date }>('title', 'starts_at');
  const paidBy = await officePaidByMethod(trx, registration.id);
  const receipt = await renderReceipt(trx, ctx, {
    registrationId: registration.id,
    contact: { name: registration.contact_name, email: ctx.cipher.decrypt(registration.contact_email_enc) },
    event: { title: event.title, startsAt: event.starts_at },
    lines: registration.line_items,
    amountMinor: receivedMinor,
    paidAt: now,
    method: paidBy[0]?.method ?? 'bank',
    paidBy,
    help: standingHelp(await listCredits(trx, registration.id)),
    officePaymentKey: key,
  });
  await enqueueMail(trx, ctx.cipher, receipt, now);
}
