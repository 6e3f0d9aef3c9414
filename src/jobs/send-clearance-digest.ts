import { formatInTimeZone } from 'date-fns-tz';
import { listUsersByRole, type UserRecipient } from '../office/users.js';
import type { AppContext } from '../context.js';
import { renewLease } from '../db/leases.js';
import { AppError, errorMessage } from '../errors.js';
import { loadEmailBranding, type EmailBranding } from '../mail/render.js';
import { MailSendError, type Mailer } from '../mail/types.js';
import { getSetting, setSetting } from '../settings.js';
import { eachLimited } from './each-limited.js';
import { withJobLease } from './lease.js';
import { runRecordedJob } from './run-recorded.js';
import { SendFailures } from './send-failures.js';
import {
  clearanceDigestEmail,
  type ClearanceDigestEntry,
  type ClearanceDigestGroup,
  type ClearanceStatus,
} from './templates/clearance-digest.js';
import type { JobOptions, JobSummary } from './types.js';
import { overdueBalances, type OverdueBalanceEntry } from './overdue-balances.js';

/**
 * `sent`: the month is done. `already-sent`: it was done before this run (no force).
 * `nothing-to-report`: every clearance is in order; nothing sent, month done.
 * `partial`: some address is not yet recorded; the month stays open for a retry.
 */
export type ClearanceDigestStatus = 'sent' | 'already-sent' | 'nothing-to-report' | 'no-recipients' | 'partial';

export interface ClearanceDigestSummary extends JobSummary {
  job: 'send-clearance-digest';
  status: ClearanceDigestStatus;
  /** YYYY-MM in APP_TIMEZONE. */
  month: string;
  /** Emails accepted by the mail server, or possibly accepted (ambiguous); on a dry run, emails it would send. */
  sent: number;
  failed: number;
  /** Recipients left to the run that took the lease over from this one (not failures: that run sends to them). */
  handedOver?: number;
  /** People listed in the digest. */
  people: number;
}

export const CLEARANCE_DIGEST_LEASE = 'clearance-digest';
/** Rule 5: a run that dies while sending blocks others for at most this long. */
export const CLEARANCE_DIGEST_LEASE_MS = 30 * 60_000;
/** A clearance expiring within this many days (today included) is listed as expiring soon. */
export const EXPIRING_WITHIN_DAYS = 60;
const RECIPIENT_ROLES = ['ADMIN', 'PASTOR'] as const;
const NO_RECIPIENTS = 'no ADMIN or PASTOR user to receive the clearance digest: add one with `eventops users add --role PASTOR`';
/** The SMTP pool's size. */
const SEND_CONCURRENCY = 3;

const GROUP_TITLES: Record<ClearanceStatus, string> = {
  missing: 'Missing',
  expired: 'Expired',
  expiring: 'Expiring soon',
};

interface ReportRow {
  person_id: string;
  first_name: string;
  last_name: string;
  roles: string;
  status: ClearanceStatus;
  kind: string | null;
  expires_on: string | null;
}

interface DigestReport {
  groups: ClearanceDigestGroup[];
  people: number;
  /** Balances past a due date of their schedule (deposits and instalments): the office's money to follow up too. */
  overdueBalances: OverdueBalanceEntry[];
}

/**
 * Rules 5–9 of the spec. The month is the calendar month of APP_TIMEZONE. Sends
 * run under a 30-minute lease; each address is recorded in
 * clearanceDigestDelivered as soon as its send succeeds (an ambiguous mail
 * server error counts as sent), so a retry emails only the addresses not yet
 * recorded, and the month is marked done once every recipient is recorded.
 */
