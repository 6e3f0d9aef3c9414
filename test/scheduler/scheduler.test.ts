import { setTimeout as sleep } from 'node:timers/promises';
import { fromZonedTime } from 'date-fns-tz';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { LeaseHeldError } from '../../src/errors.js';
import type { JobName, JobSummary } from '../../src/jobs/types.js';
import { readNextDueTimes, startInAppScheduler } from '../../src/scheduler/index.js';
import { createScheduler, type Scheduler, type TickResult } from '../../src/scheduler/scheduler.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { ALL_JOBS_ENV, FIVE_MINUTES, SYDNEY, periodRow, recordingRunJob, schedulerContext } from './support.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db('scheduler_periods').delete();
});

const sydney = (local: string) => fromZonedTime(local, SYDNEY);
const DIGEST_ONLY = { APP_TIMEZONE: SYDNEY, CLEARANCE_DIGEST: 'true' };

/** Ticks every scheduler at the same instants, every 5 minutes, until the local time `untilLocal`. */
async function runUntil(schedulers: Scheduler[], clock: FixedClock, untilLocal: string): Promise<TickResult[]> {
  const until = sydney(untilLocal);
  const results: TickResult[] = [];
  for (; clock.now() < until; clock.advance(FIVE_MINUTES)) results.push(...(await Promise.all(schedulers.map((s) => s.tick()))));
  return results;
}

const localTimes = (runs: Array<{ local: string }>) => runs.map((run) => run.local);

describe('clearance digest catch-up window', () => {
  it('runs on the 4th when the app was down from the 1st to the 4th', async () => {
    const clock = new FixedClock(sydney('2026-11-04T10:00:00'));
    const recorder = recordingRunJob(clock);
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock, DIGEST_ONLY), runJob: recorder.runJob });
    await runUntil([scheduler], clock, '2026-11-12T00:00:00');
    expect(localTimes(recorder.of('send-clearance-digest'))).toEqual(['2026-11-04 10:00 Wed']);
    expect((await periodRow(tdb.db, 'send-clearance-digest:2026-11'))?.done_at).not.toBeNull();
  });

  it('does not run that month when the app was down past the 7th, and runs on the next 1st at 07:00', async () => {
    const clock = new FixedClock(sydney('2026-11-08T00:00:00'));
    const recorder = recordingRunJob(clock);
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock, DIGEST_ONLY), runJob: recorder.runJob });
    await runUntil([scheduler], clock, '2026-12-02T00:00:00');
    expect(localTimes(recorder.of('send-clearance-digest'))).toEqual(['2026-12-01 07:00 Tue']);
    expect(await periodRow(tdb.db, 'send-clearance-digest:2026-11')).toBeUndefined();
  });
});

describe('reconcile with the card provider', () => {
  const WITH_PAYMENTS = { APP_TIMEZONE: SYDNEY, PSP_SECRET_KEY: 'sk_test_scheduler', PSP_WEBHOOK_SECRET: 'whsec_scheduler' };

  it('runs once in every hour when card payments are configured; a run that leaves a difference is tried again 30 minutes later', async () => {
    const clock = new FixedClock(sydney('2026-11-22T10:00:00'));
    const recorder = recordingRunJob(clock, (job, calls) => (job === 'reconcile' && calls === 1 ? 'partial' : 'ok'));
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock, WITH_PAYMENTS), runJob: recorder.runJob });
    await runUntil([scheduler], clock, '2026-11-22T13:00:00');
    expect(localTimes(recorder.of('reconcile'))).toEqual(['2026-11-22 10:00 Sun', '2026-11-22 11:00 Sun', '2026-11-22 11:30 Sun', '2026-11-22 12:00 Sun']);
    expect(await periodRow(tdb.db, 'reconcile:2026-11-21T23Z')).toMatchObject({ attempts: 1 });
    expect(await periodRow(tdb.db, 'reconcile:2026-11-22T00Z')).toMatchObject({ attempts: 2 });
  });

  it('runs first in a tick, before the checkout sweep and the reminders, so payments the provider took during an outage are registered before the sweep expires their checkouts', async () => {
    // The server comes back after days down: the first tick finds every job due.
    const clock = new FixedClock(sydney('2026-11-23T09:10:00'));
    const recorder = recordingRunJob(clock);
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock, { ...ALL_JOBS_ENV, ...WITH_PAYMENTS }), runJob: recorder.runJob });
    const tick = await scheduler.tick();
    expect(tick.runs.map((run) => run.job)).toEqual(['reconcile', 'send-reminders', 'sweep-checkouts', 'send-celebrations', 'error-issues', 'purge-answers']);
    expect(recorder.runs.map((run) => run.job)).toEqual(['reconcile', 'send-reminders', 'sweep-checkouts', 'send-celebrations', 'error-issues', 'purge-answers']);
  });

  it('never runs without card payments configured', async () => {
    const clock = new FixedClock(sydney('2026-11-22T10:00:00'));
    const recorder = recordingRunJob(clock);
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock, { APP_TIMEZONE: SYDNEY }), runJob: recorder.runJob });
    await runUntil([scheduler], clock, '2026-11-22T12:00:00');
    expect(recorder.of('reconcile')).toEqual([]);
  });
});

