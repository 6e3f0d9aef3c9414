import { AppError } from '../../errors.js';
import { paymentReference } from '../../registrations/reference.js';
import { localDay } from '../../local-time.js';
import { cancelLockedRegistration } from './cancel-locked.js';
import { lockRegistration, resolveRegistrationId } from './lookup.js';
import type { OfficeContext } from './mark-paid.js';
import { cardPaymentMayArrive as inFlightCardPayment, receivedMinor } from '../../registrations/ledger.js';

export interface CancelInput {
  registration: string;
  note?: string;
  notify?: boolean;
  actor: string;
}

export interface CancelResult {
  registrationId: string;
  reference: string;
  previousStatus: 'PENDING' | 'PAID';
  seatsFreed: number;
  /** Money had been received (card, bank, cash): refunding it is a person's job. */
  paidMinor: number;
  paidByCard: boolean;
  /** A pay-now checkout was started and may still be paid: that money would be kept with an alert. */
  cardPaymentMayArrive: boolean;
  notified: boolean;
}

/**
 * Cancels under the registration's row lock, freeing its seats (seats count
 * PENDING and PAID only). Never refunds: a card payment is refunded in the
 * provider's dashboard, and the refund webhook that follows finds the
 * registration already CANCELLED and only records the refund.
 */
export async function cancelRegistration(ctx: OfficeContext, input: CancelInput): Promise<CancelResult> {
  const id = await resolveRegistrationId(ctx.db, input.registration);
  return ctx.db.transaction(async (trx) => {
    const registration = await lockRegistration(trx, id);
    const now = ctx.clock.now();
    const reference = paymentReference(id);
    if (registration.status === 'CANCELLED') {
      throw new AppError(
        'already_cancelled',
        `registration ${reference} was already cancelled on ${registration.cancelled_at ? localDay(registration.cancelled_at, ctx.config.regional.timeZone) : '?'} (${registration.cancel_reason ?? 'no reason'}); nothing changed`,
        { exitCode: 1 },
      );
    }
    const paidMinor = await receivedMinor(trx, id);
    const cardPaymentMayArrive = registration.status === 'PENDING' && (await inFlightCardPayment(trx, id, now)) !== undefined;
    await cancelLockedRegistration(trx, ctx, registration, { by: 'office', notify: Boolean(input.notify), paidMinor, actor: input.actor, note: input.note });
    return {
      registrationId: id,
      reference,
      previousStatus: registration.status,
      seatsFreed: registration.attendee_count,
      paidMinor,
      paidByCard: registration.payment_method === 'card' && registration.paid_at !== null,
      cardPaymentMayArrive,
      notified: Boolean(input.notify),
    };
  });
}

/** One reference of a cancellation of several: what it cancelled, or why it could not. */
export type CancelOutcome =
  | { given: string; ok: true; result: CancelResult }
  | { given: string; ok: false; error: { code: string; message: string } };

/**
 * Cancels each registration in turn, each in its own transaction: a reference that fails (unknown,
 * ambiguous, already cancelled) is reported and the others are still cancelled.
 */
export async function cancelRegistrations(
  ctx: OfficeContext,
  input: Omit<CancelInput, 'registration'> & { registrations: string[] },
): Promise<CancelOutcome[]> {
  const outcomes: CancelOutcome[] = [];
  for (const given of input.registrations) {
    try {
      outcomes.push({ given, ok: true, result: await cancelRegistration(ctx, { ...input, registration: given }) });
    } catch (error) {
      const failure = error instanceof AppError ? { code: error.code, message: error.message } : { code: 'unexpected', message: String(error instanceof Error ? error.message : error) };
      outcomes.push({ given, ok: false, error: failure });
    }
  }
  return outcomes;
}
