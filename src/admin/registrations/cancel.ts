import { AppError } from '../../errors.js';
import { paymentReference } from '../../registrations/reference.js';
import { queueCancellationNotice } from '../../payments/notices.js';
import { localDay } from '../../local-time.js';
import { recordHistory } from '../../registrations/history.js';
import { lockEventForSeats } from '../../registrations/registrations.js';
import { lockRegistration, resolveRegistrationId } from './lookup.js';
import type { OfficeContext } from './mark-paid.js';
import { cardPaymentMayArrive as inFlightCardPayment, officePaidSum } from '../../registrations/ledger.js';

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
    // The event's lock too (after the registration's, the order a pay-now completion takes them in): places move
    // only under it, so a waiting-list claim or offer beside this cancellation sees it whole or not at all.
    await lockEventForSeats(trx, registration.event_id);
    const now = ctx.clock.now();
    const reference = paymentReference(id);
    if (registration.status === 'CANCELLED') {
      throw new AppError(
        'already_cancelled',
        `registration ${reference} was already cancelled on ${registration.cancelled_at ? localDay(registration.cancelled_at, ctx.config.regional.timeZone) : '?'} (${registration.cancel_reason ?? 'no reason'}); nothing changed`,
        { exitCode: 1 },
      );
    }
    await trx('registrations').where({ id }).update({ status: 'CANCELLED', cancelled_at: now, cancel_reason: 'office', updated_at: now });
    const paidMinor = registration.paid_at ? registration.total_minor : await officePaidSum(trx, id);
    const cardPaymentMayArrive = registration.status === 'PENDING' && (await inFlightCardPayment(trx, id, now)) !== undefined;
    if (input.notify) {
      const event = await trx('events').where({ id: registration.event_id }).first<{ title: string; starts_at: Date }>('title', 'starts_at');
      await queueCancellationNotice(
        trx,
        ctx,
        {
          registrationId: id,
          name: registration.contact_name,
          email: ctx.cipher.decrypt(registration.contact_email_enc),
          event: { title: event.title, startsAt: event.starts_at },
        },
        { holdReleased: false, paid: paidMinor > 0 },
        now,
      );
    }
    await recordHistory(trx, {
      registrationId: id,
      action: 'cancelled',
      changes: { status: { from: registration.status, to: 'CANCELLED' }, seatsFreed: registration.attendee_count, notified: Boolean(input.notify) },
      note: input.note,
      actor: input.actor,
      now,
    });
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