describe('retries of a period job that does not fully succeed', () => {
  it('retries a partial run 30 minutes later, at most 3 attempts in the period, then not again until the next period', async () => {
    const clock = new FixedClock(sydney('2026-11-22T06:00:00'));
    const recorder = recordingRunJob(clock, () => 'partial');
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob: recorder.runJob });
    await runUntil([scheduler], clock, '2026-11-23T07:05:00');
    expect(localTimes(recorder.of('send-celebrations'))).toEqual([
      '2026-11-22 07:00 Sun',
      '2026-11-22 07:30 Sun',
      '2026-11-22 08:00 Sun',
      '2026-11-23 07:00 Mon',
    ]);
    expect(await periodRow(tdb.db, 'send-celebrations:2026-11-22')).toMatchObject({ attempts: 3, done_at: null, claimed_until: null });
  });

  it('stops retrying once an attempt succeeds, and marks the period done', async () => {
    const clock = new FixedClock(sydney('2026-11-22T06:55:00'));
    const recorder = recordingRunJob(clock, (job, calls) => (job === 'send-celebrations' && calls === 0 ? 'failed' : 'ok'));
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob: recorder.runJob });
    await runUntil([scheduler], clock, '2026-11-22T23:00:00');
    expect(localTimes(recorder.of('send-celebrations'))).toEqual(['2026-11-22 07:00 Sun', '2026-11-22 07:30 Sun']);
    const row = await periodRow(tdb.db, 'send-celebrations:2026-11-22');
    expect(row).toMatchObject({ attempts: 2, claimed_until: null });
    expect(row?.done_at).toEqual(sydney('2026-11-22T07:30:00'));
  });

  it('treats a job that throws as a failed attempt and keeps ticking the other jobs', async () => {
    const clock = new FixedClock(sydney('2026-11-22T06:55:00'));
    const recorder = recordingRunJob(clock, (job) => (job === 'send-celebrations' ? new Error('mail server down') : 'ok'));
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob: recorder.runJob });
    const results = await runUntil([scheduler], clock, '2026-11-22T09:00:00');
    expect(localTimes(recorder.of('send-celebrations'))).toEqual(['2026-11-22 07:00 Sun', '2026-11-22 07:30 Sun', '2026-11-22 08:00 Sun']);
    expect(results.flatMap((r) => r.runs).filter((run) => run.job === 'send-celebrations').map((run) => run.outcome)).toEqual([
      'error',
      'error',
      'error',
    ]);
    expect(recorder.of('send-reminders')).toHaveLength(5); // 06:55 slot, 07:00, 07:30, 08:00, 08:30
  });

  it('counts the digest already sent this month (status already-sent) as done, and its partial status as not done', async () => {
    const clock = new FixedClock(sydney('2026-11-01T07:00:00'));
    const answers: Array<Partial<JobSummary> & { status: string }> = [
      { outcome: 'ok', status: 'partial' },
      { outcome: 'ok', status: 'already-sent' },
    ];
    const calls: Date[] = [];
    const runJob = async (job: JobName): Promise<JobSummary> => {
      if (job !== 'send-clearance-digest') return { job, outcome: 'ok', dryRun: false };
      calls.push(clock.now());
      return { job, dryRun: false, outcome: 'ok', ...answers[calls.length - 1] } as JobSummary;
    };
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock, DIGEST_ONLY), runJob });
    await runUntil([scheduler], clock, '2026-11-08T00:00:00');
    expect(calls).toEqual([sydney('2026-11-01T07:00:00'), sydney('2026-11-01T07:30:00')]);
    expect((await periodRow(tdb.db, 'send-clearance-digest:2026-11'))?.done_at).toEqual(sydney('2026-11-01T07:30:00'));
  });
});