export async function sendClearanceDigest(ctx: AppContext, options: JobOptions): Promise<ClearanceDigestSummary> {
  return runRecordedJob<ClearanceDigestSummary>(ctx, 'send-clearance-digest', options, async () => {
    const now = ctx.clock.now();
    const month = formatInTimeZone(now, ctx.config.regional.timeZone, 'yyyy-MM');
    const today = formatInTimeZone(now, ctx.config.regional.timeZone, 'yyyy-MM-dd');
    const dryRun = Boolean(options.dryRun);
    const force = Boolean(options.force);
    const result = (status: ClearanceDigestStatus, counts: Partial<Pick<ClearanceDigestSummary, 'sent' | 'failed' | 'people'>> = {}) => ({
      job: 'send-clearance-digest' as const,
      outcome: 'ok' as const,
      dryRun,
      status,
      month,
      sent: counts.sent ?? 0,
      failed: counts.failed ?? 0,
      people: counts.people ?? 0,
    });

    // Checked before the lease too, so a finished month answers already-sent even while another run holds the lease.
    if (!force && (await monthDone(ctx, month))) return result('already-sent');
    if (dryRun) return planDigest(ctx, { month, today, force }, result);

    return withJobLease(ctx, CLEARANCE_DIGEST_LEASE, CLEARANCE_DIGEST_LEASE_MS, async (holder) => {
      // Again under the lease: a run that finished between the first check and taking the lease has done the month.
      if (!force && (await monthDone(ctx, month))) return result('already-sent');
      const report = await loadReport(ctx, today);
      if (report.people === 0 && report.overdueBalances.length === 0) {
        // Rule 9: nothing goes out. Marking the month done stops hourly or scheduled retries re-checking all month;
        // a clearance that lapses later in the month is in next month's digest (or send one with --force).
        await setSetting(ctx.db, 'clearanceDigestLastMonth', month, ctx.clock.now());
        ctx.logger.info({ month }, 'every clearance is in order; no clearance digest this month');
        return result('nothing-to-report');
      }

      const recipients = await digestRecipients(ctx);
      if (recipients.length === 0) {
        // Nobody got it: the run fails (so the scheduler and the cron caller see it) and the month stays open,
        // so the next run after an ADMIN or PASTOR is added sends it.
        ctx.logger.warn({ month }, NO_RECIPIENTS);
        return { ...result('no-recipients', { people: report.people }), outcome: 'failed' as const };
      }
      // Rule 8: force emails everyone again and replaces the recorded list; the month is open until they are all recorded again.
      const round = force ? await reopenMonth(ctx, month, now) : await roundThisMonth(ctx, month);
      const delivered = round.delivered;
      const pending = recipients.filter((user) => !delivered.has(addressKey(ctx, user.email)));
      const branding = await loadEmailBranding(ctx.db, ctx.config);
      const mailer = await ctx.mailer();
      const sending = await sendToRecipients(ctx, mailer, pending, { month, forcedAt: round.forcedAt, report, branding, delivered, holder }, options);

      const everyoneRecorded = sending.failed === 0 && sending.handedOver === 0;
      // Rule 7: when the list could not be saved, a retry could not tell who already has it, so failed sends are not retried.
      if (everyoneRecorded || sending.listSaveFailed) {
        await setSetting(ctx.db, 'clearanceDigestLastMonth', month, ctx.clock.now());
      }
      const monthDoneNow = everyoneRecorded || sending.listSaveFailed;
      return {
        ...result(monthDoneNow ? 'sent' : 'partial', { sent: sending.sent, failed: sending.failed, people: report.people }),
        ...(sending.handedOver > 0 ? { handedOver: sending.handedOver } : {}),
        // Handed over is not failed: the run that took the lease over sends to them.
        outcome: everyoneRecorded ? 'ok' : sending.sent > 0 || sending.failed === 0 ? 'partial' : 'failed',
      };
    });
  });
}

async function monthDone(ctx: AppContext, month: string): Promise<boolean> {
  return (await getSetting(ctx.db, 'clearanceDigestLastMonth')) === month;
}

/**
 * The email lookup hash (normalised, so a differently cased address of the same
 * mailbox is not emailed twice): the delivered list lives in app_settings, which
 * is not encrypted, so it records hashes, never addresses.
 */
function addressKey(ctx: Pick<AppContext, 'cipher'>, address: string): string {
  return ctx.cipher.lookupHash('email', address);
}

/** A recorded entry: a hash, or an address recorded before lists held hashes. */
function recordedKey(ctx: Pick<AppContext, 'cipher'>, entry: string): string {
  return entry.includes('@') ? addressKey(ctx, entry) : entry;
}

/** The month's current round of sends: who has it, and when --force started the round (absent for the month's first round). */
interface DigestRound {
  delivered: Set<string>;
  forcedAt?: string;
}

/** Addresses recorded as sent this month; a list from an earlier month no longer counts. */
async function roundThisMonth(ctx: AppContext, month: string): Promise<DigestRound> {
  const recorded = await getSetting(ctx.db, 'clearanceDigestDelivered');
  if (recorded?.month !== month) return { delivered: new Set() };
  const delivered = new Set(recorded.addresses.map((entry) => recordedKey(ctx, entry)));
  return recorded.forcedAt === undefined ? { delivered } : { delivered, forcedAt: recorded.forcedAt };
}

/**
 * One transaction: an empty list for this month, started by this forced run, and the month no
 * longer marked done, so a crash mid-run leaves it open and a plain run finishes the same round.
 */
