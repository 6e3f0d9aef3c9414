import type { Knex } from 'knex';
import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { enqueueMail } from '../../mail/queue.js';
import { paymentReference } from '../../registrations/reference.js';
import { renderReceipt } from '../../payments/receipts.js';
import { PART_PAYMENT_LINE_LABEL } from '../../payments/deposit-checkout.js';
import { localDay, localMinute } from '../../local-time.js';
import { recordHistory } from '../../registrations/history.js';
import { closeHelpRequest } from '../../registrations/help-requests.js';
import { lockRegistration, resolveRegistrationId, type RegistrationRow } from './lookup.js';
import { plainAmount } from './money.js';
import { officePaidByMethod } from '../../registrations/paid-by.js';
import { SAME_PAYMENT_WINDOW_MS, cardPaymentMayArrive, insertOfficePayment, recentSamePayment, registrationMoney, type OfficePaymentMethod } from '../../registrations/ledger.js';
import { listCredits, standingHelp } from '../../registrations/credits.js';

export type OfficeContext = Pick<AppContext, 'db' | 'clock' | 'cipher' | 'config' | 'logger'>;

export interface MarkPaidInput {
  registration: string;
  amountMinor: number;
  method: OfficePaymentMethod;
  note?: string;
  /** Records part of what is owing; the registration stays PENDING until the balance is paid. */
  partial?: boolean;
  /** Records it even when the same amount, method and note was recorded in the last 24 hours. */
  again?: boolean;
  /** Records the whole balance even though a card payment for the registration may still arrive (it would be paid twice). */
  yes?: boolean;
  actor: string;
}

export interface MarkPaidResult {
  registrationId: string;
  reference: string;
  status: 'PAID' | 'PENDING';
  recordedMinor: number;
  paidMinor: number;
  balanceMinor: number;
  receiptQueued: boolean;
  /** Recorded with --yes while a card payment for the registration may still arrive: if it does, it is paid twice. */
  cardPaymentMayArrive: boolean;
}

/** A mark-paid that did nothing, and why. */
export class NotMarkableError extends AppError {
  constructor(message: string, suggestion?: string, code = 'not_markable') {
    super(code, message, { exitCode: 1, suggestion });
    this.name = 'NotMarkableError';
  }
}

/**
 * Records money received outside the card provider. Under the registration's
 * row lock (the lock pay-now and the webhook take too): refused for a
 * CANCELLED or PAID registration, while a card payment for it is in flight,
 * or when the same payment was recorded in the last 24 hours (unless `again`);
 * the amount must be exactly the balance, or less with `partial`. Paid in full
 * → PAID, and the receipt naming the method is queued in the same transaction.
 */
