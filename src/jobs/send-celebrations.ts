import { formatInTimeZone } from 'date-fns-tz';
import { celebrationsUnsubscribeUrl } from '../office/people/unsubscribe-link.js';
import type { AppContext } from '../context.js';
import { errorMessage } from '../errors.js';
import { loadEmailBranding, type EmailBranding, type RenderedEmail } from '../mail/render.js';
import { MailSendError, type Mailer } from '../mail/types.js';
import { publicBaseUrl } from '../payments/links.js';
import { getSettings } from '../settings.js';
import {
  STALE_CLAIM_MS,
  anniversaryPageQuery,
  birthdayPageQuery,
  celebrationPages,
  claimCelebrations,
  confirmCelebrations,
  isTakenElsewhere,
  releaseCelebration,
  renewCelebrationClaims,
  type AnniversaryRow,
  type BirthdayRow,
  type CelebrationDay,
  type CelebrationKind,
  type ClaimState,
} from './celebration-claims.js';
import { eachLimited } from './each-limited.js';
import { groupCommit } from './group-commit.js';
import { runRecordedJob } from './run-recorded.js';
import { SendFailures } from './send-failures.js';
import { anniversaryEmail, birthdayEmail, ordinal } from './templates/celebrations.js';
import type { JobOptions, JobSummary } from './types.js';

export interface CelebrationSummary extends JobSummary {
  job: 'send-celebrations';
  /** The local day celebrated (YYYY-MM-DD in APP_TIMEZONE). */
  date: string;
  /** Birthday emails the mail server accepted (or may have: ambiguous errors); on a dry run, emails it would send. */
  birthdays: number;
  /** Anniversary emails, one per couple, counted the same way. */
  anniversaries: number;
  /** Sends that certainly failed; their claims are removed so a later run retries them. */
  failed: number;
  /** Already sent this year, or being sent by another run right now. */
  skipped: number;
  /** The kinds on in Settings for this run (turning one on later that day is then told: settings set). */
  kinds: CelebrationKind[];
}

/** Claimed per page, in one statement. */
const PAGE_SIZE = 50;
/**
 * Sends between claim renewals: 15 sends at 3 at a time, each bounded by the
 * 30 s SMTP timeout, take at most about 2.5 minutes, well inside STALE_CLAIM_MS.
 */
const SEND_CHUNK = 15;
/** The SMTP pool's size. */
const SEND_CONCURRENCY = 3;

/** One email to send: a birthday, or an anniversary of a person or a couple. */
interface Celebration {
  kind: CelebrationKind;
  /** The claim's person: for a couple, the spouse with the smaller id (of those with the wedding date on record). */
  personId: string;
  /** Everyone greeted, for the dry-run list: "Tom Nguyen and Lan Nguyen". */
  names: string;
  /** Encrypted addresses of whoever greeted has one. */
  addressesEnc: string[];
  /** Everyone greeted: the unsubscribe link turns off the emails of each of them. */
  greetedIds: string[];
  claimState: ClaimState;
  reason: string;
  render(branding: EmailBranding, options: { unsubscribeUrl: string }): RenderedEmail;
}

/**
 * Rule 1: every celebration is claimed (person, kind, year) in one statement
 * per page before anything is sent, confirmed after the mail server accepted
 * it, and released after a send that certainly failed. Overlapping or retried
 * runs skip what is sent or in flight; a claim older than STALE_CLAIM_MS is
 * taken over. Birthdays and anniversaries are enabled separately in Settings.
 */
