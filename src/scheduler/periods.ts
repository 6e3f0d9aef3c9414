import { formatInTimeZone, fromZonedTime } from 'date-fns-tz';
import type { AppConfig } from '../config/types.js';
import type { JobName } from '../jobs/types.js';

/**
 * When each job is due under the in-app scheduler, as pure functions of the
 * configuration and an instant. Days, weeks and months are the local calendar
 * of `config.regional.timeZone`: window openings are local wall-clock times
 * turned into instants with date-fns-tz, never hours added to an instant, so
 * daylight-saving changes move them correctly.
 */

/** Reminders and checkout cleanup run once per 30-minute slot. */
export const SLOT_MS = 30 * 60_000;
/** A period job that did not fully succeed is tried again this long after its last attempt. */
export const RETRY_DELAY_MS = 30 * 60_000;
/** Attempts per day, week or month (period), in the database; the clearance digest's per local day (see attemptSpan). */
export const MAX_ATTEMPTS_PER_PERIOD = 3;
/** The clearance digest: attempts per local day per process (in memory, so a restart resets it). */
export const DIGEST_ATTEMPTS_PER_DAY = 3;

export type PeriodKind = 'slot' | 'hour' | 'day' | 'week' | 'month';

/** Reconciliation with the card provider runs once per hour. */
export const HOUR_MS = 60 * 60_000;

export const JOB_PERIOD_KIND: Readonly<Record<JobName, PeriodKind>> = {
  'send-reminders': 'slot',
  'sweep-checkouts': 'slot',
  'send-celebrations': 'day',
  'send-clearance-digest': 'month',
  'error-issues': 'week',
  reconcile: 'hour',
  'purge-answers': 'week',
};

/**
 * Order of the jobs within one tick. Reconcile comes first: after an outage it
 * registers the payments the provider took meanwhile before the checkout sweep
 * expires (and, past 72 hours, scrubs) their checkouts and before payment
 * reminders ask the payers again. Then the frequent, quick ones.
 */
export const SCHEDULED_JOBS: readonly JobName[] = ['reconcile', 'send-reminders', 'sweep-checkouts', 'send-celebrations', 'send-clearance-digest', 'error-issues', 'purge-answers'];

export interface Period {
  job: JobName;
  kind: PeriodKind;
  /** e.g. `send-reminders:2026-11-22T10:30Z`, `reconcile:2026-11-22T10Z`, `send-celebrations:2026-11-22`, `send-clearance-digest:2026-11`, `error-issues:2026-W47`. */
  key: string;
  /** Start of the calendar period (slot start, local midnight, Monday 00:00, the 1st 00:00). */
  startsAt: Date;
  /** The first instant the job is due in this period (slot start, 07:00, the 1st 07:00, Monday 09:00). */
  opensAt: Date;
  /** The first instant it is no longer due (end of the slot/day/week; for the digest, the 8th 00:00). */
  closesAt: Date;
  /** Start of the following period (for the digest, the next month's 1st 00:00). */
  endsAt: Date;
}

export type JobAvailability = { enabled: true; purgeOnly?: string } | { enabled: false; reason: string };

/**
 * Whether the configuration lets the scheduler run the job at all. The error digest files issues only with
 * ERROR_DIGEST and a tracker; without them its weekly run still purges old rows (`purgeOnly` says why it files
 * nothing): retention must not depend on the digest, or the error log, page-view counts and rate-limit
 * windows would grow for ever on a server that runs its jobs in-app.
 */
export function jobAvailability(config: AppConfig, job: JobName): JobAvailability {
  if (job === 'send-clearance-digest' && !config.jobs.clearanceDigest) {
    return { enabled: false, reason: 'CLEARANCE_DIGEST is not true' };
  }
  if (job === 'error-issues') {
    if (!config.jobs.errorDigest) return { enabled: true, purgeOnly: 'ERROR_DIGEST is not true' };
    if (!config.tracker) return { enabled: true, purgeOnly: 'TRACKER_TOKEN and TRACKER_REPO are not set' };
  }
  if (job === 'reconcile' && !config.payments) return { enabled: false, reason: 'PSP_SECRET_KEY and PSP_WEBHOOK_SECRET are not set' };
  return { enabled: true };
}

/** The period of `job` that contains `now`, whether or not its window is open. */
export function periodAt(config: AppConfig, job: JobName, now: Date): Period {
  const tz = config.regional.timeZone;
  const kind = JOB_PERIOD_KIND[job];
  switch (kind) {
    case 'slot': {
      const start = new Date(Math.floor(now.getTime() / SLOT_MS) * SLOT_MS);
      const end = new Date(start.getTime() + SLOT_MS);
      return { job, kind, key: `${job}:${formatInTimeZone(start, 'UTC', "yyyy-MM-dd'T'HH:mm'Z'")}`, startsAt: start, opensAt: start, closesAt: end, endsAt: end };
    }
    case 'hour': {
      const start = new Date(Math.floor(now.getTime() / HOUR_MS) * HOUR_MS);
      const end = new Date(start.getTime() + HOUR_MS);
      return { job, kind, key: `${job}:${formatInTimeZone(start, 'UTC', "yyyy-MM-dd'T'HH'Z'")}`, startsAt: start, opensAt: start, closesAt: end, endsAt: end };
    }
    case 'day': {
      const day = localDate(now, tz);
      const next = localMidnight(addDays(day, 1), tz);
      return { job, kind, key: `${job}:${day}`, startsAt: localMidnight(day, tz), opensAt: localTime(day, '07:00', tz), closesAt: next, endsAt: next };
    }
    case 'week': {
      const isoWeekday = Number(formatInTimeZone(now, tz, 'i'));
      const monday = addDays(localDate(now, tz), 1 - isoWeekday);
      const opensAt = localTime(monday, '09:00', tz);
      const next = localMidnight(addDays(monday, 7), tz);
      return { job, kind, key: `${job}:${formatInTimeZone(opensAt, tz, "RRRR-'W'II")}`, startsAt: localMidnight(monday, tz), opensAt, closesAt: next, endsAt: next };
    }
    case 'month': {
      const month = formatInTimeZone(now, tz, 'yyyy-MM');
      const first = `${month}-01`;
      return {
        job,
        kind,
        key: `${job}:${month}`,
        startsAt: localMidnight(first, tz),
        opensAt: localTime(first, '07:00', tz),
        closesAt: localMidnight(addDays(first, 7), tz),
        endsAt: localMidnight(addMonths(first, 1), tz),
      };
    }
  }
}

