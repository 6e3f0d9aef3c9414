import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { listUsersByRole } from '../office-users.js';
import { AppError, NotFoundError } from '../errors.js';
import { enqueueMail } from '../mail/queue.js';
import { loadEmailBranding } from '../mail/render.js';
import { operationsAlertEmail } from './templates/operations-alert.js';
import { alertGuidance } from './alert-guidance.js';
import { paymentReference } from '../registrations/reference.js';

/**
 * Operations alerts: a charged-but-not-registered case (or a reversal that needs
 * a person) that the money-keeping policy leaves to manual handling. Each alert
 * is a row, an error-level log line with the provider ids, and an email to every
 * ADMIN queued in the caller's transaction, so it exists exactly when the change
 * that caused it was committed.
 */

export const ALERT_KINDS = [
  'sold_out',
  'event_deleted',
  'amount_mismatch',
  /** Kept for alerts raised before paid_twice and registration_cancelled replaced it. */
  'duplicate_charge',
  /** A pay-now payment for a registration that was already PAID: the registration is paid twice. */
  'paid_twice',
  /** A pay-now payment for a registration that was cancelled (or no longer exists). */
  'registration_cancelled',
  'partial_refund',
  /** A refund or dispute arrived before the payment it reverses; applied when the payment completed. */
  'reversal_applied',
  /** A refund or dispute of a payment that was kept without a registration (UNFULFILLED). */
  'reversal_unfulfilled',
  /** Paid after our staging row had expired (its payload already scrubbed). */
  'checkout_expired',
  /** Paid for a checkout carrying our ids that we have no record of. */
  'unknown_checkout',
  /** A completed checkout of ours that the provider does not know, or knows with another amount. */
  'reconcile_mismatch',
  /** The cardholder's bank asks about a payment (no money withdrawn): answer it at the provider. */
  'dispute_inquiry',
  /** A dispute the church won: the money came back, to a registration the dispute cancelled or one already cancelled before it. */
  'dispute_won',
  /** A dispute of a payment whose registration was already cancelled (refunded, or cancelled by the office). */
  'dispute_after_cancellation',
  /** Payments that cannot be recorded: their staged registrations are under a key this server lacks. */
  'payment_unreadable',
  /** A refund made at the provider failed: the money is still with the church and the payer has not got it. */
  'refund_failed',
  /** A refund at the provider of a payment the office had already paid back by hand (record-refund): the payer may have it twice. */
  'refunded_twice',
  /** One client address holds the most unpaid places it may on an event and was refused more: once per event and address while open. */
  'unpaid_seat_cap',
  /** The public form's unpaid places on an event passed its unpaidAlertShare of the capacity: once per crossing while open. */
  'unpaid_share',
  /** A part payment (an instalment, or any part of a balance) paid by card after the balance was already settled: kept, not applied. */
  'balance_already_settled',
  /** A part payment by card that came to more than was still owed (the balance was partly paid another way meanwhile): recorded, the excess kept. */
  'balance_overpaid',
  /** A registration's balance is past its due date. */
  'balance_overdue',
  /** One of several card payments of a registration paying in parts was refunded or disputed: that payment no longer counts. */
  'part_payment_reversed',
  /** One card payment of several, taken out by a dispute, came back (the dispute was won): it counts as paid again. */
  'part_payment_restored',
  /** A registration cancelled for its overdue balance (the event's overdue cancel): what was paid is kept. */
  'balance_overdue_cancelled',

  /** The registrant of a paid (or part-paid) registration asks, on the manage page, for it to be cancelled: the office decides and replies. */
  'cancellation_requested',
  /** The family ticked "We would like to talk about help with the cost": held without the unpaid-hold release until the office decides. */
  'help_requested',
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

const KIND_LABELS: Record<AlertKind, string> = {
  sold_out: 'Sold out before the payment arrived',
  event_deleted: 'Event deleted during checkout',
  amount_mismatch: 'Amount charged differs from the price',
  duplicate_charge: 'Duplicate charge',
  paid_twice: 'Registration paid twice',
  registration_cancelled: 'Payment for a cancelled registration',
  partial_refund: 'Partial refund',
  reversal_applied: 'Refund or dispute before the registration existed',
  reversal_unfulfilled: 'Refund or dispute of an unfulfilled payment',
  checkout_expired: 'Paid after the checkout expired',
  unknown_checkout: 'Payment for an unknown checkout',
  reconcile_mismatch: 'Our records differ from the provider',
  dispute_inquiry: 'Card inquiry to answer',
  dispute_won: 'Dispute won: payment returned',
  dispute_after_cancellation: 'Dispute of a cancelled registration',
  payment_unreadable: 'Payments waiting for an encryption key',
  refund_failed: 'Refund failed: the money is still with the church',
  refunded_twice: 'Refunded at the provider after a refund paid by hand',
  unpaid_seat_cap: 'Unpaid places held from one connection',
  unpaid_share: 'Many places held unpaid',
  balance_already_settled: 'Instalment paid after the balance was settled',
  balance_overpaid: 'Part payment more than the balance left',
  balance_overdue: 'Balance overdue',
  part_payment_reversed: 'One card payment of several refunded or disputed',
  part_payment_restored: 'One card payment of several back after a dispute',
  balance_overdue_cancelled: 'Cancelled for an overdue balance',

  cancellation_requested: 'Registrant asks the office to cancel',
  help_requested: 'Family asks about help with the cost',
};

export interface OperationsAlertInput {
  kind: AlertKind;
  /** One sentence an administrator can act on. No payer contact details: the row is not encrypted. */
  reason: string;
  checkoutId?: string;
  providerSessionId?: string;
  paymentIntentId?: string;
  amountMinor?: number;
  /** Further non-personal facts (event id, registration id, amounts). */
  details?: Record<string, string | number | boolean | null>;
  /** The payer, so an administrator can reach them: in the (encrypted) email only, never in the row or the log. */
  payer?: { name: string; email: string };
}

export interface OperationsAlert {
  id: number;
  kind: string;
  reason: string;
  details: Record<string, unknown>;
  checkoutId: string | null;
  providerSessionId: string | null;
  paymentIntentId: string | null;
  amountMinor: number | null;
  createdAt: Date;
  resolvedAt: Date | null;
  resolution: string | null;
}

type AlertContext = Pick<AppContext, 'config' | 'clock' | 'logger' | 'cipher'>;

export async function raiseOperationsAlert(
  trx: Knex.Transaction,
  ctx: AlertContext,
  input: OperationsAlertInput,
): Promise<{ id: number; recipients: number }> {
  const now = ctx.clock.now();
  const [row] = await trx('operations_alerts')
    .insert({
      kind: input.kind,
      reason: input.reason,
      details: JSON.stringify(input.details ?? {}),
      checkout_session_id: input.checkoutId ?? null,
      provider_session_id: input.providerSessionId ?? null,
      payment_intent_id: input.paymentIntentId ?? null,
      amount_minor: input.amountMinor ?? null,
      created_at: now,
    })
    .returning<Array<{ id: number }>>('id');
  if (!row) throw new Error('operations_alerts insert returned no row');

  ctx.logger.error(
    {
      alertId: row.id,
      alertKind: input.kind,
      checkoutId: input.checkoutId,
      providerSessionId: input.providerSessionId,
      paymentIntentId: input.paymentIntentId,
      amountMinor: input.amountMinor,
    },
    `operations alert: ${input.reason}`,
  );

  const recipients = await alertRecipients(trx, ctx);
  if (recipients.length === 0) {
    ctx.logger.error({ alertId: row.id }, 'operations alert has no recipient: add an ADMIN user or set MAIL_FROM');
    return { id: row.id, recipients: 0 };
  }
  const branding = await loadEmailBranding(trx, ctx.config);
  const registrationId = alertRegistrationId(input.details ?? {});
  const reference = registrationId ? paymentReference(registrationId) : undefined;
  const rendered = operationsAlertEmail(
    {
      alertId: row.id,
      kindLabel: KIND_LABELS[input.kind],
      ...alertGuidance(input.kind, row.id, reference),
      reason: asSentence(input.reason),
      reference,
      payer: input.payer ? `${input.payer.name} <${input.payer.email}>` : undefined,
      amountMinor: input.amountMinor,
      details: alertDetails(row.id, input),
    },
    branding,
  );
  for (const to of recipients) {
    await enqueueMail(
      trx,
      ctx.cipher,
      { kind: 'operations-alert', message: { to: [to], ...rendered, idempotencyKey: `operations-alert-${row.id}-${to}` } },
      now,
    );
  }
  return { id: row.id, recipients: recipients.length };
}

/** Every ADMIN; with none, the configured sender (MAIL_FROM, else the SMTP user). */
async function alertRecipients(trx: Knex.Transaction, ctx: AlertContext): Promise<string[]> {
  const admins = await listUsersByRole({ db: trx, cipher: ctx.cipher }, ['ADMIN']);
  if (admins.length > 0) return admins.map((admin) => admin.email);
  const fallback = ctx.config.mailFrom ?? ctx.config.smtp?.user;
  return fallback ? [fallback] : [];
}

/** The registration an alert is about, as its details name it: the one it concerns, or the one that answered it. */
export function alertRegistrationId(details: Record<string, unknown>): string | undefined {
  const id = details.registrationId ?? details.registeredAs;
  return typeof id === 'string' && id !== '' ? id : undefined;
}

/** "charged … ; check it" → "Charged … ; check it." */
function asSentence(text: string): string {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** The ids and raw values a person looks things up with, for the email's details block at its end. */
function alertDetails(alertId: number, input: OperationsAlertInput): Array<{ label: string; value: string }> {
  const details: Array<{ label: string; value: string }> = [{ label: 'Alert', value: `${alertId} (${input.kind})` }];
  if (input.paymentIntentId) details.push({ label: 'PaymentIntent', value: input.paymentIntentId });
  if (input.providerSessionId) details.push({ label: 'Checkout session', value: input.providerSessionId });
  if (input.checkoutId) details.push({ label: 'Our checkout id', value: input.checkoutId });
  if (input.amountMinor !== undefined) details.push({ label: 'amountMinor', value: String(input.amountMinor) });
  for (const [label, value] of Object.entries(input.details ?? {})) {
    if (value !== null) details.push({ label, value: String(value) });
  }
  return details;
}

interface AlertRow {
  id: number;
  kind: string;
  reason: string;
  details: Record<string, unknown>;
  checkout_session_id: string | null;
  provider_session_id: string | null;
  payment_intent_id: string | null;
  amount_minor: number | null;
  created_at: Date;
  resolved_at: Date | null;
  resolution: string | null;
}

function alertFromRow(row: AlertRow): OperationsAlert {
  return {
    id: row.id,
    kind: row.kind,
    reason: row.reason,
    details: row.details,
    checkoutId: row.checkout_session_id,
    providerSessionId: row.provider_session_id,
    paymentIntentId: row.payment_intent_id,
    amountMinor: row.amount_minor,
    createdAt: row.created_at,
    resolvedAt: row.resolved_at,
    resolution: row.resolution,
  };
}

/** Open alerts (oldest first), or every alert with `all`. */
export async function listOperationsAlerts(db: Db, options: { all?: boolean } = {}): Promise<OperationsAlert[]> {
  const query = db('operations_alerts').select<AlertRow[]>('*').orderBy('id');
  if (!options.all) query.whereNull('resolved_at');
  return (await query).map(alertFromRow);
}

export async function countOpenAlerts(db: Db): Promise<number> {
  const row = await db('operations_alerts').whereNull('resolved_at').count<{ count: number }>({ count: '*' }).first();
  return Number(row?.count ?? 0);
}

/** Marks an alert handled with an optional note of what was done; refuses one already resolved, saying when in `timeZone` (APP_TIMEZONE). */
export async function resolveOperationsAlert(db: Db, id: number, note: string | undefined, now: Date, timeZone: string): Promise<OperationsAlert> {
  const [row] = await db('operations_alerts')
    .where({ id })
    .whereNull('resolved_at')
    .update({ resolved_at: now, resolution: note ?? null })
    .returning<AlertRow[]>('*');
  if (row) return alertFromRow(row);
  const existing = await db('operations_alerts').where({ id }).first<AlertRow | undefined>();
  if (!existing) throw new NotFoundError(`alert ${id}`, 'list open alerts with `eventops alerts list`');
  // Loaded only here: the webhook and the jobs raise alerts and never show a local time.
  const { localMinute } = await import('../local-time.js');
  const when = existing.resolved_at ? localMinute(existing.resolved_at, timeZone) : '?';
  throw new AppError('alert_already_resolved', `alert ${id} was already resolved on ${when}`, {
    suggestion: 'see every alert with `eventops alerts list --all`',
  });
}
