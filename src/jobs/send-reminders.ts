import type { AppContext } from '../context.js';
import { loadEmailBranding } from '../mail/render.js';
import { publicBaseUrl } from '../payments/links.js';
import { countRemindedInRound } from '../db/registration-emails.js';
import { getBankDetails, getCardFeeRate } from '../settings.js';
import {
  DUE_EVENT_COLUMNS,
  isPaymentReminder,
  recipientPages,
  sendForEvent,
  type DueEvent,
  type EventResult,
  type RunMaterials,
} from './reminder-sends.js';
import { runRecordedJob } from './run-recorded.js';
import { sendBalanceReminders } from './send-balance-reminders.js';
import type { JobOptions, JobSummary } from './types.js';

export interface ReminderSummary extends JobSummary {
  job: 'send-reminders';
  /** Events claimed by this run (on a dry run: events it would claim). */
  events: number;
  /** Emails the mail server accepted, or may have (ambiguous errors); on a dry run, emails it would send. */
  sent: number;
  failed: number;
  /** Due events another run is sending right now. */
  skipped: number;
  /** Of `sent`, how many were the payment-reminder variant. */
  paymentReminders: number;
  /** Registrations left out because this reminder round already reached them (a run stopped mid-event sent theirs). */
  alreadyReminded: number;
  /** Asked to stop (the server is stopping) before every due reminder went out: the next run sends the rest. */
  stopped?: true;
  /** Balances paid in parts (send-balance-reminders.ts): reminders queued, overdue alerts, cancellations; absent when none. */
  balances?: { sent: number; overdue: number; cancelled: number };
}

/** A claim older than this was left by a crashed run and may be taken over. */
export const REMINDER_CLAIM_STALE_MS = 15 * 60_000;

/**
 * Rule 2: the reminder is claimed per event in one statement, so overlapping
 * runs never both send it. Once any recipient's send succeeds the event is
 * marked sent (failed recipients are not retried); when every send fails the
 * claim is released for a later run. A run that takes over a round left
 * unfinished (a stale claim, or one released by a stopping server) sends only
 * to the registrations that round has not reached (see recipientPages).
 */
export async function sendEventReminders(ctx: AppContext, options: JobOptions): Promise<ReminderSummary> {
  return runRecordedJob<ReminderSummary>(ctx, 'send-reminders', options, async () => {
    const events = await sendDueEventReminders(ctx, options);
    // The due dates of balances paid in parts, in the same run: recorded in its run history.
    const balances = await sendBalanceReminders(ctx, { dryRun: options.dryRun });
    if (balances.sent + balances.overdue + balances.cancelled === 0) return events;
    const wouldDo = events.wouldDo || balances.wouldDo ? [...(events.wouldDo ?? []), ...(balances.wouldDo ?? [])] : undefined;
    return { ...events, balances: { sent: balances.sent, overdue: balances.overdue, cancelled: balances.cancelled }, ...(wouldDo ? { wouldDo } : {}) };
  });
}

