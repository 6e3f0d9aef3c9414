import type { AppContext } from '../context.js';
import { localDay } from '../local-time.js';
import { enqueueMail } from '../mail/queue.js';
import { moneyFormatter } from '../money-format.js';
import { raiseOperationsAlert } from '../payments/alerts.js';
import { payNowUrl } from '../payments/links.js';
import { addDays, amountDueFor, daysBetween, nextUnmetStep, type BalanceTerms } from '../registrations/balance-terms.js';
import { scheduleOf } from '../registrations/deposits.js';
import { registrationMoney } from '../registrations/ledger.js';

/** Days before a due date that its first reminder goes. */
export const BALANCE_REMINDER_DAYS_BEFORE = 3;

type ReminderKind = 'before' | 'on' | 'overdue' | 'cancelled';

export interface BalanceReminderSummary {
  sent: number;
  overdue: number;
  cancelled: number;
}

interface Candidate {
  id: string;
  event_id: string;
  contact_name: string;
  contact_email_enc: string;
  manage_link_version: number;
  title: string;
  balance_terms: BalanceTerms | null;
}

/**
 * Balance reminders for registrations paying in parts (registration_schedules), PENDING and owing, on
 * events that have not started: before each due date (BALANCE_REMINDER_DAYS_BEFORE) and on it, with a
 * pay-now link for exactly what that date asks (never more than the balance left); once a date has
 * passed unmet, the office's balance_overdue alert and one reminder; with the event's overdue cancel,
 * the registration is cancelled N days after, keeping what was paid. Each is recorded once
 * (balance_reminders), so a rerun sends nothing twice, and nothing goes once the balance is 0.
 */
export async function sendBalanceReminders(ctx: AppContext, options: { runId?: string } = {}): Promise<BalanceReminderSummary> {
  const now = ctx.clock.now();
  const today = localDay(now, ctx.config.regional.timeZone);
  const money = moneyFormatter(ctx.config.regional);
  const summary: BalanceReminderSummary = { sent: 0, overdue: 0, cancelled: 0 };
  const candidates = await ctx.db('registrations as r')
    .join('events as e', 'e.id', 'r.event_id')
    .where('r.status', 'PENDING')
    .whereNull('e.deleted_at')
    .where('e.starts_at', '>', now)
    .whereExists((q) => q.from('registration_schedules as s').whereRaw('s.registration_id = r.id'))
    .select<Candidate[]>('r.id', 'r.event_id', 'r.contact_name', 'r.contact_email_enc', 'r.manage_link_version', 'e.title', 'e.balance_terms');
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
      const [claimed] = await trx('balance_reminders')
        .insert({ registration_id: registration.id, seq: step.seq, kind, sent_at: now, run_id: options.runId ?? null })
        .onConflict(['registration_id', 'seq', 'kind'])
        .ignore()
        .returning('seq');
      if (!claimed) return;
      const due = amountDueFor(step, settled, ledger.balanceMinor);
      const email = ctx.cipher.decrypt(registration.contact_email_enc);
      if (kind === 'cancelled') {
        await trx('registrations').where({ id: registration.id }).update({ status: 'CANCELLED', cancelled_at: now, cancel_reason: 'overdue_balance', updated_at: now });
        await raiseOperationsAlert(trx, ctx, {
          kind: 'balance_overdue_cancelled',
          reason: `cancelled ${daysBetween(step.dueOn, today)} days after its balance was due (${step.dueOn}); what was paid is kept`,
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
      const link = `${payNowUrl(ctx.config, registration.id, registration.manage_link_version)}&amount=${due}`;
      const lead = kind === 'overdue' ? `${money(due)} was due on ${step.dueOn}` : kind === 'on' ? `${money(due)} is due today` : `${money(due)} is due on ${step.dueOn}`;
      const text = `Dear ${registration.contact_name},\n\n${lead} for ${registration.title} (balance left: ${money(ledger.balanceMinor)}).\n\nPay it by card: ${link}\nOr pay by bank transfer with the details on your registration page.\n`;
      await enqueueMail(trx, ctx.cipher, {
        kind: 'balance-reminder',
        registrationId: registration.id,
        message: { to: [email], subject: `${kind === 'overdue' ? 'Overdue payment' : 'Payment due'}: ${registration.title}`, text, html: `<pre>${escapeHtml(text)}</pre>` },
      }, now);
      summary.sent += 1;
    });
  }
  return summary;
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

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
