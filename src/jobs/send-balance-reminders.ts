import type { AppContext } from '../context.js';
import { localDay } from '../local-time.js';
import { enqueueMail } from '../mail/queue.js';
import { loadEmailBranding } from '../mail/render.js';
import { balanceReminderEmail } from './templates/balance-reminders.js';
import { moneyFormatter } from '../money-format.js';
import { raiseOperationsAlert } from '../payments/alerts.js';
import { belowCardMinimum } from '../payments/card-minimum.js';
import { cardPaymentPossible, payNowUrl, registrationUrl } from '../payments/links.js';
import { cardSurcharge, type CardFeeRate } from '../registrations/pricing.js';
import { getCardFeeRate } from '../settings.js';
import { addDays, amountDueFor, daysBetween, nextUnmetStep, type BalanceTerms } from '../registrations/balance-terms.js';
import { scheduleOf } from '../registrations/deposits.js';
import { registrationMoney } from '../registrations/ledger.js';

/** Days before a due date that its first reminder goes. */
export const BALANCE_REMINDER_DAYS_BEFORE = 3;

type ReminderKind = 'before' | 'on' | 'overdue' | 'cancelled';

export interface BalanceReminderSummary {
  /** Reminders queued (on a dry run: that would be). */
  sent: number;
  overdue: number;
  cancelled: number;
  wouldDo?: string[];
}

interface Candidate {
  id: string;
  event_id: string;
  contact_name: string;
  contact_email_enc: string;
  manage_link_version: number;
  title: string;
  balance_terms: BalanceTerms | null;
  online_payment: boolean;
  pass_card_fee: boolean;
}

/**
 * Balance reminders for registrations paying in parts (registration_schedules), PENDING and owing, on
 * events that have not started: before each due date (BALANCE_REMINDER_DAYS_BEFORE) and on it, with a
 * pay-now link for exactly what that date asks (never more than the balance left); once a date has
 * passed unmet, the office's balance_overdue alert and one reminder; with the event's overdue cancel,
 * the registration is cancelled N days after, keeping what was paid. Each is recorded once
 * (balance_reminders), so a rerun sends nothing twice, and nothing goes once the balance is 0.
 * Run by send-reminders, so each run is in the run history with the event reminders.
 */