describe('the digest attempts per day per process, and restarts', () => {
  it('a lease held by another run gives the period attempt back, but counts towards 3 digest attempts per local day', async () => {
    const clock = new FixedClock(sydney('2026-11-01T06:00:00'));
    const held = () => new LeaseHeldError('clearance-digest', clock.now());
    const recorder = recordingRunJob(clock, (job) => (job === 'send-clearance-digest' ? held() : 'ok'));
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock, DIGEST_ONLY), runJob: recorder.runJob });
    await runUntil([scheduler], clock, '2026-11-02T12:00:00');
    expect(localTimes(recorder.of('send-clearance-digest'))).toEqual([
      '2026-11-01 07:00 Sun',
      '2026-11-01 07:30 Sun',
      '2026-11-01 08:00 Sun',
      // A new local day: three more, because the lease-held attempts did not use up the month's attempts.
      '2026-11-02 00:00 Mon',
      '2026-11-02 00:30 Mon',
      '2026-11-02 01:00 Mon',
    ]);
    expect(await periodRow(tdb.db, 'send-clearance-digest:2026-11')).toMatchObject({ attempts: 0, done_at: null, claimed_until: null });
  });

  it('a digest that failed 3 times on the 1st is tried again on the 2nd (3 attempts per local day, not per month), and once sent never again', async () => {
    const clock = new FixedClock(sydney('2026-11-01T06:55:00'));
    const recorder = recordingRunJob(clock, (job, calls) => (job === 'send-clearance-digest' && calls < 4 ? 'failed' : 'ok'));
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock, DIGEST_ONLY), runJob: recorder.runJob });
    await runUntil([scheduler], clock, '2026-11-09T00:00:00');
    expect(localTimes(recorder.of('send-clearance-digest'))).toEqual([
      '2026-11-01 07:00 Sun',
      '2026-11-01 07:30 Sun',
      '2026-11-01 08:00 Sun',
      '2026-11-02 00:00 Mon',
      '2026-11-02 00:30 Mon',
    ]);
    expect(await periodRow(tdb.db, 'send-clearance-digest:2026-11')).toMatchObject({ attempts: 2, done_at: sydney('2026-11-02T00:30:00'), claimed_until: null });
  });

  it('a digest that keeps failing gets 3 attempts on each day of its window, none on a restart the same day, none after the 7th; status shows the next day', async () => {
    const clock = new FixedClock(sydney('2026-11-01T06:55:00'));
    const failing = recordingRunJob(clock, (job) => (job === 'send-clearance-digest' ? 'failed' : 'ok'));
    const ctx = schedulerContext(tdb.db, clock, DIGEST_ONLY);
    await runUntil([createScheduler({ ctx, runJob: failing.runJob })], clock, '2026-11-01T12:00:00');
    expect(failing.of('send-clearance-digest')).toHaveLength(3);
    const next = (await readNextDueTimes(ctx)).find((due) => due.job === 'send-clearance-digest');
    expect(next).toMatchObject({ periodKey: 'send-clearance-digest:2026-11', local: '2026-11-02 00:00 +11:00' });

    // A restart the same day: the database has counted today's attempts.
    const restarted = recordingRunJob(clock, (job) => (job === 'send-clearance-digest' ? 'failed' : 'ok'));
    await runUntil([createScheduler({ ctx, runJob: restarted.runJob })], clock, '2026-11-10T00:00:00');
    const days = restarted.of('send-clearance-digest').map((run) => run.local.slice(0, 10));
    expect(days).toEqual(['02', '03', '04', '05', '06', '07'].flatMap((day) => Array(3).fill(`2026-11-${day}`)));
    expect(await periodRow(tdb.db, 'send-clearance-digest:2026-11')).toMatchObject({ attempts: 3, done_at: null, claimed_until: null });
    expect((await readNextDueTimes(ctx)).find((due) => due.job === 'send-clearance-digest')).toMatchObject({ local: '2026-12-01 07:00 +11:00' });
  });

  it('a restart resets the per-day count, but the database keeps a done period from running again', async () => {
    const clock = new FixedClock(sydney('2026-11-01T06:55:00'));
    const heldAll = recordingRunJob(clock, (job) => (job === 'send-clearance-digest' ? new LeaseHeldError('clearance-digest', clock.now()) : 'ok'));
    const first = createScheduler({ ctx: schedulerContext(tdb.db, clock, DIGEST_ONLY), runJob: heldAll.runJob });
    await runUntil([first], clock, '2026-11-01T12:00:00');
    expect(heldAll.of('send-clearance-digest')).toHaveLength(3);
    await first.stop();

    // The process restarts at 12:00 the same day: a fresh count, so it tries again, and succeeds.
    const succeeding = recordingRunJob(clock);
    const second = createScheduler({ ctx: schedulerContext(tdb.db, clock, DIGEST_ONLY), runJob: succeeding.runJob });
    await runUntil([second], clock, '2026-11-01T13:00:00');
    expect(localTimes(succeeding.of('send-clearance-digest'))).toEqual(['2026-11-01 12:00 Sun']);
    await second.stop();

    // Another restart: the month is done in the database, so nothing runs through the rest of the window.
    const after = recordingRunJob(clock);
    const third = createScheduler({ ctx: schedulerContext(tdb.db, clock, DIGEST_ONLY), runJob: after.runJob });
    await runUntil([third], clock, '2026-11-08T00:00:00');
    expect(after.of('send-clearance-digest')).toEqual([]);
  });

  it('a restart within the day does not send celebrations again', async () => {
    const clock = new FixedClock(sydney('2026-11-22T06:55:00'));
    const before = recordingRunJob(clock);
    await runUntil([createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob: before.runJob })], clock, '2026-11-22T07:10:00');
    const after = recordingRunJob(clock);
    await runUntil([createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob: after.runJob })], clock, '2026-11-22T23:55:00');
    expect(localTimes(before.of('send-celebrations'))).toEqual(['2026-11-22 07:00 Sun']);
    expect(after.of('send-celebrations')).toEqual([]);
    // The 30-minute slot claimed before the restart is not run again either.
    expect(after.of('send-reminders')[0]?.local).toBe('2026-11-22 07:30 Sun');
  });

  it('a claim left by a crashed process blocks until it expires, then the period is retried', async () => {
    const now = sydney('2026-11-22T09:00:00');
    await tdb.db('scheduler_periods').insert({
      period_key: 'send-celebrations:2026-11-22',
      job: 'send-celebrations',
      attempts: 1,
      last_attempt_at: sydney('2026-11-22T07:00:00'),
      claimed_until: sydney('2026-11-22T09:20:00'),
    });
    const clock = new FixedClock(now);
    const recorder = recordingRunJob(clock);
    await runUntil([createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob: recorder.runJob })], clock, '2026-11-22T10:00:00');
    expect(localTimes(recorder.of('send-celebrations'))).toEqual(['2026-11-22 09:25 Sun']);
    expect(await periodRow(tdb.db, 'send-celebrations:2026-11-22')).toMatchObject({ attempts: 2, claimed_until: null });
  });
});

