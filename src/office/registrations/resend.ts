import { AppError } from '../../errors.js';
import { enqueueMail } from '../../mail/queue.js';
import { queueRegistrationConfirmation } from '../../signup/confirmations.js';
import { paymentReference } from '../../registrations/reference.js';
import type { PricedLine, PricedRegistration } from '../../registrations/pricing.js';
import { renderReceipt, type ReceiptMethod } from '../../payments/receipts.js';
import { eventFromRow, type EventRow } from '../../registrations/event-record.js';
import { recordHistory } from '../../registrations/history.js';
import { bumpManageLinkVersion } from '../../payments/manage-link.js';
import { lockRegistration, resolveRegistrationId } from './lookup.js';
import type { OfficeContext } from './mark-paid.js';
import { cardPaymentMayArrive, registrationMoney } from '../../registrations/ledger.js';
import { officePaidByMethod } from '../../registrations/paid-by.js';

export interface ResendResult {
  registrationId: string;
  reference: string;
  sent: 'receipt' | 'confirmation';
  /** The manage link was renewed: every link sent before no longer works. */
  newLink: boolean;
}

/**
 * Queues the confirmation (pending or free) or the receipt (paid) again, to the registration's contact. With
 * `newLink` the manage link is renewed first (its version raised, so every link sent before stops working) and the
 * mail carries the new one.
 */
export async function resendRegistrationMail(ctx: OfficeContext, input: { registration: string; actor: string; newLink?: boolean }): Promise<ResendResult> {
  const id = await resolveRegistrationId(ctx.db, input.registration);
  return ctx.db.transaction(async (trx) => {
    const registration = await lockRegistration(trx, id);
    const reference = paymentReference(id);
    if (registration.status === 'CANCELLED') {
      throw new AppError('registration_cancelled', `registration ${reference} is cancelled; there is nothing to send`, { exitCode: 1 });
    }
    const now = ctx.clock.now();
    if (input.newLink) await bumpManageLinkVersion(trx, id);
    const event = eventFromRow(await trx('events').where({ id: registration.event_id }).first<EventRow>());
    const contact = { name: registration.contact_name, email: ctx.cipher.decrypt(registration.contact_email_enc) };
    const lines = registration.line_items.map((line) => ({ label: line.label, amount: line.amount }));
    const sendReceipt = registration.status === 'PAID' && registration.payment_method !== 'free';
    if (sendReceipt) {
      const receipt = await renderReceipt(trx, ctx, {
        registrationId: id,
        contact,
        event: { title: event.title, startsAt: event.startsAt },
        lines,
        amountMinor: registration.total_minor,
        paidAt: registration.paid_at ?? now,
        paymentIntentId: registration.payment_intent_id ?? undefined,
        method: registration.payment_method as ReceiptMethod,
        paidBy: registration.payment_method === 'card' ? undefined : await officePaidByMethod(trx, id),
        officePaymentKey: id,
      });
      // A repeat of a card receipt needs its own key too, or the mail API would drop it as already sent.
      receipt.message.idempotencyKey = `${receipt.message.idempotencyKey ?? `receipt-${id}`}-resent-${now.getTime()}`;
      await enqueueMail(trx, ctx.cipher, receipt, now);
    } else {
      const priced: PricedRegistration = {
        lines: lines as PricedLine[],
        subtotal: registration.total_minor,
        discount: 0,
        net: registration.total_minor - registration.surcharge_minor,
        surcharge: registration.surcharge_minor,
        total: registration.total_minor,
        attendeeCount: registration.attendee_count,
        free: registration.total_minor === 0,
      };
      // As the ledger counts them: a card part refunded or disputed at the provider is owed again, as pay-now charges it.
      const money = await registrationMoney(trx, id);
      const payments = {
        paidMinor: money.paidMinor,
        creditedMinor: money.creditedMinor,
        cardPaymentInFlight: (await cardPaymentMayArrive(trx, id, now)) !== undefined,
      };
      await queueRegistrationConfirmation(
        trx,
        ctx,
        { registrationId: id, contact, event, priced, payments, byOffice: true, idempotencySuffix: `-resent-${now.getTime()}` },
        now,
      );
    }
    const sent = sendReceipt ? 'receipt' : 'confirmation';
    const newLink = Boolean(input.newLink);
    await recordHistory(trx, { registrationId: id, action: 'resent', changes: { sent, ...(newLink ? { newLink } : {}) }, actor: input.actor, now });
    return { registrationId: id, reference, sent, newLink };
  });
}