/**
 * The span whose attempts count against MAX_ATTEMPTS_PER_PERIOD: the period
 * itself, except for the clearance digest, whose attempts are counted per local
 * day within its month (the spec's 3 attempts per day), so a digest that failed
 * three times on the 1st is tried again on the 2nd through the 7th.
 */
export function attemptSpan(config: AppConfig, period: Period, now: Date): { startsAt: Date; endsAt: Date } {
  if (period.job !== 'send-clearance-digest') return { startsAt: period.startsAt, endsAt: period.endsAt };
  const day = localDate(now, config.regional.timeZone);
  const dayStart = localMidnight(day, config.regional.timeZone);
  const dayEnd = localMidnight(addDays(day, 1), config.regional.timeZone);
  return {
    startsAt: new Date(Math.max(dayStart.getTime(), period.startsAt.getTime())),
    endsAt: new Date(Math.min(dayEnd.getTime(), period.endsAt.getTime())),
  };
}

/** The period of `job` due at `now`, or undefined when the job is off or outside its window. */
export function duePeriod(config: AppConfig, job: JobName, now: Date): Period | undefined {
  if (!jobAvailability(config, job).enabled) return undefined;
  const period = periodAt(config, job, now);
  return now >= period.opensAt && now < period.closesAt ? period : undefined;
}

export type NextDue =
  | {
      job: JobName;
      enabled: true;
      periodKey: string;
      dueAt: Date;
      /** e.g. `2026-11-23 07:00 +11:00` */
      local: string;
      /** Due already (dueAt is now): it runs at the scheduler's next tick, whose time only the running server knows. */
      dueNow: boolean;
      /** The error digest without ERROR_DIGEST or a tracker: why its run only purges old rows. */
      purgeOnly?: string;
    }
  | { job: JobName; enabled: false; reason: string };

/**
 * For `eventops status`: when each job will next be due. A period in `doneKeys`
 * (done, or out of attempts) is skipped to the next one; `retryAt` holds the
 * earliest next attempt of a period that is waiting for its retry. A job due
 * already has `dueNow` (and `dueAt` is `now`).
 */
export function nextDueTimes(
  config: AppConfig,
  now: Date,
  doneKeys: ReadonlySet<string> = new Set(),
  retryAt: ReadonlyMap<string, Date> = new Map(),
): NextDue[] {
  return SCHEDULED_JOBS.map((job): NextDue => {
    const availability = jobAvailability(config, job);
    if (!availability.enabled) return { job, enabled: false, reason: availability.reason };
    let period = periodAt(config, job, now);
    let cursor = now.getTime();
    for (;;) {
      const earliest = Math.max(period.opensAt.getTime(), now.getTime(), retryAt.get(period.key)?.getTime() ?? 0);
      if (!doneKeys.has(period.key) && earliest < period.closesAt.getTime()) {
        const dueAt = new Date(earliest);
        const purgeOnly = availability.purgeOnly === undefined ? {} : { purgeOnly: availability.purgeOnly };
        return { job, enabled: true, periodKey: period.key, dueAt, local: formatLocal(dueAt, config.regional.timeZone), dueNow: earliest <= now.getTime(), ...purgeOnly };
      }
      // At least one slot further each time: should an endsAt ever fall inside its own
      // period again, this reaches the next period instead of spinning on the same one.
      cursor = Math.max(period.endsAt.getTime(), cursor + SLOT_MS);
      period = periodAt(config, job, new Date(cursor));
    }
  });
}

export function formatLocal(instant: Date, timeZone: string): string {
  return formatInTimeZone(instant, timeZone, 'yyyy-MM-dd HH:mm xxx');
}

/** The local calendar date `yyyy-MM-dd` of an instant. */
export function localDate(instant: Date, timeZone: string): string {
  return formatInTimeZone(instant, timeZone, 'yyyy-MM-dd');
}

function localTime(date: string, time: string, timeZone: string): Date {
  return fromZonedTime(`${date}T${time}:00`, timeZone);
}

/**
 * The first instant of a local date: its 00:00, or, where daylight saving skips
 * midnight (Asia/Beirut, America/Santiago), the instant the clocks jump (01:00).
 */
function localMidnight(date: string, timeZone: string): Date {
  const midnight = localTime(date, '00:00', timeZone);
  if (localDate(midnight, timeZone) === date) return midnight;
  // date-fns-tz answers a skipped midnight with 23:00 of the day before, still at the
  // offset from before the jump; 00:00 at that offset is the instant of the jump.
  return new Date(`${date}T00:00:00${formatInTimeZone(midnight, timeZone, 'xxx')}`);
}

// Calendar-date arithmetic on `yyyy-MM-dd` strings. Date.UTC has no daylight
// saving, so these move whole calendar days and months, independent of any time zone.
function addDays(date: string, days: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

function addMonths(firstOfMonth: string, months: number): string {
  const [y, m] = firstOfMonth.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m - 1 + months, 1)).toISOString().slice(0, 10);
}
