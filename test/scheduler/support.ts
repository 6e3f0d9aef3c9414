import { formatInTimeZone } from 'date-fns-tz';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import type { Db } from '../../src/db/connect.js';
import type { JobName, JobOutcome, JobSummary } from '../../src/jobs/types.js';
import { createTestContext } from '../support/context.js';

export const SYDNEY = 'Australia/Sydney';
export const FIVE_MINUTES = 5 * 60_000;

export const ALL_JOBS_ENV = {
  APP_TIMEZONE: SYDNEY,
  CLEARANCE_DIGEST: 'true',
  ERROR_DIGEST: 'true',
  TRACKER_TOKEN: 'tracker-token',
  TRACKER_REPO: 'grace/eventops',
};

export interface RecordedRun {
  job: JobName;
  at: Date;
  /** Local time in Australia/Sydney, `yyyy-MM-dd HH:mm EEE`. */
  local: string;
}

/**
 * A stand-in for the job functions: records each call with the clock's time and
 * answers with the outcome `outcomeFor` picks (default ok). These tests are
 * about the scheduler, not the jobs.
 */
export function recordingRunJob(
  clock: FixedClock,
  outcomeFor: (job: JobName, callsSoFar: number) => JobOutcome | Error = () => 'ok',
): { runJob: (job: JobName) => Promise<JobSummary>; runs: RecordedRun[]; of(job: JobName): RecordedRun[] } {
  const runs: RecordedRun[] = [];
  const byJob = new Map<JobName, RecordedRun[]>();
  const of = (job: JobName) => byJob.get(job) ?? [];
  return {
    runs,
    of,
    async runJob(job) {
      const at = clock.now();
      const outcome = outcomeFor(job, of(job).length);
      const run = { job, at, local: formatInTimeZone(at, SYDNEY, 'yyyy-MM-dd HH:mm EEE') };
      runs.push(run);
      if (!byJob.has(job)) byJob.set(job, []);
      byJob.get(job)?.push(run);
      if (outcome instanceof Error) throw outcome;
      return { job, outcome, dryRun: false };
    },
  };
}

export function schedulerContext(db: Db, clock: FixedClock, env: Record<string, string | undefined> = ALL_JOBS_ENV): AppContext {
  return createTestContext({ db, clock, env });
}

export async function periodRow(db: Db, key: string): Promise<{ attempts: number; done_at: Date | null; claimed_until: Date | null } | undefined> {
  return db('scheduler_periods').where({ period_key: key }).first();
}