describe('two processes on one database', () => {
  it('ticking at the same instants, they run each period once between them', async () => {
    const clock = new FixedClock(sydney('2026-10-31T00:00:00'));
    const recorder = recordingRunJob(clock);
    // Yield between calls so the two schedulers' statements interleave.
    const runJob = async (job: JobName) => {
      await sleep(0);
      return recorder.runJob(job);
    };
    const a = createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob });
    const b = createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob });
    const results = await runUntil([a, b], clock, '2026-11-03T00:00:00');
    const keys = results.flatMap((result) => result.runs.map((run) => run.periodKey));
    expect(new Set(keys).size).toBe(keys.length);
    expect(recorder.of('send-reminders')).toHaveLength(3 * 48);
    expect(recorder.of('sweep-checkouts')).toHaveLength(3 * 48);
    expect(localTimes(recorder.of('send-celebrations'))).toEqual(['2026-10-31 07:00 Sat', '2026-11-01 07:00 Sun', '2026-11-02 07:00 Mon']);
    expect(localTimes(recorder.of('send-clearance-digest'))).toEqual(['2026-11-01 07:00 Sun']);
    // The week that began Monday 26 October was open at start; the next one opens Monday 2 November 09:00.
    expect(localTimes(recorder.of('error-issues'))).toEqual(['2026-10-31 00:00 Sat', '2026-11-02 09:00 Mon']);
    // Both processes did some of the work.
    const ranByA = results.filter((_, i) => i % 2 === 0).flatMap((r) => r.runs).length;
    expect(ranByA).toBeGreaterThan(0);
    expect(ranByA).toBeLessThan(keys.length);
  });
});

