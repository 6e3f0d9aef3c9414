import type { Db } from '../db/connect.js';
import { JOB_NAMES, type JobName } from './types.js';
import { waitlistTotals, type WaitlistTotals } from '../registrations/waitlist/office.js';

export interface JobStatus {
  job: JobName;
  lastRun?: {
    id: number;
    trigger: string;
    startedAt: string;
    finishedAt?: string;
    outcome?: string;
    summary?: unknown;
    error?: string;
    ageSeconds: number;
  };
}

export interface OperationsStatus {
  jobs: JobStatus[];
  openAlerts: number;
  pendingWebsiteSync: number;
  /** The oldest undelivered website notification: a website refusing one holds back its event's later changes. */
  oldestWebsiteSync?: { type: string; ageSeconds: number; attempts: number; lastError?: string };
  pendingMail: number;
  failedMail: number;
  /** Error-log rows of the last 7 days (`eventops errors` groups them). */
  errorsLastWeek: number;
  /** Per event with anyone on its waiting list: entries waiting, open offers and the places they hold, unconfirmed joins, stranded places. */
  waitingLists?: WaitlistTotals[];
}

/**
 * A run with no finish after an hour was killed or lost its database (no job
 * holds a lease or claim that long); it is shown as abandoned, not running.
 */
const ABANDONED_AFTER_S = 60 * 60;
const WEEK_MS = 7 * 24 * 60 * 60_000;

/** The last run of each job and the queues an operator should watch, in six queries. */
export async function readOperationsStatus(db: Db, now: Date): Promise<OperationsStatus> {
  const lastRuns = await db
    .select('r.*')
    .from(db('job_runs').distinctOn('job').orderBy([{ column: 'job' }, { column: 'started_at', order: 'desc' }, { column: 'id', order: 'desc' }]).as('r'))
    .then((rows: Array<{ id: number; job: JobName; trigger: string; started_at: Date; finished_at: Date | null; outcome: string | null; summary: unknown; error: string | null }>) =>
      new Map(rows.map((row) => [row.job, row])),
    );
  const [alerts, sync, oldestSync, mail, errors] = await Promise.all([
    db('operations_alerts').whereNull('resolved_at').count<{ n: number }>({ n: '*' }).first(),
    db('website_sync_outbox').where({ status: 'PENDING' }).count<{ n: number }>({ n: '*' }).first(),
    db('website_sync_outbox')
      .where({ status: 'PENDING' })
      .orderBy('created_at')
      .first<{ type: string; created_at: Date; attempts: number; last_error: string | null } | undefined>('type', 'created_at', 'attempts', 'last_error'),
    db('queued_mail')
      .select(db.raw(`count(*) FILTER (WHERE status = 'PENDING')::int AS pending, count(*) FILTER (WHERE status = 'FAILED')::int AS failed`))
      .first<{ pending: number; failed: number }>(),
    db('error_logs').where('created_at', '>', new Date(now.getTime() - WEEK_MS)).count<{ n: number }>({ n: '*' }).first(),
  ]);
  const ageOf = (startedAt: Date) => Math.max(0, Math.round((now.getTime() - startedAt.getTime()) / 1000));
  return {
    jobs: JOB_NAMES.map((job) => {
      const row = lastRuns.get(job);
      if (!row) return { job };
      return {
        job,
        lastRun: {
          id: row.id,
          trigger: row.trigger,
          startedAt: row.started_at.toISOString(),
          finishedAt: row.finished_at?.toISOString(),
          outcome: row.outcome ?? (row.finished_at ? undefined : ageOf(row.started_at) > ABANDONED_AFTER_S ? 'abandoned' : 'running'),
          summary: row.summary ?? undefined,
          error: row.error ?? undefined,
          ageSeconds: ageOf(row.started_at),
        },
      };
    }),
    openAlerts: Number(alerts?.n ?? 0),
    pendingWebsiteSync: Number(sync?.n ?? 0),
    ...(oldestSync && {
      oldestWebsiteSync: {
        type: oldestSync.type,
        ageSeconds: ageOf(oldestSync.created_at),
        attempts: oldestSync.attempts,
        ...(oldestSync.last_error && { lastError: oldestSync.last_error }),
      },
    }),
    pendingMail: mail?.pending ?? 0,
    failedMail: mail?.failed ?? 0,
    errorsLastWeek: Number(errors?.n ?? 0),
    waitingLists: await waitlistTotals(db, now),
  };
}