export async function markRegistrationPaid(ctx: OfficeContext, input: MarkPaidInput, money: (minor: number) => string): Promise<MarkPaidResult> {
  const id = await resolveRegistrationId(ctx.db, input.registration);
  return ctx.db.transaction(async (trx) => {
    const registration = await lockRegistration(trx, id);
    const now = ctx.clock.now();
    refuseUnlessOwing(registration, ctx.config.regional.timeZone);
    await refuseForDeletedEvent(trx, registration, ctx.config.regional.timeZone);
    const inFlight = await trx('checkout_sessions')
      .where({ registration_id: id, status: 'OPEN' })
      .where('expires_at', '>', now)
      .whereNotNull('payment_intent_id')
      .first('id');
    if (inFlight) {
      throw new NotMarkableError(
        `a card payment for registration ${paymentReference(id)} is being processed right now; nothing was recorded`,
        'wait half an hour, then look at it again with `eventops registrations show`',
      );
    }

    if (!input.again) await refuseRecordedAlready(trx, ctx, input, id, money);

    // Help with the cost (registrations credit) is owed by nobody: the balance is what is left after it.
    const before = await registrationMoney(trx, id);
    const paidBefore = before.officePaidMinor;
    const balance = before.balanceMinor;
    refuseUnlessOwed(input, balance, money, ctx.config.regional);

    if (input.amountMinor < balance) await refusePartWhileCardMayPay(trx, ctx, id);
    const cardPaymentMayArrive = input.amountMinor === balance && (await refuseFullWhileCardMayPay(trx, ctx, id, input.yes));

    const paymentId = await insertOfficePayment(trx, { registrationId: id, ...input, now });
    // A payment recorded is the office's decision on a request for help with the cost.
    await closeHelpRequest(trx, id, { actor: input.actor, now, how: `payment #${paymentId} of ${money(input.amountMinor)} recorded` });
    // --partial with the whole balance pays it in full.
    const full = input.amountMinor === balance;
    if (full) {
      await trx('registrations')
        .where({ id })
        .update({ status: 'PAID', paid_at: now, payment_method: input.method, updated_at: now });
      const event = await trx('events').where({ id: registration.event_id }).first<{ title: string; starts_at: Date }>('title', 'starts_at');
      const receipt = await renderReceipt(trx, ctx, {
        registrationId: id,
        contact: { name: registration.contact_name, email: ctx.cipher.decrypt(registration.contact_email_enc) },
        event: { title: event.title, startsAt: event.starts_at },
        lines: registration.line_items,
        amountMinor: paidBefore + input.amountMinor,
        paidAt: now,
        method: input.method,
        paidBy: await officePaidByMethod(trx, id),
        help: standingHelp(await listCredits(trx, id)),
        officePaymentKey: String(paymentId),
      });
      await enqueueMail(trx, ctx.cipher, receipt, now);
    } else {
      // A part of the balance gets its receipt too: what came, the help, what was paid in all and what is left.
      const event = await trx('events').where({ id: registration.event_id }).first<{ title: string; starts_at: Date }>('title', 'starts_at');
      const receipt = await renderReceipt(trx, ctx, {
        registrationId: id,
        contact: { name: registration.contact_name, email: ctx.cipher.decrypt(registration.contact_email_enc) },
        event: { title: event.title, startsAt: event.starts_at },
        lines: [{ label: PART_PAYMENT_LINE_LABEL, amount: input.amountMinor }],
        amountMinor: input.amountMinor,
        paidAt: now,
        method: input.method,
        help: standingHelp(await listCredits(trx, id)),
        part: { paidSoFarMinor: before.paidMinor + input.amountMinor, balanceLeftMinor: balance - input.amountMinor },
        officePaymentKey: String(paymentId),
      });
      await enqueueMail(trx, ctx.cipher, receipt, now);
    }
    const paid = paidBefore + input.amountMinor;
    await recordHistory(trx, {
      registrationId: id,
      action: full ? 'marked_paid' : 'payment_recorded',
      changes: {
        amountMinor: input.amountMinor,
        method: input.method,
        paidMinor: paid,
        balanceMinor: balance - input.amountMinor,
        ...(full ? { status: { from: 'PENDING', to: 'PAID' } } : {}),
        // Recorded although the same payment was recorded in the last 24 hours: the office said it is another.
        ...(input.again ? { again: true } : {}),
      },
      note: input.note,
      actor: input.actor,
      now,
    });
    return {
      registrationId: id,
      reference: paymentReference(id),
      status: full ? 'PAID' : 'PENDING',
      recordedMinor: input.amountMinor,
      paidMinor: paid,
      balanceMinor: balance - input.amountMinor,
      receiptQueued: true,
      cardPaymentMayArrive,
    };
  });
}

/**
 * A payment for a registration whose event the office deleted would mark it PAID and send a receipt for an
 * event that no longer exists (its registrant's page says the church will contact them). What arrived is paid
 * back instead: cancel, then record-refund what had been recorded before.
 */
async function refuseForDeletedEvent(trx: Knex.Transaction, registration: RegistrationRow, timeZone: string): Promise<void> {
  const event = await trx('events').where({ id: registration.event_id }).first<{ slug: string; deleted_at: Date | null }>('slug', 'deleted_at');
  if (!event?.deleted_at) return;
  const reference = paymentReference(registration.id);
  throw new NotMarkableError(
    `the event of registration ${reference} (${event.slug}) was deleted on ${localDay(event.deleted_at, timeZone)}; no payment is recorded for it and no receipt sent`,
    `pay back what arrived, and cancel the registration with \`eventops registrations cancel ${reference}\` (then \`eventops registrations record-refund ${reference}\` for what was recorded before)`,
  );
}

function refuseUnlessOwing(registration: RegistrationRow, timeZone: string): void {
  const reference = paymentReference(registration.id);
  if (registration.status === 'CANCELLED') {
    throw new NotMarkableError(
      `registration ${reference} was cancelled on ${registration.cancelled_at ? localDay(registration.cancelled_at, timeZone) : '?'}; nothing was recorded`,
      'register them again with `eventops registrations add` if they are coming after all',
    );
  }
  // Free is not "paid since" the day it was registered: there never was anything to pay.
  if (registration.payment_method === 'free' || registration.total_minor <= 0) {
    throw new NotMarkableError(`registration ${reference} is free (nothing to pay); nothing was recorded`);
  }
  if (registration.status === 'PAID') {
    throw new NotMarkableError(
      `registration ${reference} is already paid (${registration.payment_method}) since ${registration.paid_at ? localDay(registration.paid_at, timeZone) : '?'}; nothing was recorded`,
    );
  }
}

/**
 * The amount must be the balance (or less, with --partial). More is refused: recording the balance
 * alone would make the books disagree with the bank statement without a trace, so the suggestion
 * records the balance with a note of what came in and what is to be paid back.
 */