export async function sendCelebrations(ctx: AppContext, options: JobOptions): Promise<CelebrationSummary> {
  return runRecordedJob<CelebrationSummary>(ctx, 'send-celebrations', options, async () => {
    const now = ctx.clock.now();
    const day = celebrationDay(now, ctx.config.regional.timeZone);
    const settings = await getSettings(ctx.db, ['celebrations.birthdays', 'celebrations.anniversaries']);
    const kinds: CelebrationKind[] = [];
    if (settings['celebrations.birthdays'] === true) kinds.push('birthday');
    if (settings['celebrations.anniversaries'] === true) kinds.push('anniversary');

    const summary: Omit<CelebrationSummary, 'runId'> = {
      job: 'send-celebrations',
      outcome: 'ok',
      dryRun: Boolean(options.dryRun),
      date: day.date,
      birthdays: 0,
      anniversaries: 0,
      failed: 0,
      skipped: 0,
      kinds,
    };
    if (kinds.length === 0) {
      const reason = 'birthday and anniversary emails are both off in Settings (`eventops settings set celebrations.birthdays true` turns one on)';
      return { ...summary, outcome: 'skipped', reason };
    }

    const staleBefore = new Date(now.getTime() - STALE_CLAIM_MS);
    const countSent = (kind: CelebrationKind) => (kind === 'birthday' ? summary.birthdays++ : summary.anniversaries++);

    if (options.dryRun) {
      const wouldDo: string[] = [];
      for (const kind of kinds) {
        for await (const page of celebrationsOf(ctx, kind, day)) {
          for (const celebration of page) {
            if (isTakenElsewhere(celebration.claimState, staleBefore)) {
              summary.skipped++;
              continue;
            }
            countSent(kind);
            const addresses = celebration.addressesEnc.map((enc) => safeDecrypt(ctx, enc) ?? '<unreadable address>');
            wouldDo.push(`email ${celebration.names} ${addresses.join(', ')} (${celebration.reason})`);
          }
        }
      }
      return { ...summary, wouldDo };
    }

    // Every email carries its unsubscribe link: without a public URL for it, nothing is sent (publicBaseUrl says what to set).
    publicBaseUrl(ctx.config);
    // Loading the mail transport overlaps the first reads and claims.
    const mailerReady = ctx.mailer();
    mailerReady.catch(() => undefined);
    const branding = await loadEmailBranding(ctx.db, ctx.config);
    let mailer: Mailer | undefined;
    const failures = new SendFailures();
    const stop: RunStop = {};
    for (const kind of kinds) {
      // Sends that finish while a confirmation is being written are confirmed together in the next statement.
      const confirm = groupCommit<string>((personIds) =>
        confirmCelebrations(ctx.db, { kind, year: day.year, personIds, sentAt: ctx.clock.now() }),
      );
      for await (const page of celebrationsOf(ctx, kind, day)) {
        const claimedAt = ctx.clock.now();
        const ours = await claimCelebrations(ctx.db, {
          kind,
          year: day.year,
          personIds: page.map((c) => c.personId),
          now: claimedAt,
        });
        const mine = page.filter((c) => ours.has(c.personId));
        summary.skipped += page.length - mine.length;
        if (mine.length === 0) continue;
        mailer ??= await mailerReady;
        const sendWith = mailer;
        const { outcomes, takenOver } = await sendInChunks(ctx, mine, { kind, year: day.year, claimedAt }, stop, (chunk, at) =>
          eachLimited(chunk, SEND_CONCURRENCY, (c) => deliver(ctx, sendWith, c, { day, claimedAt: at, branding, confirm }, stop)),
        );
        summary.skipped += takenOver;
        // A send that could not be recorded stopped the rest: fail the run; the unsent claims go stale and are retried.
        if (stop.cause !== undefined) throw stop.cause;
        for (const outcome of outcomes) {
          if (outcome.ok) {
            countSent(kind);
            continue;
          }
          summary.failed++;
          failures.add(outcome.error, outcome.item.personId);
        }
        options.onProgress?.({ sent: summary.birthdays + summary.anniversaries, failed: summary.failed });
      }
    }

    await failures.record(ctx, { source: 'job:send-celebrations', what: 'celebration', context: { date: day.date }, idsAs: 'personIds' });
    const sent = summary.birthdays + summary.anniversaries;
    summary.outcome = summary.failed === 0 ? 'ok' : sent > 0 ? 'partial' : 'failed';
    ctx.logger.info({ ...summary }, 'celebrations sent');
    return summary;
  });
}

type Outcome = Awaited<ReturnType<typeof eachLimited<Celebration, void>>>[number];

/**
 * Sends a claimed page in chunks, renewing the claims of everything still
 * unsent before each chunk after the first. A celebration whose claim another
 * run took over meanwhile (ours looked stale to it) is left to that run.
 */
async function sendInChunks(
  ctx: AppContext,
  claimed: Celebration[],
  claim: { kind: CelebrationKind; year: number; claimedAt: Date },
  stop: RunStop,
  send: (chunk: Celebration[], claimedAt: Date) => Promise<Outcome[]>,
): Promise<{ outcomes: Outcome[]; takenOver: number }> {
  const outcomes: Outcome[] = [];
  let takenOver = 0;
  let claimedAt = claim.claimedAt;
  let unsent = claimed;
  while (unsent.length > 0 && stop.cause === undefined) {
    if (outcomes.length > 0) {
      const now = ctx.clock.now();
      const ours = await renewCelebrationClaims(ctx.db, { ...claim, personIds: unsent.map((c) => c.personId), claimedAt, now });
      claimedAt = now;
      const kept = unsent.filter((c) => ours.has(c.personId));
      if (kept.length < unsent.length) {
        takenOver += unsent.length - kept.length;
        ctx.logger.warn({ kind: claim.kind, takenOver: unsent.length - kept.length }, 'another run took over some celebrations; leaving them to it');
      }
      unsent = kept;
      if (unsent.length === 0) break;
    }
    outcomes.push(...(await send(unsent.slice(0, SEND_CHUNK), claimedAt)));
    unsent = unsent.slice(SEND_CHUNK);
  }
  return { outcomes, takenOver };
}

/**
 * The local day in `timeZone`. On 28 February of a year without a 29th, people
 * born (or married) on 29 February are celebrated too (decisions "Time").
 */
export function celebrationDay(now: Date, timeZone: string): CelebrationDay {
  const date = formatInTimeZone(now, timeZone, 'yyyy-MM-dd');
  const [year, month, dayOfMonth] = date.split('-').map(Number) as [number, number, number];
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return { date, year, month, days: month === 2 && dayOfMonth === 28 && !leap ? [28, 29] : [dayOfMonth] };
}