describe('jobs switched off by configuration', () => {
  it('never runs the clearance digest when CLEARANCE_DIGEST is unset', async () => {
    const clock = new FixedClock(sydney('2026-11-01T00:00:00'));
    const recorder = recordingRunJob(clock);
    const env = { ...ALL_JOBS_ENV, CLEARANCE_DIGEST: undefined };
    await runUntil([createScheduler({ ctx: schedulerContext(tdb.db, clock, env), runJob: recorder.runJob })], clock, '2026-11-08T00:00:00');
    expect(recorder.of('send-clearance-digest')).toEqual([]);
    expect(recorder.of('send-celebrations')).toHaveLength(7);
    expect(await tdb.db('scheduler_periods').where({ job: 'send-clearance-digest' })).toEqual([]);
  });

  it('with ERROR_DIGEST set but no tracker, still runs error-issues each Monday from 09:00, to purge old rows only (scheduler-purge.test.ts)', async () => {
    const clock = new FixedClock(sydney('2026-11-01T00:00:00'));
    const recorder = recordingRunJob(clock);
    const env = { APP_TIMEZONE: SYDNEY, ERROR_DIGEST: 'true' };
    await runUntil([createScheduler({ ctx: schedulerContext(tdb.db, clock, env), runJob: recorder.runJob })], clock, '2026-11-17T00:00:00');
    // The week that was open when it started first (its Monday 09:00 had passed), then each Monday.
    expect(recorder.of('error-issues').map((run) => run.local)).toEqual(['2026-11-01 00:00 Sun', '2026-11-02 09:00 Mon', '2026-11-09 09:00 Mon', '2026-11-16 09:00 Mon']);
  });
});