function refuseUnlessOwed(input: MarkPaidInput, balance: number, money: (minor: number) => string, regional: { currency: string; locale: string }): void {
  if (input.amountMinor <= balance && (input.partial || input.amountMinor === balance)) return;
  const refusal = `${money(input.amountMinor)} is not what is owing (${money(balance)}); nothing was recorded`;
  if (input.amountMinor < balance) throw new NotMarkableError(refusal, 'record part of it with --partial');
  const overpaid = `received ${money(input.amountMinor)}, ${money(input.amountMinor - balance)} to pay back`;
  const note = input.note ? `${input.note}; ${overpaid}` : overpaid;
  throw new NotMarkableError(
    refusal,
    `record the balance (${money(balance)}) and note the difference to pay back, e.g. --amount ${plainAmount(balance, regional)} --note ${singleQuoted(note)}`,
  );
}

// Single quotes, so a shell leaves the currency signs in the note alone ("$200.00" would lose its "$2").
const singleQuoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;


/**
 * Two volunteers working from one bank statement, or one retrying after an unclear result,
 * would otherwise record one transfer twice: the reminders then ask for too little and the
 * real balance is refused. Checked under the row lock, so the second of two at once sees the first;
 * and for full payments too, as a repeated part-payment can be exactly the balance.
 */
async function refuseRecordedAlready(
  trx: Knex.Transaction,
  ctx: OfficeContext,
  input: MarkPaidInput,
  registrationId: string,
  money: (minor: number) => string,
): Promise<void> {
  const since = new Date(ctx.clock.now().getTime() - SAME_PAYMENT_WINDOW_MS);
  const earlier = await recentSamePayment(trx, { registrationId, amountMinor: input.amountMinor, method: input.method, note: input.note, since });
  if (!earlier) return;
  throw new NotMarkableError(
    `${money(input.amountMinor)} by ${input.method}${input.note ? ` ("${input.note}")` : ''} was already recorded for registration ` +
      `${paymentReference(registrationId)} on ${localMinute(earlier.recordedAt, ctx.config.regional.timeZone)} by ${earlier.recordedBy}; nothing was recorded`,
    'look at it with `eventops registrations show`; if this is another payment of the same amount, run the command again with --again',
  );
}

/**
 * The whole balance recorded while a card checkout may still be paid: the card payment that lands after it is kept
 * with a paid_twice alert, and the payer was charged twice. Recorded only when the office says so (--yes), having
 * checked at the provider (`eventops reconcile` reports a checkout paid there that we have not recorded yet).
 */
async function refuseFullWhileCardMayPay(trx: Knex.Transaction, ctx: OfficeContext, registrationId: string, yes: boolean | undefined): Promise<boolean> {
  const checkout = await cardPaymentMayArrive(trx, registrationId, ctx.clock.now());
  if (!checkout) return false;
  if (yes) return true;
  const reference = paymentReference(registrationId);
  const deadline = checkoutDeadline(ctx, checkout.expiresAt);
  const when =
    checkout.expiresAt > ctx.clock.now()
      ? `its checkout is open until ${deadline}`
      : `its checkout expired ${deadline}, but the card provider has not confirmed it unpaid yet`;
  throw new NotMarkableError(
    `a card payment for registration ${reference} was started and may still arrive (${when}); ` +
      'if it does, the registration is paid twice and the card payment has to be refunded by hand; nothing was recorded',
    'check whether the card payment went through with `eventops reconcile`; if it did not, run the command again with --yes to record this payment',
    'card_payment_may_arrive',
  );
}

function checkoutDeadline(ctx: OfficeContext, expiresAt: Date): string {
  return new Intl.DateTimeFormat(ctx.config.regional.locale, {
    dateStyle: 'medium',
    timeStyle: 'short',
    timeZone: ctx.config.regional.timeZone,
  }).format(expiresAt);
}

/**
 * A card checkout is always for the whole total: a part-payment recorded while one may still be
 * paid (OPEN, or EXPIRED with its payload kept; not a pay-now claim abandoned before its session was
 * recorded, which nobody can pay) would be paid twice over without anyone told.
 * A full payment is recorded then only with --yes (refuseFullWhileCardMayPay); a card payment that lands after it is kept with an alert.
 */
async function refusePartWhileCardMayPay(trx: Knex.Transaction, ctx: OfficeContext, registrationId: string): Promise<void> {
  const checkout = await cardPaymentMayArrive(trx, registrationId, ctx.clock.now());
  if (!checkout) return;
  const until = checkoutDeadline(ctx, checkout.expiresAt);
  throw new NotMarkableError(
    `a card checkout for the whole total of registration ${paymentReference(registrationId)} may still be paid; ` +
      'a part-payment now could have it paid twice; nothing was recorded',
    `record the whole balance instead, or try again once the checkout has expired (${until}) and the card provider has confirmed it unpaid`,
  );
}
