import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { startTrackerServer, type TrackerServer } from '../support/tracker-server.js';

let tdb: TestDatabase;
let tracker: TrackerServer;

beforeAll(async () => {
  tdb = await createTestDatabase();
  tracker = await startTrackerServer();
});
afterAll(async () => {
  await tracker.close();
  await tdb.drop();
});

describe('eventops error-issues under cron', () => {
  it('files the week\'s new error group on the tracker at TRACKER_API_URL and prints the JSON summary; a failing tracker exits 1', async () => {
    await tdb.db('error_logs').insert({
      fingerprint: '0123456789abcdef',
      error_class: 'TypeError',
      message: 'x is undefined',
      source: 'job:send-reminders',
      created_at: new Date(Date.now() - 24 * 60 * 60_000),
    });
    const env = testEnv({ DATABASE_URL: tdb.url, ...tracker.configEnv() });

    tracker.failNext(1, 'rate-limit');
    const failed = await runCli(['error-issues', '--json'], { env });
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/issue tracker answered 403/);

    const result = await runCli(['error-issues', '--json'], { env });
    expect(result.code).toBe(0);
    // The failed run's own error row is a new group of the week too.
    expect(JSON.parse(result.stdout)).toMatchObject({ job: 'error-issues', outcome: 'ok', groups: 2, filed: 2, alreadyOpen: 0 });
    expect(tracker.created.map((issue) => issue.title)).toContain('[eventops] TypeError: x is undefined');

    const skipped = await runCli(['error-issues', '--json'], { env: testEnv({ DATABASE_URL: tdb.url }) });
    expect(skipped.code).toBe(0);
    expect(JSON.parse(skipped.stdout)).toMatchObject({ outcome: 'skipped' });
  });
});
