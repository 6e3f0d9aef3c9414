import type { AppContext } from '../context.js';
import { paymentReference } from '../registrations/reference.js';
import { alertRegistrationId, type OperationsAlert } from './alerts.js';
import { decryptStagedRegistration } from './staging.js';

/** Who an alert is about, as `alerts list` shows it: the registration's reference and the payer's name, when known. */
export interface AlertParties {
  reference: string | null;
  payerName: string | null;
}

/**
 * The registration and payer of each alert. The registration is the one its details name, else the one its card
 * payment or checkout belongs to; the payer is that registration's contact, else the contact staged (encrypted) with
 * the checkout of a payment kept without a registration. A payload under a key this server lacks names nobody.
 */
export async function alertParties(ctx: Pick<AppContext, 'db' | 'cipher'>, alerts: OperationsAlert[]): Promise<Map<number, AlertParties>> {
  const checkoutIds = [...new Set(alerts.flatMap((a) => (a.checkoutId ? [a.checkoutId] : [])))];
  const paymentIntentIds = [...new Set(alerts.flatMap((a) => (a.paymentIntentId ? [a.paymentIntentId] : [])))];
  const checkouts = checkoutIds.length
    ? await ctx.db('checkout_sessions')
        .whereIn('id', checkoutIds)
        .select<Array<{ id: string; registration_id: string | null; payload_enc: string | null }>>('id', 'registration_id', 'payload_enc')
    : [];
  const byCheckout = new Map(checkouts.map((c) => [c.id, c]));
  const paidBy = paymentIntentIds.length
    ? await ctx.db('registrations').whereIn('payment_intent_id', paymentIntentIds).select<Array<{ id: string; payment_intent_id: string }>>('id', 'payment_intent_id')
    : [];
  // A later card payment of a registration paying in parts is on its ledger row only.
  const paidByPart = paymentIntentIds.length
    ? await ctx.db('registration_payments')
        .where({ method: 'card' })
        .whereIn('payment_intent_id', paymentIntentIds)
        .select<Array<{ id: string; payment_intent_id: string }>>('registration_id as id', 'payment_intent_id')
    : [];
  const byPaymentIntent = new Map([...paidByPart, ...paidBy].map((r) => [r.payment_intent_id, r.id]));

  const registrationOf = (alert: OperationsAlert): string | undefined =>
    alertRegistrationId(alert.details) ??
    (alert.paymentIntentId ? byPaymentIntent.get(alert.paymentIntentId) : undefined) ??
    (alert.checkoutId ? (byCheckout.get(alert.checkoutId)?.registration_id ?? undefined) : undefined);
  const registrationIds = [...new Set(alerts.flatMap((a) => registrationOf(a) ?? []))];
  const contacts = registrationIds.length
    ? await ctx.db('registrations').whereIn('id', registrationIds).select<Array<{ id: string; contact_name: string }>>('id', 'contact_name')
    : [];
  const contactOf = new Map(contacts.map((r) => [r.id, r.contact_name]));

  const stagedPayer = (checkoutId: string | null): string | null => {
    const payload = checkoutId ? byCheckout.get(checkoutId)?.payload_enc : null;
    if (!payload) return null;
    try {
      return decryptStagedRegistration(ctx.cipher, payload).contact.name;
    } catch {
      return null;
    }
  };
  return new Map(
    alerts.map((alert) => {
      const registrationId = registrationOf(alert);
      return [
        alert.id,
        {
          reference: registrationId ? paymentReference(registrationId) : null,
          payerName: (registrationId ? contactOf.get(registrationId) : undefined) ?? stagedPayer(alert.checkoutId),
        },
      ];
    }),
  );
}
