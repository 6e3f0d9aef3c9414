import type { AppContext } from '../../context.js';
import { listDirectEmails } from '../../db/registration-emails.js';
import { paymentReference } from '../../registrations/reference.js';
import type { PaymentMethod, RegistrationStatus } from '../../registrations/registrations.js';
import { cardPaymentFromAlert, type AnsweredAlertRow, type CardPaymentFromAlert } from './card-payment-from-alert.js';
import { listHistory, type HistoryEntry } from '../../registrations/history.js';
import { resolveRegistrationId, type RegistrationRow } from './lookup.js';
import { listOfficePayments, type OfficePayment } from '../../registrations/ledger.js';
import { registrationMoney } from '../../registrations/ledger.js';
import { listCredits, type CreditEntry } from '../../registrations/credits.js';
import { officePaidByMethod, type PaidByMethod } from '../../registrations/paid-by.js';
import { loadAnswersView, type AnswersView } from './answers-view.js';
import { listCheckinLog, type CheckinLogEntry } from '../../registrations/checkin/records.js';
import { helpRequestWord } from '../../registrations/help-requests.js';
import { registrationAddonEntries, type AddonEntry } from '../../registrations/addon-records.js';

export interface RegistrationDetail {
  id: string;
  reference: string;
  event: { slug: string; title: string; startsAt: Date };
  status: RegistrationStatus;
  method: PaymentMethod;
  contact: { name: string; email: string; mobile: string | null };
  family: boolean;
  attendees: Array<{ name: string; tier: string; tierLabel: string }>;
  /** Its add-ons, each at the price it was made at. */
  addons: AddonEntry[];
  lines: Array<{ label: string; amount: number }>;
  totalMinor: number;
  /** The church-local day (yyyy-MM-dd) whose prices it was made at: fixed then, never priced again. */
  pricedOn: string | null;
  /** The code it used, as written, and what it took off (minor units); null without one. */
  code: { code: string; discountMinor: number } | null;
  paidMinor: number;
  /** Paid back by hand by the office (`registrations record-refund`); already taken off paidMinor. */
  refundedMinor: number;
  /** Help with the cost from named funds, net of reversals; not in paidMinor. */
  creditedMinor: number;
  /** total − paid − credited while PENDING, else 0 (registration_money). */
  balanceMinor: number;
  /** The family asked to talk about help with the cost: open until the office decides (registrations/help-requests.ts); null when never asked. */
  helpRequest: { state: 'open' | 'decided'; requestedAt: Date; decidedAt: Date | null; decidedBy: string | null } | null;
  createdAt: Date;
  paidAt: Date | null;
  cancelledAt: Date | null;
  cancelReason: string | null;
  cardPayments: Array<{ checkoutId: string; status: string; providerSessionId: string | null; paymentIntentId: string | null; amountMinor: number; createdAt: Date; completedAt: Date | null }>;
  /** Paid by a card payment kept without a registration (`add --resolve-alert`): no checkout of its own. */
  cardPaymentFromAlert: CardPaymentFromAlert | null;
  /**
   * A card payment that made the registration PAID and that no checkout of it records completed nor an answered
   * alert: the registration's own record of it (a registration seeded or restored with its PaymentIntent).
   */
  cardPaymentOfRecord: { amountMinor: number; paidAt: Date; paymentIntentId: string | null } | null;
  officePayments: OfficePayment[];
  /** Credits from named funds and their reversals (`registrations credit`), oldest first. */
  credits: CreditEntry[];
  /** What the office received by each method, in the order first used. */
  officePaidBy: PaidByMethod[];
  emails: Array<{ id: number; kind: string; subject: string | null; status: string; queuedAt: Date; sentAt: Date | null }>;
  alerts: Array<{ id: number; kind: string; reason: string; createdAt: Date; resolvedAt: Date | null; resolution: string | null }>;
  history: HistoryEntry[];
  /** The answers to the event's questions; sensitive ones only when asked for (`--sensitive`). */
  answers: AnswersView;
  /** Check-ins, undos and check-outs at the door, with the check-in link's label. */
  checkins: CheckinLogEntry[];
}