export async function sendBalanceReminders(ctx: AppContext, options: { dryRun?: boolean } = {}): Promise<BalanceReminderSummary> {
  const now = ctx.clock.now();
  const today = localDay(now, ctx.config.regional.timeZone);
  const summary: BalanceReminderSummary = { sent: 0, overdue: 0, cancelled: 0, ...(options.dryRun ? { wouldDo: [] } : {}) };
  const candidates = await ctx.db('registrations as r')
    .join('events as e', 'e.id', 'r.event_id')
    .where('r.status', 'PENDING')
    .whereNull('e.deleted_at')
    .where('e.starts_at', '>', now)
    .whereExists((q) => q.from('registration_schedules as s').whereRaw('s.registration_id = r.id'))
    .select<Candidate[]>('r.id', 'r.event_id', 'r.contact_name', 'r.contact_email_enc', 'r.manage_link_version', 'e.title', 'e.balance_terms', 'e.online_payment', 'e.pass_card_fee');
  if (candidates.length === 0) return summary;
  const cardFee = await getCardFeeRate(ctx.db);
  const branding = await loadEmailBranding(ctx.db, ctx.config);
  const money = moneyFormatter(ctx.config.regional);
  for (const registration of candidates) {
    await ctx.db.transaction(async (trx) => {
      const locked = await trx('registrations').where({ id: registration.id, status: 'PENDING' }).forUpdate().first('id');
      if (!locked) return;
      const ledger = await registrationMoney(trx, registration.id);
      if (ledger.balanceMinor <= 0) return;
      const schedule = await scheduleOf(trx, registration.id);
      const settled = ledger.paidMinor + ledger.creditedMinor;
      const step = schedule && nextUnmetStep(schedule.steps, settled);
      if (!step) return;
      const kind = reminderKindFor(step.dueOn, today, registration.balance_terms);
      if (!kind) return;
      const due = amountDueFor(step, settled, ledger.balanceMinor);
      if (options.dryRun) {
        const done = await trx('balance_reminders').where({ registration_id: registration.id, seq: step.seq, kind }).first('seq');
        if (done) return;
        summary.wouldDo?.push(kind === 'cancelled' ? `cancel ${registration.id} (balance overdue since ${step.dueOn})` : `${kind} balance reminder to ${registration.contact_name} for "${registration.title}": ${money(due)} due ${step.dueOn}`);
        if (kind === 'cancelled') summary.cancelled += 1;
        else summary.sent += 1;
        if (kind === 'overdue') summary.overdue += 1;
        return;
      }
      const [claimed] = await trx('balance_reminders')
        .insert({ registration_id: registration.id, seq: step.seq, kind, sent_at: now })
        .onConflict(['registration_id', 'seq', 'kind'])
        .ignore()
        .returning('seq');
      if (!claimed) return;
      if (kind === 'cancelled') {
        await trx('registrations').where({ id: registration.id }).update({ status: 'CANCELLED', cancelled_at: now, cancel_reason: 'overdue_balance', updated_at: now });
        await raiseOperationsAlert(trx, ctx, {
          kind: 'balance_overdue_cancelled',
          reason: `cancelled ${daysBetween(step.dueOn, today)} days after its balance was due (${step.dueOn}); what was paid (${money(ledger.paidMinor)}) is kept`,
          amountMinor: ledger.balanceMinor,
          details: { registrationId: registration.id, eventId: registration.event_id, dueOn: step.dueOn, paidMinor: ledger.paidMinor },
        });
        summary.cancelled += 1;
        return;
      }
      if (kind === 'overdue') {
        await raiseOperationsAlert(trx, ctx, {
          kind: 'balance_overdue',
          reason: `${money(due)} was due on ${step.dueOn} and has not been paid (balance ${money(ledger.balanceMinor)})`,
          amountMinor: due,
          details: { registrationId: registration.id, eventId: registration.event_id, dueOn: step.dueOn, balanceMinor: ledger.balanceMinor },
        });
        summary.overdue += 1;
      }
      const links = linksFor(ctx, registration, due, byCard(ctx, registration, due, cardFee));
      const rendered = balanceReminderEmail(
        { name: registration.contact_name, eventTitle: registration.title, overdue: kind === 'overdue', today: kind === 'on', dueMinor: due, balanceMinor: ledger.balanceMinor, dueOn: step.dueOn, ...links },
        branding,
      );
      await enqueueMail(trx, ctx.cipher, {
        kind: 'balance-reminder',
        registrationId: registration.id,
        message: { to: [ctx.cipher.decrypt(registration.contact_email_enc)], ...rendered, idempotencyKey: `balance-${registration.id}-${step.seq}-${kind}` },
      }, now);
      summary.sent += 1;
    });
  }
  return summary;
}

/**
 * Whether `due` can be paid by card in one payment: card payment is possible for the event, and what its checkout
 * would charge (the amount and its own card fee) reaches the provider's minimum.
 */
function byCard(ctx: AppContext, registration: Candidate, due: number, cardFee: CardFeeRate): boolean {
  if (!cardPaymentPossible(ctx.config, registration)) return false;
  return !belowCardMinimum(ctx.config, due + (registration.pass_card_fee ? cardSurcharge(due, cardFee) : 0));
}

/** The pay-now link for exactly `due` (when a card can pay it), and the registration page; none without a public URL. */
function linksFor(ctx: AppContext, registration: Candidate, due: number, payableByCard: boolean): { payNowUrl?: string; registrationUrl?: string } {
  try {
    return {
      ...(payableByCard ? { payNowUrl: `${payNowUrl(ctx.config, registration.id, registration.manage_link_version)}&amount=${due}` } : {}),
      registrationUrl: registrationUrl(ctx.config, registration.id, registration.manage_link_version),
    };
  } catch {
    return {};
  }
}

/** Which reminder a step due on `dueOn` takes on `today`, if any; overdue cancel from afterDays past the date. */
export function reminderKindFor(dueOn: string, today: string, terms: BalanceTerms | null): ReminderKind | undefined {
  if (today > dueOn) {
    const cancelAfter = terms && typeof terms.overdue === 'object' ? terms.overdue.cancel.afterDays : undefined;
    if (cancelAfter !== undefined && today >= addDays(dueOn, cancelAfter)) return 'cancelled';
    return 'overdue';
  }
  if (today === dueOn) return 'on';
  return daysBetween(today, dueOn) <= BALANCE_REMINDER_DAYS_BEFORE ? 'before' : undefined;
}
