import { keptCardPayment, type AlertPaymentColumns } from './kept-card-payment.js';

/**
 * The card payment that pays a registration made by `add --resolve-alert`: one the provider took and
 * we kept without a registration. No checkout of the registration links to it (its checkout, if any,
 * stays unlinked), so the alert the registration answered is its record.
 */
export interface CardPaymentFromAlert {
  alertId: number;
  method: 'card';
  amountMinor: number;
  /** Its reference at the card provider, as the receipt names it: the PaymentIntent, else the Checkout Session. */
  providerReference: string;
  /** When the payment reached us: its alert was raised. */
  receivedAt: Date;
  /** When the office recorded it on this registration (resolving the alert). */
  recordedAt: Date;
}

export interface AnsweredAlertRow extends AlertPaymentColumns {
  details: Record<string, unknown>;
  created_at: Date;
  resolved_at: Date | null;
}

/** Among a card registration's alerts, the card payment of the one it answered, if any. */
export function cardPaymentFromAlert(registrationId: string, alerts: readonly AnsweredAlertRow[]): CardPaymentFromAlert | null {
  for (const alert of alerts) {
    if (alert.details.registeredAs !== registrationId || !alert.resolved_at || alert.amount_minor === null) continue;
    const payment = keptCardPayment(alert);
    const providerReference = payment?.paymentIntentId ?? payment?.providerSessionId;
    if (!providerReference) continue;
    return {
      alertId: Number(alert.id),
      method: 'card',
      amountMinor: alert.amount_minor,
      providerReference,
      receivedAt: alert.created_at,
      recordedAt: alert.resolved_at,
    };
  }
  return null;
}
