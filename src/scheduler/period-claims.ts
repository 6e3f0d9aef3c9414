import type { Db } from '../db/connect.js';
import type { JobName } from '../jobs/types.js';
import { MAX_ATTEMPTS_PER_PERIOD, RETRY_DELAY_MS } from './periods.js';

/**
 * Which scheduler periods are done, in scheduler_periods, so a restart does not
 * run a finished period again and two processes on one database never both run
 * one. Each function is a single statement.
 *
 * A period row: `attempts` so far, `last_attempt_at`, `claimed_until` (set while
 * an attempt runs; a crashed process's claim simply expires), `done_at`.
 */

export type PeriodClaim =
  | { claimed: true; attempt: number }
  | { claimed: false; reason: 'done' | 'exhausted' | 'running' }
  | { claimed: false; reason: 'waiting'; retryAt: Date };

interface ClaimRow {
  claimed: boolean;
  attempts: number;
  done_at: Date | null;
  claimed_until: Date | null;
  last_attempt_at: Date | null;
}

/**
 * Claims the period for one attempt: inserted on its first attempt, or taken
 * again when it is not done, has attempts left, is not claimed by a live run,
 * and its last attempt was at least 30 minutes ago. When the claim is refused
 * the same statement reports why, so the caller can stop asking (done,
 * exhausted) or wait until `retryAt`.
 *
 * `attemptsFrom` starts the count afresh: attempts made before it no longer
 * count (the clearance digest counts its attempts per local day, see
 * attemptSpan). Without it every attempt of the period counts.
 */
export async function claimPeriod(
  db: Db,
  period: { key: string; job: JobName; now: Date; claimTtlMs: number; attemptsFrom?: Date },
): Promise<PeriodClaim> {
  const claimedUntil = new Date(period.now.getTime() + period.claimTtlMs);
  const retryBefore = new Date(period.now.getTime() - RETRY_DELAY_MS);
  const attemptsFrom = period.attemptsFrom ?? null;
  const result = await db.raw<{ rows: ClaimRow[] }>(
    `WITH claimed AS (
       INSERT INTO scheduler_periods AS p (period_key, job, attempts, last_attempt_at, claimed_until)
       VALUES (:key, :job, 1, :now, :claimedUntil)
       ON CONFLICT (period_key) DO UPDATE
         SET attempts = CASE WHEN p.last_attempt_at < CAST(:attemptsFrom AS timestamptz) THEN 1 ELSE p.attempts + 1 END,
             last_attempt_at = EXCLUDED.last_attempt_at, claimed_until = EXCLUDED.claimed_until
         WHERE p.done_at IS NULL
           AND (p.attempts < :maxAttempts OR p.last_attempt_at < CAST(:attemptsFrom AS timestamptz))
           AND (p.claimed_until IS NULL OR p.claimed_until < EXCLUDED.last_attempt_at)
           AND (p.last_attempt_at IS NULL OR p.last_attempt_at <= :retryBefore)
       RETURNING p.attempts
     )
     SELECT true AS claimed, attempts, CAST(NULL AS timestamptz) AS done_at, CAST(NULL AS timestamptz) AS claimed_until, CAST(NULL AS timestamptz) AS last_attempt_at
       FROM claimed
     UNION ALL
     SELECT false, attempts, done_at, claimed_until, last_attempt_at
       FROM scheduler_periods
      WHERE period_key = :key AND NOT EXISTS (SELECT 1 FROM claimed)`,
    { key: period.key, job: period.job, now: period.now, claimedUntil, maxAttempts: MAX_ATTEMPTS_PER_PERIOD, retryBefore, attemptsFrom },
  );
  const row = result.rows[0];
  // No row at all: another process inserted the period concurrently, after this statement's snapshot.
  if (!row) return { claimed: false, reason: 'running' };
  if (row.claimed) return { claimed: true, attempt: row.attempts };
  if (row.done_at) return { claimed: false, reason: 'done' };
  if (row.claimed_until && row.claimed_until >= period.now) return { claimed: false, reason: 'running' };
  if (attemptsLeft(row.attempts, row.last_attempt_at, attemptsFrom) === 0) return { claimed: false, reason: 'exhausted' };
  const lastAttempt = row.last_attempt_at ?? period.now;
  return { claimed: false, reason: 'waiting', retryAt: new Date(lastAttempt.getTime() + RETRY_DELAY_MS) };
}

