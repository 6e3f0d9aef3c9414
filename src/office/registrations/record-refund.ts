import type { Knex } from 'knex';
import type { Db } from '../../db/connect.js';
import { AppError } from '../../errors.js';
import { localMinute } from '../../local-time.js';
import { paymentReference } from '../../registrations/reference.js';
import { recordHistory } from '../../registrations/history.js';
import { lockRegistration, resolveRegistrationId, type RegistrationRow } from './lookup.js';
import type { OfficeContext } from './mark-paid.js';
import { SAME_PAYMENT_WINDOW_MS, officeRefundedSum, receivedMinor, recentSamePayment, type OfficePaymentMethod } from '../../registrations/ledger.js';

export interface RecordRefundInput {
  registration: string;
  amountMinor: number;
  method: OfficePaymentMethod;
  note?: string;
  /** Records it even when the same amount, method and note was recorded in the last 24 hours. */
  again?: boolean;
  actor: string;
}

export interface RecordRefundResult {
  registrationId: string;
  reference: string;
  refundedMinor: number;
  /** What the church still holds for the registration after this refund. */
  heldMinor: number;
}

/** A refund that was not recorded, and why. */
export class NotRefundableError extends AppError {
  constructor(message: string, suggestion?: string) {
    super('not_refundable', message, { exitCode: 1, suggestion });
    this.name = 'NotRefundableError';
  }
}

/**
 * Records money the office paid back by hand (a bank transfer, cash) for a cancelled registration, so
 * its "amount paid" (PAID_MINOR_SQL) stops counting what the church no longer holds. Cancelling never
 * refunds; this only records what a person did. Under the registration's row lock. Refused for a
 * registration still active, for more than the church holds for it, and for a card payment (refunded in
 * the card provider's dashboard, whose notice the webhook records), unless that refund failed: then the
 * money is back with the church and paying it back another way is what the failure's alert asks.
 */
export async function recordOfficeRefund(ctx: OfficeContext, input: RecordRefundInput, money: (minor: number) => string): Promise<RecordRefundResult> {
  const id = await resolveRegistrationId(ctx.db, input.registration);
  return ctx.db.transaction(async (trx) => {
    const registration = await lockRegistration(trx, id);
    const reference = paymentReference(id);
    refuseUnlessRefundable(registration);
    const received = await receivedMinor(trx, id);
    const refundedBefore = await officeRefundedSum(trx, id);
    const held = received - refundedBefore;
    if (input.amountMinor > held) {
      throw new NotRefundableError(
        `${money(input.amountMinor)} is more than the church holds for registration ${reference} (${money(held)}${refundedBefore > 0 ? `, after ${money(refundedBefore)} already paid back` : ''}); nothing was recorded`,
        held > 0 ? `record what was paid back, at most ${money(held)}` : 'look at it with `eventops registrations show`',
      );
    }
    const now = ctx.clock.now();
    // Two volunteers working from one bank statement would otherwise record one transfer back twice (as mark-paid).
    const earlier = input.again
      ? undefined
      : await recentSamePayment(trx, { registrationId: id, amountMinor: input.amountMinor, method: input.method, note: input.note, since: new Date(now.getTime() - SAME_PAYMENT_WINDOW_MS) }, 'registration_refunds');
    if (earlier) {
      throw new NotRefundableError(
        `${money(input.amountMinor)} paid back by ${input.method}${input.note ? ` ("${input.note}")` : ''} was already recorded for registration ${reference} on ${localMinute(earlier.recordedAt, ctx.config.regional.timeZone)} by ${earlier.recordedBy}; nothing was recorded`,
        'look at it with `eventops registrations show`; if this is another refund of the same amount, run the command again with --again',
      );
    }
    await trx('registration_refunds').insert({
      registration_id: id,
      amount_minor: input.amountMinor,
      method: input.method,
      note: input.note ?? null,
      recorded_by: input.actor,
      recorded_at: now,
    });
    await recordHistory(trx, {
      registrationId: id,
      action: 'refund_recorded',
      changes: { amountMinor: input.amountMinor, method: input.method, heldMinor: held - input.amountMinor },
      note: input.note,
      actor: input.actor,
      now,
    });
    return { registrationId: id, reference, refundedMinor: input.amountMinor, heldMinor: held - input.amountMinor };
  });
}

function refuseUnlessRefundable(registration: RegistrationRow): void {
  const reference = paymentReference(registration.id);
  if (registration.status !== 'CANCELLED') {
    throw new NotRefundableError(
      `registration ${reference} is ${registration.status}: only money of a cancelled registration is recorded as paid back; nothing was recorded`,
      `cancel it first with \`eventops registrations cancel ${reference}\`, then record what was paid back`,
    );
  }
  if (registration.cancel_reason === 'refund' || registration.cancel_reason === 'dispute') {
    throw new NotRefundableError(
      `the card payment of registration ${reference} was already ${registration.cancel_reason === 'refund' ? 'refunded at the card provider' : 'taken back by a dispute'}; nothing was recorded`,
    );
  }
  if (registration.payment_method === 'card' && registration.cancel_reason !== 'refund_failed') {
    throw new NotRefundableError(
      `registration ${reference} was paid by card: refund it in the card provider's dashboard, whose refund notice is recorded on the registration; nothing was recorded`,
    );
  }
}
