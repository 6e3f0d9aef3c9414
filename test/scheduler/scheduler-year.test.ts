import { formatInTimeZone, fromZonedTime } from 'date-fns-tz';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { createScheduler } from '../../src/scheduler/scheduler.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { FIVE_MINUTES, SYDNEY, recordingRunJob, schedulerContext, type RecordedRun } from './support.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const start = fromZonedTime('2026-01-01T00:00:00', SYDNEY);
const end = fromZonedTime('2027-01-01T00:00:00', SYDNEY);
const localDay = (run: RecordedRun) => run.local.slice(0, 10);
const localClock = (run: RecordedRun) => run.local.slice(11, 16);

describe('a whole year in Australia/Sydney, ticking every 5 minutes', () => {
  const clock = new FixedClock(start);
  const recorder = recordingRunJob(clock);
  let ticks = 0;

  beforeAll(async () => {
    const scheduler = createScheduler({ ctx: schedulerContext(tdb.db, clock), runJob: recorder.runJob });
    for (; clock.now() < end; clock.advance(FIVE_MINUTES)) {
      await scheduler.tick();
      ticks++;
    }
  }, 120_000);

  it('ticked every 5 minutes for 365 days, both DST changes included', () => {
    expect(ticks).toBe((end.getTime() - start.getTime()) / FIVE_MINUTES);
    // 2026-04-05 has 25 hours and 2026-10-04 has 23: the year is still 365 × 24 hours.
    expect(ticks).toBe(365 * 288);
  });

  it('sends celebrations exactly once per local day, at the first tick from 07:00 local, never before', () => {
    const runs = recorder.of('send-celebrations');
    const days = runs.map(localDay);
    expect(new Set(days).size).toBe(365);
    expect(days).toHaveLength(365);
    expect(days[0]).toBe('2026-01-01');
    expect(days.at(-1)).toBe('2026-12-31');
    for (const run of runs) expect(localClock(run)).toBe('07:00');
    // The two DST days: 07:00 AEST on 5 April (+10), 07:00 AEDT on 4 October (+11).
    expect(runs.find((run) => localDay(run) === '2026-04-05')?.at.toISOString()).toBe('2026-04-04T21:00:00.000Z');
    expect(runs.find((run) => localDay(run) === '2026-10-04')?.at.toISOString()).toBe('2026-10-03T20:00:00.000Z');
  });

  it('sends the clearance digest exactly once per month, on the 1st at 07:00 local', () => {
    const runs = recorder.of('send-clearance-digest');
    expect(runs.map((run) => run.local.slice(0, 16))).toEqual(
      Array.from({ length: 12 }, (_, i) => `2026-${String(i + 1).padStart(2, '0')}-01 07:00`),
    );
  });

  it('runs the error digest once per ISO week: the week already open at start, then each Monday at 09:00 local', () => {
    const runs = recorder.of('error-issues');
    const weeks = runs.map((run) => formatInTimeZone(run.at, SYDNEY, "RRRR-'W'II"));
    // 2026 has 53 ISO weeks; W01 began Monday 29 December 2025, so it was open (not yet run) when the year began.
    expect(weeks).toEqual(Array.from({ length: 53 }, (_, i) => `2026-W${String(i + 1).padStart(2, '0')}`));
    expect(runs[0]?.at).toEqual(start);
    for (const run of runs.slice(1)) expect(run.local.slice(11)).toBe('09:00 Mon');
  });

  it('purges sensitive answers once per ISO week, as the error digest: the week already open at start, then each Monday at 09:00 local', () => {
    const runs = recorder.of('purge-answers');
    expect(runs.map((run) => formatInTimeZone(run.at, SYDNEY, "RRRR-'W'II"))).toEqual(Array.from({ length: 53 }, (_, i) => `2026-W${String(i + 1).padStart(2, '0')}`));
    for (const run of runs.slice(1)) expect(run.local.slice(11)).toBe('09:00 Mon');
  });

  it('runs reminders and checkout cleanup every 30 minutes, no slot missed or repeated', () => {
    for (const job of ['send-reminders', 'sweep-checkouts'] as const) {
      const runs = recorder.of(job);
      expect(runs).toHaveLength(ticks / 6);
      expect(runs[0]?.at).toEqual(start);
      for (let i = 1; i < runs.length; i++) {
        expect(runs[i]!.at.getTime() - runs[i - 1]!.at.getTime()).toBe(30 * 60_000);
      }
    }
  });

  it('leaves every period done in the database and keeps only recent slot rows', async () => {
    const periods = await tdb.db('scheduler_periods').whereNotIn('job', ['send-reminders', 'sweep-checkouts']);
    // Celebrations daily, the clearance digest monthly, the error digest and the purge of sensitive answers weekly.
    expect(periods).toHaveLength(365 + 12 + 53 + 53);
    expect(periods.every((row: { done_at: Date | null; attempts: number }) => row.done_at !== null && row.attempts === 1)).toBe(true);
    const slots = await tdb.db('scheduler_periods').whereIn('job', ['send-reminders', 'sweep-checkouts']).count<{ n: number }>({ n: '*' }).first();
    // Rows older than two days are pruned once per local day: at most three days of slots for two jobs remain.
    expect(Number(slots?.n)).toBeLessThanOrEqual(2 * 3 * 48);
  });
});