describe('the timer', () => {
  it('startInAppScheduler (eventops serve) ticks at once on start', async () => {
    const clock = new FixedClock(sydney('2026-11-22T10:00:00'));
    const recorder = recordingRunJob(clock);
    const scheduler = await startInAppScheduler(schedulerContext(tdb.db, clock), { runJob: recorder.runJob });
    await vi.waitFor(() => expect(recorder.of('sweep-checkouts')).toHaveLength(1), { timeout: 5000 });
    await scheduler.stop();
    expect(localTimes(recorder.of('send-reminders'))).toEqual(['2026-11-22 10:00 Sun']);
  });

  it('keeps ticking after a job throws, and stop() waits for the running job', async () => {
    const clock = new FixedClock(sydney('2026-11-22T10:00:00'));
    let calls = 0;
    let finishLast: () => void = () => undefined;
    const lastRunning = new Promise<void>((resolve) => (finishLast = resolve));
    const runJob = async (job: JobName): Promise<JobSummary> => {
      if (job !== 'send-reminders') return { job, outcome: 'ok', dryRun: false };
      calls++;
      clock.advance(30 * 60_000); // the next tick is in a new slot
      if (calls < 3) throw new Error('reminders broke');
      await lastRunning;
      return { job, outcome: 'ok', dryRun: false };
    };
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob, tickMs: 5 });
    scheduler.start();
    await vi.waitFor(() => expect(calls).toBe(3), { timeout: 5000 });
    let stopped = false;
    const stopping = scheduler.stop().then(() => (stopped = true));
    await sleep(20);
    expect(stopped).toBe(false);
    finishLast();
    await stopping;
    expect(stopped).toBe(true);
    expect(await scheduler.tick()).toMatchObject({ runs: [], skipped: 'stopped' });
  });

  it('renews the claim of a long-running attempt so no other process takes the period over', async () => {
    const clock = new FixedClock(sydney('2026-11-22T07:00:00'));
    let claimedUntilDuringRun: Date | null | undefined;
    const runJob = async (job: JobName): Promise<JobSummary> => {
      if (job === 'send-celebrations') {
        clock.advance(20 * 60_000);
        await sleep(1300);
        claimedUntilDuringRun = (await periodRow(tdb.db, 'send-celebrations:2026-11-22'))?.claimed_until;
      }
      return { job, outcome: 'ok', dryRun: false };
    };
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob, claimTtlMs: 3000 });
    await scheduler.tick();
    expect(claimedUntilDuringRun).toEqual(new Date(sydney('2026-11-22T07:20:00').getTime() + 3000));
  });
});

describe('next due times for eventops status', () => {
  it('reads done periods from the database and shows the next local due time', async () => {
    const clock = new FixedClock(sydney('2026-11-22T06:55:00'));
    const recorder = recordingRunJob(clock, (job) => (job === 'error-issues' ? 'partial' : 'ok'));
    const ctx = schedulerContext(tdb.db, clock);
    await runUntil([createScheduler({ ctx, runJob: recorder.runJob })], clock, '2026-11-22T07:05:00');
    const next = Object.fromEntries((await readNextDueTimes(ctx)).map((entry) => [entry.job, entry]));
    expect(next['send-celebrations']).toMatchObject({ enabled: true, local: '2026-11-23 07:00 +11:00' });
    expect(next['send-reminders']).toMatchObject({ local: '2026-11-22 07:30 +11:00' });
    expect(next['send-clearance-digest']).toMatchObject({ local: '2026-12-01 07:00 +11:00' });
    // The week's error digest ran partially at 06:55 and is retried 30 minutes later.
    expect(next['error-issues']).toMatchObject({ periodKey: 'error-issues:2026-W47', local: '2026-11-22 07:25 +11:00' });
  });

  it('returns on a day before a skipped midnight (Asia/Beirut, 2025-03-29) once that day is done', async () => {
    const beirut = (local: string) => fromZonedTime(local, 'Asia/Beirut');
    const clock = new FixedClock(beirut('2025-03-29T06:55:00'));
    const recorder = recordingRunJob(clock);
    const ctx = schedulerContext(tdb.db, clock, { APP_TIMEZONE: 'Asia/Beirut' });
    const scheduler = createScheduler({ ctx, runJob: recorder.runJob });
    for (; clock.now() < beirut('2025-03-29T12:00:00'); clock.advance(FIVE_MINUTES)) await scheduler.tick();
    expect(await periodRow(tdb.db, 'send-celebrations:2025-03-29')).toMatchObject({ done_at: expect.any(Date) });
    const next = Object.fromEntries((await readNextDueTimes(ctx)).map((entry) => [entry.job, entry]));
    expect(next['send-celebrations']).toMatchObject({ periodKey: 'send-celebrations:2025-03-30', local: '2025-03-30 07:00 +03:00' });
  });
});