async function reopenMonth(ctx: AppContext, month: string, now: Date): Promise<DigestRound> {
  const forcedAt = now.toISOString();
  await ctx.db.transaction(async (trx) => {
    await setSetting(trx, 'clearanceDigestDelivered', { month, addresses: [], forcedAt }, ctx.clock.now());
    await trx('app_settings').where({ key: 'clearanceDigestLastMonth' }).delete();
  });
  return { delivered: new Set(), forcedAt };
}

/**
 * The mail API's idempotency key. A forced round's sends carry the time the round was forced,
 * in the forced run and in the plain run that finishes it, so the provider does not answer them
 * with the month's earlier send; a repeat of the same send keeps the same key.
 */
function digestIdempotencyKey(plan: Pick<SendPlan, 'month' | 'forcedAt'>, userId: string): string {
  return `clearance-digest:${plan.month}:${userId}${plan.forcedAt === undefined ? '' : `:forced:${plan.forcedAt}`}`;
}

async function digestRecipients(ctx: AppContext): Promise<UserRecipient[]> {
  const seen = new Set<string>();
  return (await listUsersByRole(ctx, RECIPIENT_ROLES)).filter((user) => {
    const key = addressKey(ctx, user.email);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/**
 * One query: people with a ministry role whose clearance is missing (no row),
 * expired, or expiring within the window. A person with several clearances
 * appears once per clearance that needs attention. The number is never read.
 */
async function loadReport(ctx: AppContext, today: string): Promise<DigestReport> {
  const { rows } = await ctx.db.raw<{ rows: ReportRow[] }>(
    `WITH ministry AS (
       SELECT person_id, string_agg(role, ', ' ORDER BY role) AS roles
       FROM ministry_roles
       GROUP BY person_id
     )
     SELECT p.id AS person_id, p.first_name, p.last_name, m.roles, c.kind, c.expires_on,
            CASE WHEN c.id IS NULL THEN 'missing'
                 WHEN c.expires_on < ?::date THEN 'expired'
                 ELSE 'expiring' END AS status
     FROM ministry m
     JOIN people p ON p.id = m.person_id
     LEFT JOIN clearances c ON c.person_id = p.id
     WHERE c.id IS NULL OR c.expires_on <= ?::date + ?::int
     ORDER BY c.expires_on NULLS FIRST, p.last_name, p.first_name, p.id, c.kind`,
    [today, today, EXPIRING_WITHIN_DAYS],
  );
  const byStatus = new Map<ClearanceStatus, ClearanceDigestEntry[]>([
    ['missing', []],
    ['expired', []],
    ['expiring', []],
  ]);
  const people = new Set<string>();
  for (const row of rows) {
    people.add(row.person_id);
    byStatus.get(row.status)?.push({
      name: `${row.first_name} ${row.last_name}`.trim(),
      roles: row.roles,
      kind: row.kind ?? undefined,
      expiresOn: row.expires_on ?? undefined,
    });
  }
  const groups = [...byStatus]
    .filter(([, entries]) => entries.length > 0)
    .map(([status, entries]) => ({ status, title: GROUP_TITLES[status], entries }));
  return { groups, people: people.size, overdueBalances: await overdueBalances(ctx, today) };
}

interface SendPlan {
  month: string;
  /** Set when the round was started by --force: kept in the delivered list and in every send's idempotency key. */
  forcedAt: string | undefined;
  report: DigestReport;
  branding: EmailBranding;
  /** Updated in place as sends succeed. */
  delivered: Set<string>;
  /** This run's hold on the lease, renewed before every send. */
  holder: string;
}

interface SendOutcome {
  sent: number;
  failed: number;
  /** Not sent because another run took the lease over: that run sends them. */
  handedOver: number;
  listSaveFailed: boolean;
}

async function sendToRecipients(
  ctx: AppContext,
  mailer: Mailer,
  recipients: UserRecipient[],
  plan: SendPlan,
  options: JobOptions,
): Promise<SendOutcome> {
  const outcome: SendOutcome = { sent: 0, failed: 0, handedOver: 0, listSaveFailed: false };
  // Saves run one after another so an older, shorter list never overwrites a newer one.
  let saving: Promise<void> = Promise.resolve();
  const record = (address: string): Promise<void> => {
    plan.delivered.add(addressKey(ctx, address));
    const addresses = [...plan.delivered];
    saving = saving.then(async () => {
      try {
        const list = plan.forcedAt === undefined ? { month: plan.month, addresses } : { month: plan.month, addresses, forcedAt: plan.forcedAt };
        await setSetting(ctx.db, 'clearanceDigestDelivered', list, ctx.clock.now());
      } catch (error) {
        outcome.listSaveFailed = true;
        ctx.logger.error({ month: plan.month, err: errorMessage(error) }, 'could not save the clearance digest delivered list');
      }
    });
    return saving;
  };

  const overdue = plan.report.overdueBalances.length;
  const attention = [
    ...(plan.report.people > 0 || overdue === 0 ? [`${peopleCount(plan.report.people)} ${plan.report.people === 1 ? 'needs' : 'need'} attention`] : []),
    ...(overdue > 0 ? [`${overdue} ${overdue === 1 ? 'balance' : 'balances'} overdue`] : []),
  ].join(', ');
  const monthLabel = new Intl.DateTimeFormat(ctx.config.regional.locale, { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(
    new Date(`${plan.month}-01T00:00:00Z`),
  );
  const failures = new SendFailures();
  const results = await eachLimited(recipients, SEND_CONCURRENCY, async (user) => {
    await keepLease(ctx, plan.holder);
    const rendered = clearanceDigestEmail(
      { name: user.name, monthLabel, attention, groups: plan.report.groups, windowDays: EXPIRING_WITHIN_DAYS, overdueBalances: plan.report.overdueBalances },
      plan.branding,
    );
    try {
      await mailer.send({
        to: [user.email],
        ...rendered,
        // A forced round is a deliberate new send, which the mail API must not drop as a duplicate.
        idempotencyKey: digestIdempotencyKey(plan, user.id),
      });
    } catch (error) {
      if (!(error instanceof MailSendError && error.ambiguous)) throw error;
      ctx.logger.warn({ userId: user.id, err: error.message }, 'clearance digest send ambiguous; counted as sent');
    }
    await record(user.email);
  });
  for (const result of results) {
    if (result.ok) {
      outcome.sent++;
    } else if (result.error instanceof AppError && result.error.code === 'lease_lost') {
      outcome.handedOver++;
    } else {
      outcome.failed++;
      ctx.logger.warn({ userId: result.item.id, err: errorMessage(result.error) }, 'clearance digest send failed');
      failures.add(result.error, result.item.id);
    }
    options.onProgress?.({ sent: outcome.sent, failed: outcome.failed });
  }
  await saving;
  if (outcome.handedOver > 0) {
    // One line, and nothing in the error log: the run that took over sends to them, so no failure is filed.
    ctx.logger.warn({ month: plan.month, handedOver: outcome.handedOver }, 'clearance digest: another run took the lease over; it sends to the recipients this run had not reached');
  }
  await failures.record(ctx, { source: 'job:send-clearance-digest', what: 'clearance digest', context: { month: plan.month }, idsAs: 'userIds' });
  return outcome;
}

/**
 * Renews the lease before a send, so a run whose sends outlast the 30 minutes (a slow mail
 * server, many recipients) keeps it; one that lost it (expired and taken) sends no more:
 * the run that took it over sends what is not yet recorded.
 */
async function keepLease(ctx: AppContext, holder: string): Promise<void> {
  if (await renewLease(ctx.db, { name: CLEARANCE_DIGEST_LEASE, holder, now: ctx.clock.now(), ttlMs: CLEARANCE_DIGEST_LEASE_MS })) return;
  throw new AppError('lease_lost', `another run took over "${CLEARANCE_DIGEST_LEASE}" while this one was sending; it sends the rest`);
}

/** Dry run: the digest it would send and to whom; reads only. */
async function planDigest(
  ctx: AppContext,
  run: { month: string; today: string; force: boolean },
  result: (status: ClearanceDigestStatus, counts?: Partial<Pick<ClearanceDigestSummary, 'sent' | 'failed' | 'people'>>) => Omit<
    ClearanceDigestSummary,
    'runId'
  >,
): Promise<Omit<ClearanceDigestSummary, 'runId'>> {
  const report = await loadReport(ctx, run.today);
  if (report.people === 0 && report.overdueBalances.length === 0) {
    return { ...result('nothing-to-report'), wouldDo: [`send nothing: every clearance is in order for ${run.month}`] };
  }
  const delivered = run.force ? new Set<string>() : (await roundThisMonth(ctx, run.month)).delivered;
  const everyone = await digestRecipients(ctx);
  if (everyone.length === 0) return { ...result('no-recipients', { people: report.people }), wouldDo: [`send nothing: ${NO_RECIPIENTS}`] };
  const recipients = everyone.filter((user) => !delivered.has(addressKey(ctx, user.email)));
  const counts = report.groups.map((group) => `${group.entries.length} ${group.title.toLowerCase()}`).join(', ');
  return {
    ...result('sent', { sent: recipients.length, people: report.people }),
    wouldDo: recipients.map(
      (user) => `email ${user.name} ${user.email} (clearance digest for ${run.month}: ${peopleCount(report.people)}; ${counts})`,
    ),
  };
}

function peopleCount(n: number): string {
  return `${n} ${n === 1 ? 'person' : 'people'}`;
}