/** Attempts the period has left now: all of them again once its last attempt is before `attemptsFrom`. */
export function attemptsLeft(attempts: number, lastAttemptAt: Date | null | undefined, attemptsFrom: Date | null | undefined): number {
  if (attemptsFrom && lastAttemptAt && lastAttemptAt < attemptsFrom) return MAX_ATTEMPTS_PER_PERIOD;
  return Math.max(0, MAX_ATTEMPTS_PER_PERIOD - attempts);
}

/**
 * Claims the current 30-minute slot of the interval jobs, all in one
 * statement; returns the keys this process won. A slot is attempted once,
 * because the next slot is its retry, and its outcome is in job_runs, so slot
 * rows are claims only.
 */
export async function claimSlots(
  db: Db,
  claim: { slots: ReadonlyArray<{ key: string; job: JobName }>; now: Date; slotEnd: Date },
): Promise<Set<string>> {
  if (claim.slots.length === 0) return new Set();
  const result = await db.raw<{ rows: Array<{ period_key: string }> }>(
    `INSERT INTO scheduler_periods (period_key, job, attempts, last_attempt_at, claimed_until)
     VALUES ${claim.slots.map(() => '(?, ?, 1, ?, ?)').join(', ')}
     ON CONFLICT (period_key) DO NOTHING
     RETURNING period_key`,
    claim.slots.flatMap((slot) => [slot.key, slot.job, claim.now, claim.slotEnd]),
  );
  return new Set(result.rows.map((row) => row.period_key));
}

/** Deletes slot rows of the interval jobs last attempted before `before`, so the table stays small. */
export async function pruneSlots(db: Db, prune: { jobs: readonly JobName[]; before: Date }): Promise<number> {
  return db('scheduler_periods').whereIn('job', prune.jobs).where('last_attempt_at', '<', prune.before).delete();
}

/** The attempt fully succeeded: the period never runs again. */
export async function markPeriodDone(db: Db, period: { key: string; now: Date }): Promise<void> {
  await db('scheduler_periods').where({ period_key: period.key }).update({ done_at: period.now, claimed_until: null });
}

/**
 * Which attempt holds a claim: its number and `claimedAt`, the `now` it passed to
 * claimPeriod, which the claim wrote as `last_attempt_at`. The number alone is not
 * enough: the digest numbers its attempts afresh each local day, so yesterday's
 * attempt 1, still running after its claim lapsed, has the number of today's. Every
 * claim writes a later `last_attempt_at` than the one before it (it waits 30
 * minutes after it), so the timestamp tells them apart.
 */
export interface PeriodAttempt {
  key: string;
  attempt: number;
  claimedAt: Date;
}

/**
 * The attempt did not fully succeed: free the claim, so the period is tried
 * again 30 minutes after this attempt while attempts remain. `refundAttempt`
 * gives the attempt back (the job never ran because another run held its lease).
 * Only this attempt's own claim is released.
 */
export async function releasePeriod(db: Db, period: PeriodAttempt & { refundAttempt?: boolean }): Promise<void> {
  await db('scheduler_periods')
    .where({ period_key: period.key, attempts: period.attempt, last_attempt_at: period.claimedAt })
    .whereNull('done_at')
    .update({ claimed_until: null, attempts: period.refundAttempt ? period.attempt - 1 : period.attempt });
}

/** Keeps a long-running attempt's claim alive; false when it is no longer this attempt's. */
export async function extendPeriodClaim(db: Db, period: PeriodAttempt & { until: Date }): Promise<boolean> {
  const updated = await db('scheduler_periods')
    .where({ period_key: period.key, attempts: period.attempt, last_attempt_at: period.claimedAt })
    .whereNull('done_at')
    .whereNotNull('claimed_until')
    .update({ claimed_until: period.until });
  return updated === 1;
}

export interface PeriodState {
  key: string;
  job: JobName;
  attempts: number;
  lastAttemptAt?: Date;
  claimedUntil?: Date;
  doneAt?: Date;
}

export async function readPeriodStates(db: Db, keys: readonly string[]): Promise<PeriodState[]> {
  if (keys.length === 0) return [];
  const rows = await db('scheduler_periods')
    .whereIn('period_key', keys)
    .select<Array<{ period_key: string; job: JobName; attempts: number; last_attempt_at: Date | null; claimed_until: Date | null; done_at: Date | null }>>(
      'period_key',
      'job',
      'attempts',
      'last_attempt_at',
      'claimed_until',
      'done_at',
    );
  return rows.map((row) => ({
    key: row.period_key,
    job: row.job,
    attempts: row.attempts,
    lastAttemptAt: row.last_attempt_at ?? undefined,
    claimedUntil: row.claimed_until ?? undefined,
    doneAt: row.done_at ?? undefined,
  }));
}
