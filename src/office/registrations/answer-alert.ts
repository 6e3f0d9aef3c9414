import type { Knex } from 'knex';
import { AppError, NotFoundError } from '../../errors.js';
import { localDay } from '../../local-time.js';
import type { AlertKind } from '../../payments/alerts.js';
import { paymentReference } from '../../registrations/reference.js';
import type { RegisteredWithoutCard } from '../../signup/register.js';
import { keptCardPayment, settleKeptCardPayment, type AlertPaymentColumns, type CardSettlement } from './kept-card-payment.js';

/** How `add` was told the money came: received by the office, the alert's card payment, or not yet. */
export type AddPaid = 'bank' | 'cash' | 'card' | 'none';

/** Alerts for a payment kept without a registration: the ones a registration made by hand answers. */
const ANSWERED_BY_REGISTERING: ReadonlySet<string> = new Set<AlertKind>([
  'sold_out',
  'event_deleted',
  'amount_mismatch',
  'checkout_expired',
  'unknown_checkout',
  'registration_cancelled',
  'dispute_won',
]);

interface AlertRow extends AlertPaymentColumns {
  details: Record<string, unknown>;
  resolved_at: Date | null;
}

export interface AlertAnswer {
  registered: RegisteredWithoutCard;
  paid: AddPaid;
  note: string | undefined;
  timeZone: string;
  money: (minor: number) => string;
  now: Date;
}

/**
 * Resolves the open alert as answered by the registration just made, in its transaction: an alert of
 * another kind or event, or one already resolved, refuses the whole command. The alert's card payment,
 * when it names one, is what pays the registration (see settleKeptCardPayment).
 */
export async function answerAlert(trx: Knex.Transaction, alertId: number, answer: AlertAnswer): Promise<{ card?: CardSettlement }> {
  const alert = await trx('operations_alerts').where({ id: alertId }).forUpdate().first<AlertRow | undefined>();
  if (!alert) throw new NotFoundError(`alert ${alertId}`, 'list open alerts with `eventops alerts list`; nothing was registered');
  if (alert.resolved_at) {
    throw new AppError('alert_already_resolved', `alert ${alertId} was already resolved on ${localDay(alert.resolved_at, answer.timeZone)}; nothing was registered`, {
      exitCode: 1,
      suggestion: 'run the command again without --resolve-alert if the registration is still wanted',
    });
  }
  const refuse = (why: string, suggestion: string) =>
    new AppError('alert_not_answered', `alert ${alertId} ${why}; nothing was registered`, { exitCode: 1, suggestion });
  if (!ANSWERED_BY_REGISTERING.has(alert.kind)) {
    throw refuse(`is a ${alert.kind} alert, not a payment kept without a registration`, 'resolve it with `eventops alerts resolve` once handled');
  }
  if (typeof alert.details.eventId === 'string' && alert.details.eventId !== answer.registered.event.id) {
    throw refuse('is for a payment for another event', 'check the alert with `eventops alerts list` and name its event with --event');
  }
  const payment = keptCardPayment(alert);
  if (answer.paid === 'none') {
    // The payer's money is already here: a PENDING registration would ask them to pay again.
    throw refuse(
      'is for money already received',
      payment ? 'leave out --paid (or give --paid card): the card payment pays the registration' : 'add --paid bank or --paid cash, so the registration is PAID and no payment is asked for',
    );
  }
  if (payment && answer.paid !== 'card') {
    throw refuse(
      `is for a card payment (${payment.paymentIntentId ?? payment.providerSessionId}), so the registration is paid by card, not by ${answer.paid}`,
      `leave out --paid (or give --paid card); if that payment was refunded and the money came another way, resolve the alert with \`eventops alerts resolve ${alertId}\` and register without --resolve-alert`,
    );
  }
  if (!payment && answer.paid === 'card') {
    throw refuse('names no card payment', 'add --paid bank or --paid cash for money the office received');
  }
  const card = payment ? await settleKeptCardPayment(trx, payment, answer.registered, answer.money, answer.now) : undefined;

  const resolution = `registered by hand as ${paymentReference(answer.registered.registrationId)}${answer.note ? `: ${answer.note}` : ''}`;
  await trx('operations_alerts')
    .where({ id: alertId })
    .update({
      resolved_at: answer.now,
      resolution,
      details: trx.raw(`details || ?::jsonb`, [JSON.stringify({ registeredAs: answer.registered.registrationId })]),
    });
  return { card };
}
