import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { createScheduler } from '../../src/scheduler/scheduler.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { SYDNEY } from './support.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const DAY = 24 * 60 * 60_000;

async function errorRow(fingerprint: string, createdAt: Date): Promise<void> {
  await tdb.db('error_logs').insert({ fingerprint, error_class: 'TypeError', message: 'broke', stack: 'TypeError: broke', source: 'job:test', created_at: createdAt });
}

describe('the in-app scheduler purges old rows every week, whether or not the error digest files issues', () => {
  it('without ERROR_DIGEST the weekly error-issues run purges the error log past 90 days and files nothing, even with a tracker configured', async () => {
    // Monday 23 November 2026, 09:05 in Sydney: the error digest's weekly window is open.
    const now = new Date('2026-11-22T22:05:00Z');
    const clock = new FixedClock(now);
    // A tracker nobody answers: filing (or even listing) would fail the run.
    const ctx = createTestContext({ db: tdb.db, clock, env: { APP_TIMEZONE: SYDNEY, TRACKER_TOKEN: 'token', TRACKER_REPO: 'grace/eventops', TRACKER_API_URL: 'http://127.0.0.1:9' } });
    await errorRow('old0000000000001', new Date(now.getTime() - 100 * DAY));
    await errorRow('new0000000000001', new Date(now.getTime() - 2 * DAY));

    const tick = await createScheduler({ ctx, tickMs: 60_000 }).tick();

    expect(tick.runs.find((run) => run.job === 'error-issues')).toMatchObject({ outcome: 'skipped' });
    expect(await tdb.db('error_logs').orderBy('fingerprint').pluck('fingerprint')).toEqual(['new0000000000001']);
    const summary = (await tdb.db('job_runs').where({ job: 'error-issues' }).first()).summary as { reason: string; purgedErrors: number };
    expect(summary).toMatchObject({ purgedErrors: 1, reason: 'ERROR_DIGEST is not true (old rows were still purged)' });
  });
});