/** Everything about one registration; its contact and its emails' subjects are decrypted for this display only. */
export async function showRegistration(
  ctx: Pick<AppContext, 'db' | 'cipher' | 'config'>,
  given: string,
  options: { sensitive?: boolean } = {},
): Promise<RegistrationDetail> {
  const id = await resolveRegistrationId(ctx.db, given);
  const row = await ctx.db('registrations').where({ id }).first<RegistrationRow>();
  const event = await ctx.db('events').where({ id: row.event_id }).first<{ slug: string; title: string; starts_at: Date; pricing: { tiers: Array<{ id: string; label: string }>; addons?: Array<{ id: string; label: string }> } }>();
  const tierLabels = new Map(event.pricing.tiers.map((tier) => [tier.id, tier.label]));

  const checkouts = await ctx.db('checkout_sessions')
    .where({ registration_id: id })
    .orderBy('created_at')
    .select<Array<{ id: string; status: string; provider_session_id: string | null; payment_intent_id: string | null; net_minor: number; surcharge_minor: number; created_at: Date; completed_at: Date | null }>>('*');
  const officePayments = await listOfficePayments(ctx.db, id);
  const mails = await ctx.db('queued_mail')
    .where({ registration_id: id })
    .orderBy('id')
    .select<Array<{ id: number; kind: string; message_enc: string; status: string; created_at: Date; sent_at: Date | null }>>('id', 'kind', 'message_enc', 'status', 'created_at', 'sent_at');
  const checkoutIds = checkouts.map((c) => c.id);
  const alerts = await ctx.db('operations_alerts')
    .where((q) => {
      q.whereRaw(`details->>'registrationId' = ?`, [id]).orWhereRaw(`details->>'registeredAs' = ?`, [id]);
      if (checkoutIds.length > 0) q.orWhereIn('checkout_session_id', checkoutIds);
      if (row.payment_intent_id) q.orWhere('payment_intent_id', row.payment_intent_id);
    })
    .orderBy('id')
    .select<Array<AnsweredAlertRow & { reason: string; resolution: string | null }>>('*');

  const fromAlert = row.payment_method === 'card' ? cardPaymentFromAlert(id, alerts) : null;
  // The ledger's figures: a full refund or a dispute took the card payment back; help is not money paid.
  const money = await registrationMoney(ctx.db, id);
  return {
    id,
    reference: paymentReference(id),
    event: { slug: event.slug, title: event.title, startsAt: event.starts_at },
    status: row.status,
    method: row.payment_method,
    contact: {
      name: row.contact_name,
      email: ctx.cipher.decrypt(row.contact_email_enc),
      mobile: row.contact_mobile_enc ? ctx.cipher.decrypt(row.contact_mobile_enc) : null,
    },
    family: row.family,
    attendees: row.attendees.map((a) => ({ name: a.name, tier: a.tier, tierLabel: tierLabels.get(a.tier) ?? a.tier })),
    addons: await registrationAddonEntries(ctx.db, id, event.pricing, row.attendees),
    lines: row.line_items.map((line) => ({ label: line.label, amount: line.amount })),
    totalMinor: row.total_minor,
    pricedOn: row.priced_on ?? null,
    code: row.code_id ? { code: await codeText(ctx, row.code_id), discountMinor: row.code_discount_minor } : null,
    paidMinor: money.paidMinor,
    refundedMinor: money.refundedMinor,
    creditedMinor: money.creditedMinor,
    balanceMinor: money.balanceMinor,
    helpRequest: row.help_requested_at
      ? { state: helpRequestWord(row) ?? 'decided', requestedAt: row.help_requested_at, decidedAt: row.help_decided_at ?? null, decidedBy: row.help_decided_by ?? null }
      : null,
    createdAt: row.created_at,
    paidAt: row.paid_at,
    cancelledAt: row.cancelled_at,
    cancelReason: row.cancel_reason,
    cardPayments: checkouts.map((c) => ({
      checkoutId: c.id,
      status: c.status,
      providerSessionId: c.provider_session_id,
      paymentIntentId: c.payment_intent_id,
      amountMinor: c.net_minor + c.surcharge_minor,
      createdAt: c.created_at,
      completedAt: c.completed_at,
    })),
    cardPaymentFromAlert: fromAlert,
    cardPaymentOfRecord:
      row.payment_method === 'card' && row.paid_at && !fromAlert && !checkouts.some((c) => c.status === 'COMPLETED')
        ? { amountMinor: row.total_minor, paidAt: row.paid_at, paymentIntentId: row.payment_intent_id }
        : null,
    officePayments,
    credits: await listCredits(ctx.db, id),
    officePaidBy: await officePaidByMethod(ctx.db, id),
    emails: [
      ...mails.map((mail) => ({ id: Number(mail.id), kind: mail.kind, subject: subjectOf(ctx, mail.message_enc), status: mail.status, queuedAt: mail.created_at, sentAt: mail.sent_at })),
      // Reminders go straight from their job, not through the queue.
      ...(await listDirectEmails(ctx.db, id)).map((mail) => ({ id: mail.id, kind: mail.kind, subject: null, status: 'SENT', queuedAt: mail.sentAt, sentAt: mail.sentAt })),
    ].sort((a, b) => a.queuedAt.getTime() - b.queuedAt.getTime()),
    alerts: alerts.map((a) => ({ id: Number(a.id), kind: a.kind, reason: a.reason, createdAt: a.created_at, resolvedAt: a.resolved_at, resolution: a.resolution })),
    history: await listHistory(ctx.db, id),
    answers: await loadAnswersView(ctx, id, { showSensitive: Boolean(options.sensitive) }),
    checkins: await listCheckinLog(ctx.db, id),
  };
}

async function codeText(ctx: Pick<AppContext, 'db'>, codeId: string): Promise<string> {
  const code = await ctx.db('discount_codes').where({ id: codeId }).first<{ code: string } | undefined>('code');
  return code?.code ?? codeId;
}

function subjectOf(ctx: Pick<AppContext, 'cipher'>, messageEnc: string): string | null {
  try {
    const parsed = JSON.parse(ctx.cipher.decrypt(messageEnc)) as { subject?: unknown };
    return typeof parsed.subject === 'string' ? parsed.subject : null;
  } catch {
    return null;
  }
}