/**
 * Set when a sent celebration could not be confirmed (the database is failing):
 * every later send of the run is skipped, because an unconfirmed claim is sent
 * again once stale, so each send without a record is a future duplicate.
 */
interface RunStop {
  cause?: unknown;
}

/**
 * Sends one celebration and settles its claim: confirmed once the server
 * accepted it, or may have (an ambiguous error counts as sent, so nobody gets
 * two); released when the send certainly failed, so a later run retries.
 */
async function deliver(
  ctx: AppContext,
  mailer: Mailer,
  celebration: Celebration,
  run: { day: CelebrationDay; claimedAt: Date; branding: EmailBranding; confirm: (personId: string) => Promise<void> },
  stop: RunStop,
): Promise<void> {
  const { day, claimedAt, branding } = run;
  const key = { personId: celebration.personId, kind: celebration.kind, year: day.year };
  if (stop.cause !== undefined) throw stop.cause;
  try {
    const to = celebration.addressesEnc.map((enc) => ctx.cipher.decrypt(enc));
    const result = await mailer.send({
      to,
      ...celebration.render(branding, { unsubscribeUrl: celebrationsUnsubscribeUrl(ctx.config, celebration.greetedIds) }),
      idempotencyKey: `celebration:${celebration.kind}:${day.year}:${celebration.personId}`,
    });
    if (result.rejected.length > 0) {
      ctx.logger.warn({ personId: celebration.personId, kind: celebration.kind, rejected: result.rejected.length }, 'some celebration recipients were refused');
    }
  } catch (error) {
    if (!(error instanceof MailSendError && error.ambiguous)) {
      ctx.logger.warn({ personId: celebration.personId, kind: celebration.kind, err: errorMessage(error) }, 'celebration send failed');
      await releaseCelebration(ctx.db, key, claimedAt);
      throw error;
    }
    ctx.logger.warn({ personId: celebration.personId, kind: celebration.kind, err: error.message }, 'celebration send ambiguous; counted as sent');
  }
  try {
    // Waiting for the confirmation before this slot sends again keeps at most one unrecorded send per slot.
    await run.confirm(celebration.personId);
  } catch (error) {
    // The email went out: count it as sent. The unconfirmed claim goes stale and may be sent again later,
    // so nothing more is sent in this run.
    stop.cause ??= error;
    ctx.logger.error({ personId: celebration.personId, kind: celebration.kind, err: errorMessage(error) }, 'could not confirm a sent celebration; stopping');
  }
}

function celebrationsOf(ctx: AppContext, kind: CelebrationKind, day: CelebrationDay): AsyncGenerator<Celebration[]> {
  return kind === 'birthday' ? birthdays(ctx, day) : anniversaries(ctx, day);
}

async function* birthdays(ctx: AppContext, day: CelebrationDay): AsyncGenerator<Celebration[]> {
  const pages = celebrationPages<BirthdayRow>(ctx.db, (after, limit) => birthdayPageQuery(day, after, limit), PAGE_SIZE);
  for await (const rows of pages) {
    yield rows.map((row) => ({
      kind: 'birthday',
      personId: row.id,
      names: fullName(row.first_name, row.last_name),
      addressesEnc: [row.email_enc],
      greetedIds: [row.id],
      claimState: row,
      reason: 'birthday',
      render: (branding, options) => birthdayEmail({ firstName: row.first_name }, branding, options),
    }));
  }
}

async function* anniversaries(ctx: AppContext, day: CelebrationDay): AsyncGenerator<Celebration[]> {
  const pages = celebrationPages<AnniversaryRow>(ctx.db, (after, limit) => anniversaryPageQuery(day, after, limit), PAGE_SIZE);
  for await (const rows of pages) {
    yield rows.map((row) => {
      const years = day.year - Number(row.wedding_date.slice(0, 4));
      const spouse = row.spouse_id === null ? undefined : { first: row.spouse_first_name ?? '', last: row.spouse_last_name ?? '' };
      const greeting = spouse ? `${row.first_name} and ${spouse.first}` : row.first_name;
      const data = { greeting, yearsMarried: `${years} ${years === 1 ? 'year' : 'years'}`, yearsOrdinal: ordinal(years) };
      return {
        kind: 'anniversary',
        personId: row.id,
        names: [fullName(row.first_name, row.last_name), ...(spouse ? [fullName(spouse.first, spouse.last)] : [])].join(' and '),
        addressesEnc: [row.email_enc, row.spouse_email_enc].filter((enc): enc is string => enc !== null),
        greetedIds: row.spouse_id === null ? [row.id] : [row.id, row.spouse_id],
        claimState: row,
        reason: `${ordinal(years)} wedding anniversary`,
        render: (branding, options) => anniversaryEmail(data, branding, options),
      };
    });
  }
}

function fullName(first: string, last: string): string {
  return `${first} ${last}`.trim();
}

function safeDecrypt(ctx: AppContext, value: string): string | undefined {
  try {
    return ctx.cipher.decrypt(value);
  } catch {
    return undefined;
  }
}