async function sendDueEventReminders(ctx: AppContext, options: JobOptions): Promise<Omit<ReminderSummary, 'runId'>> {
  const now = ctx.clock.now();
  const staleBefore = new Date(now.getTime() - REMINDER_CLAIM_STALE_MS);
  const due = await ctx.db('events')
    .where('reminder_at', '<=', now)
    .whereNull('reminder_sent_at')
    .whereNull('deleted_at')
    .where('starts_at', '>', now)
    .orderBy([{ column: 'reminder_at' }, { column: 'id' }])
    .select<DueEvent[]>(...DUE_EVENT_COLUMNS);

  const summary: Omit<ReminderSummary, 'runId'> = {
    job: 'send-reminders',
    outcome: 'ok',
    dryRun: Boolean(options.dryRun),
    events: 0,
    sent: 0,
    failed: 0,
    skipped: 0,
    paymentReminders: 0,
    alreadyReminded: 0,
  };
  if (due.length === 0) return summary;
  // Loading the mail transport overlaps the reads and the claim below.
  const mailerReady = options.dryRun ? undefined : ctx.mailer();
  mailerReady?.catch(() => undefined);
  const materials = await loadRunMaterials(ctx);

  if (options.dryRun) {
    const wouldDo: string[] = [];
    for (const event of due) {
      if (event.reminder_claimed_at && event.reminder_claimed_at >= staleBefore) {
        summary.skipped++;
        wouldDo.push(`skip "${event.title}" (${event.id}): another run is sending its reminder`);
        continue;
      }
      summary.events++;
      summary.alreadyReminded += await countRemindedInRound(ctx.db, event.id, event.reminder_at);
      for await (const batch of recipientPages(ctx, event.id, event.reminder_at)) {
        for (const row of batch) {
          const payment = isPaymentReminder(row);
          const address = safeDecrypt(ctx, row.contact_email_enc) ?? '<unreadable address>';
          wouldDo.push(
            `email ${row.contact_name} ${address} (${payment ? 'payment reminder' : 'reminder'} for "${event.title}")`,
          );
          summary.sent++;
          if (payment) summary.paymentReminders++;
        }
      }
    }
    return { ...summary, wouldDo };
  }

  const mailer = await (mailerReady ?? ctx.mailer());
  for (const candidate of due) {
    if (options.signal?.aborted) {
      summary.stopped = true;
      break;
    }
    const claim = { at: ctx.clock.now() };
    const event = await claimEvent(ctx, candidate.id, claim.at);
    if (!event) {
      summary.skipped++;
      continue;
    }
    summary.events++;
    const result = await sendForEvent(
      ctx,
      mailer,
      event,
      claim,
      materials,
      (counts) => options.onProgress?.({ sent: summary.sent + counts.sent, failed: summary.failed + counts.failed }),
      options.signal,
    );
    summary.sent += result.sent;
    summary.failed += result.failed;
    summary.paymentReminders += result.paymentReminders;
    summary.alreadyReminded += result.alreadyReminded;
    if (result.stopped) summary.stopped = true;
    await settleClaim(ctx, event, claim.at, result);
    if (result.stopped) break;
  }
  // A stopped run left work for the next one: not a full success, whatever it sent.
  summary.outcome = summary.failed === 0 && !summary.stopped ? 'ok' : summary.sent > 0 ? 'partial' : 'failed';
  return summary;
}

/** One statement: only one of several overlapping runs gets a row back. */
async function claimEvent(ctx: AppContext, eventId: string, now: Date): Promise<DueEvent | undefined> {
  const staleBefore = new Date(now.getTime() - REMINDER_CLAIM_STALE_MS);
  const [row] = await ctx.db('events')
    .where({ id: eventId })
    .where('reminder_at', '<=', now)
    .whereNull('reminder_sent_at')
    .whereNull('deleted_at')
    .where('starts_at', '>', now)
    .where((q) => q.whereNull('reminder_claimed_at').orWhere('reminder_claimed_at', '<', staleBefore))
    .update({ reminder_claimed_at: now })
    .returning<DueEvent[]>([...DUE_EVENT_COLUMNS]);
  return row;
}


/**
 * Marks the reminder sent if anyone got it, in this run or an earlier one of the round (or nobody was due one); releases
 * the claim if every send failed, or if the run was asked to stop with
 * recipients left (the next run resumes at once instead of after the stale
 * threshold). Both only while the claim is still ours.
 */
async function settleClaim(ctx: AppContext, event: DueEvent, claimedAt: Date, result: EventResult): Promise<void> {
  // The run that took the event over finishes it; touching the row would stop it.
  if (result.claimLost) return;
  const ours = ctx.db('events').where({ id: event.id, reminder_claimed_at: claimedAt }).whereNull('reminder_sent_at');
  // A round an earlier run already took to some registrants counts as reaching someone (rule 2): the ones left
  // failing now are not retried by every later run until the event starts.
  if (!result.stopped && (result.recipients === 0 || result.sent > 0 || result.alreadyReminded > 0)) {
    await ours.update({ reminder_sent_at: ctx.clock.now() });
    return;
  }
  await ours.update({ reminder_claimed_at: null });
}


async function loadRunMaterials(ctx: AppContext): Promise<RunMaterials> {
  const [branding, bank, cardFee] = await Promise.all([loadEmailBranding(ctx.db, ctx.config), getBankDetails(ctx.db), getCardFeeRate(ctx.db)]);
  let linksAvailable = true;
  try {
    publicBaseUrl(ctx.config);
  } catch {
    linksAvailable = false;
    ctx.logger.warn('neither AUTH_URL nor APP_URL is set: reminders go out without registration or pay-now links');
  }
  return {
    branding,
    bank,
    linksAvailable,
    cardFee,
  };
}

function safeDecrypt(ctx: AppContext, value: string): string | undefined {
  try {
    return ctx.cipher.decrypt(value);
  } catch {
    return undefined;
  }
}
