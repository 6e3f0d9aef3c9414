import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { LeaseHeldError } from '../../src/errors.js';
import { fileErrorIssues } from '../../src/jobs/error-issues.js';
import { JobFailedError } from '../../src/jobs/run-recorded.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startTrackerServer, type TrackerServer } from '../support/tracker-server.js';

const NOW = new Date('2026-11-23T00:00:00Z');
const DAY = 24 * 60 * 60_000;
const ago = (days: number, minutes = 0) => new Date(NOW.getTime() - days * DAY - minutes * 60_000);

let tdb: TestDatabase;
let tracker: TrackerServer;

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  tracker = await startTrackerServer();
  await tdb.db.raw('TRUNCATE error_logs, route_view_days, rate_limits, leases, job_runs');
});
afterEach(async () => {
  await tracker.close();
});

function context(env: Record<string, string | undefined> = tracker.configEnv()) {
  return createTestContext({ db: tdb.db, clock: new FixedClock(NOW), env });
}

async function errorRow(fingerprint: string, createdAt: Date, overrides: Record<string, unknown> = {}): Promise<void> {
  await tdb.db('error_logs').insert({
    fingerprint,
    error_class: 'TypeError',
    message: `Cannot read properties of undefined (reading 'total') for registration 42`,
    stack: `TypeError: Cannot read properties of undefined\n    at priceRegistration (/app/dist/src/payments/price.js:10:5)`,
    source: 'http:POST /events/:slug/register',
    created_at: createdAt,
    ...overrides,
  });
}

/** Two groups in the window (three rows and one row) and one group only older than 7 days. */
async function weekOfErrors(): Promise<void> {
  await errorRow('aaaa000000000001', ago(6), { message: 'Charge 100 failed for member ann@example.org' });
  await errorRow('aaaa000000000001', ago(3), { message: 'Charge 200 failed for member bob@example.org' });
  await errorRow('aaaa000000000001', ago(1), {
    error_class: 'PaymentError',
    message: 'Charge 300 failed for member cy@example.org',
    stack: 'PaymentError: Charge 300 failed\n    at charge (/app/dist/src/payments/charge.js:3:9)',
  });
  await errorRow('bbbb000000000002', ago(2));
  await errorRow('cccc000000000003', ago(8));
}

const marker = (fingerprint: string) => `<!-- eventops:fingerprint=${fingerprint} -->`;
const count = async (table: string) => Number((await tdb.db(table).count({ n: '*' }).first())?.n);

describe('error-issues', () => {
  it('without TRACKER_TOKEN and TRACKER_REPO both set it files nothing, but still purges rows older than 90 days', async () => {
    await weekOfErrors();
    await errorRow('dddd000000000004', ago(120));
    await tdb.db('route_view_days').insert([
      { path: '/events/:slug', day: '2026-08-01', views: 40 },
      { path: '/events/:slug', day: '2026-11-20', views: 3 },
    ]);

    const summary = await fileErrorIssues(context({ TRACKER_TOKEN: tracker.token }), { trigger: 'cli' });

    expect(summary).toMatchObject({ job: 'error-issues', outcome: 'skipped', groups: 0, filed: 0, purgedErrors: 1, purgedRouteViews: 1 });
    expect(tracker.requests).toHaveLength(0);
    expect(await count('error_logs')).toBe(5);
    expect(await tdb.db('route_view_days').pluck('views')).toEqual([3]);
    expect(await tdb.db('job_runs').first('outcome')).toEqual({ outcome: 'skipped' });
  });

  it('groups the last 7 days by fingerprint and files one issue per new group, carrying its fingerprint marker', async () => {
    await weekOfErrors();

    const summary = await fileErrorIssues(context(), { trigger: 'scheduler' });

    expect(summary).toMatchObject({ outcome: 'ok', groups: 2, filed: 2, alreadyOpen: 0 });
    expect(tracker.created).toHaveLength(2);
    const [first, second] = tracker.created;
    // The larger group first; the sample is the newest row of the group.
    expect(first?.title).toBe('[eventops] PaymentError: Charge <n> failed for member <email>');
    expect(first?.body).toContain('**3** times in the last 7 days');
    expect(first?.body).toContain(`First seen: ${ago(6).toISOString()}`);
    expect(first?.body).toContain(`Last seen: ${ago(1).toISOString()}`);
    expect(first?.body).toContain('```text\nCharge 300 failed for member <email>\n```');
    expect(first?.body).toContain('```text\nPaymentError: Charge 300 failed\n    at charge (/app/dist/src/payments/charge.js:3:9)\n```');
    expect(first?.body?.endsWith(marker('aaaa000000000001'))).toBe(true);
    expect(first?.body).not.toMatch(/@example\.org/);
    expect(second?.title).toBe('[eventops] TypeError: Cannot read properties of undefined (reading <value>) for registration <n>');
    expect(second?.body).toContain('**1** time in the last 7 days');
    expect(second?.body).toContain(marker('bbbb000000000002'));
    expect(tracker.created.some((issue) => issue.body?.includes('cccc000000000003'))).toBe(false);
    const list = tracker.requests.find((r) => r.method === 'GET');
    expect(list?.query).toMatchObject({ state: 'open', per_page: '100' });
    expect(list?.authorization).toMatch(new RegExp(`^(token|Bearer) ${tracker.token}$`));
  });

  it('rule 4: a group whose marker is in an open issue (on page 2 of the listing) is skipped; a closed issue does not count', async () => {
    await weekOfErrors();
    // Issue #1 is the oldest, so newest-first it is on the second page of 100.
    tracker.seed([{ title: 'Payment failures', body: `Seen before.\n\n${marker('aaaa000000000001')}` }]);
    tracker.seed(Array.from({ length: 120 }, (_, i) => ({ title: `Unrelated ${i}`, body: i % 2 ? null : 'no marker here' })));
    tracker.seed([{ title: 'Fixed already', body: marker('bbbb000000000002'), state: 'closed' }]);

    const summary = await fileErrorIssues(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', groups: 2, filed: 1, alreadyOpen: 1 });
    expect(tracker.requests.filter((r) => r.method === 'GET').map((r) => r.query.page ?? '1')).toEqual(['1', '2']);
    expect(tracker.created.map((issue) => issue.body?.includes(marker('bbbb000000000002')))).toEqual([true]);
  });

  it('reads each page of a long listing exactly once, the pages after the first at once: a marker on the last of 4 pages counts', async () => {
    await weekOfErrors();
    // Issue #1 is the oldest: newest first it is the last of 331 open issues, on page 4.
    tracker.seed([{ title: 'Payment failures', body: `Seen before.\n\n${marker('aaaa000000000001')}` }]);
    tracker.seed(Array.from({ length: 330 }, (_, i) => ({ title: `Unrelated ${i}`, body: 'no marker here' })));

    const summary = await fileErrorIssues(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', groups: 2, filed: 1, alreadyOpen: 1 });
    const listed = tracker.requests.filter((r) => r.method === 'GET');
    expect(listed.map((r) => r.query.page).sort()).toEqual(['1', '2', '3', '4']);
    expect(listed.every((r) => r.query.state === 'open' && r.query.per_page === '100')).toBe(true);
    expect(tracker.created.map((issue) => issue.body?.includes(marker('bbbb000000000002')))).toEqual([true]);
  });

  it('a tracker answering 500 fails the run without losing the groups; the next run files them', async () => {
    await weekOfErrors();
    await errorRow('dddd000000000004', ago(120));
    tracker.failNext(10, 'error');

    await expect(fileErrorIssues(context(), { trigger: 'scheduler' })).rejects.toBeInstanceOf(JobFailedError);

    expect(tracker.created).toHaveLength(0);
    const run = await tdb.db('job_runs').first('outcome', 'error');
    expect(run).toMatchObject({ outcome: 'failed', error: expect.stringMatching(/issue tracker answered 500/) });
    // Retention does not wait for the tracker: the old row is gone, and every row of the window is still there.
    expect(await tdb.db('error_logs').where({ fingerprint: 'dddd000000000004' }).count({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await tdb.db('error_logs').whereIn('fingerprint', ['aaaa000000000001', 'bbbb000000000002']).count({ n: '*' }).first()).toEqual({
      n: 4,
    });

    tracker.failNext(0, 'error');
    const retry = await fileErrorIssues(context(), { trigger: 'scheduler' });

    expect(retry.outcome).toBe('ok');
    const bodies = tracker.created.map((issue) => issue.body ?? '');
    expect(bodies.some((b) => b.includes(marker('aaaa000000000001')))).toBe(true);
    expect(bodies.some((b) => b.includes(marker('bbbb000000000002')))).toBe(true);
    expect(retry.purgedErrors).toBe(0);
  });

  it('a filing the tracker carried out but answered with a server error is not repeated: no fault gets two issues, and the next run files the rest', async () => {
    await weekOfErrors();
    tracker.fileButFailNext(1);

    await expect(fileErrorIssues(context(), { trigger: 'scheduler' })).rejects.toBeInstanceOf(JobFailedError);

    // The tracker has the first group's issue once; the run stopped there.
    expect(tracker.created.map((issue) => issue.body?.includes(marker('aaaa000000000001')))).toEqual([true]);
    expect(tracker.requests.filter((r) => r.method === 'POST')).toHaveLength(1);

    const next = await fileErrorIssues(context(), { trigger: 'scheduler' });

    // The second group, and the first run's own failure (now in the error log), are filed; the first is open already.
    expect(next).toMatchObject({ outcome: 'ok', groups: 3, alreadyOpen: 1, filed: 2 });
    for (const fingerprint of ['aaaa000000000001', 'bbbb000000000002']) {
      expect(tracker.issues.filter((issue) => issue.body?.includes(marker(fingerprint))), fingerprint).toHaveLength(1);
    }
  });

  it('a rate-limited tracker fails the run at once instead of waiting for the limit to reset', async () => {
    await weekOfErrors();
    tracker.failNext(5, 'rate-limit');
    const started = Date.now();

    await expect(fileErrorIssues(context(), { trigger: 'cli' })).rejects.toThrow(/issue tracker answered 403/);

    expect(Date.now() - started).toBeLessThan(5_000);
    expect(tracker.requests).toHaveLength(1);
    expect(await tdb.db('job_runs').first('outcome')).toEqual({ outcome: 'failed' });
  });

  it('deletes error rows, daily page-view counters and ended rate-limit counters older than their retention, and keeps newer ones', async () => {
    await errorRow('eeee000000000005', ago(91));
    await errorRow('eeee000000000005', ago(89));
    await errorRow('ffff000000000006', ago(200));
    // More than one purge batch.
    await tdb.db.raw(
      `INSERT INTO error_logs (fingerprint, error_class, message, source, created_at) SELECT 'backlog', 'Error', 'old', 'http', ? FROM generate_series(1, 20005)`,
      [ago(150)],
    );
    await tdb.db('route_view_days').insert([
      { path: '/events/:slug', day: '2026-08-24', views: 7 },
      { path: '/events/:slug', day: '2026-08-25', views: 5 },
      { path: '/setup', day: '2026-11-22', views: 2 },
    ]);
    await tdb.db('rate_limits').insert([
      { bucket: 'cron-bearer', client_key: '203.0.113.9', hits: 11, window_ends_at: ago(2) },
      { bucket: 'setup', client_key: '203.0.113.10', hits: 1, window_ends_at: ago(0, -10) },
    ]);

    const summary = await fileErrorIssues(context(), { trigger: 'cli' });

    // 90 days before 23 November is 25 August: the 24th goes, the 25th stays.
    expect(summary).toMatchObject({ outcome: 'ok', groups: 0, filed: 0, purgedErrors: 20007, purgedRouteViews: 1 });
    expect(await tdb.db('error_logs').pluck('created_at')).toEqual([ago(89)]);
    expect(await tdb.db('route_view_days').orderBy('day').pluck('views')).toEqual([5, 2]);
    expect(await tdb.db('rate_limits').pluck('bucket')).toEqual(['setup']);
  });

  it('dry run: lists what it would file and purge, and files, deletes and records nothing', async () => {
    await weekOfErrors();
    await errorRow('dddd000000000004', ago(120));
    tracker.seed([{ title: 'Known', body: marker('bbbb000000000002') }]);

    const summary = await fileErrorIssues(context(), { trigger: 'cli', dryRun: true });

    expect(summary).toMatchObject({ dryRun: true, groups: 2, filed: 1, alreadyOpen: 1, purgedErrors: 1 });
    expect(summary.wouldDo).toEqual([
      'file issue "[eventops] PaymentError: Charge <n> failed for member <email>" (3 in 7 days, fingerprint aaaa000000000001)',
      'skip fingerprint bbbb000000000002: issue #1 is open',
      'delete 1 error rows and 0 daily page-view counters older than 90 days',
    ]);
    expect(tracker.requests.filter((r) => r.method === 'POST')).toHaveLength(0);
    expect(await count('error_logs')).toBe(6);
    expect(await count('job_runs')).toBe(0);
  });

  it('a run that lost its lease while listing (another run took over) files nothing more, so no group gets two issues', async () => {
    await weekOfErrors();
    // While this run lists, its lease runs out and another run takes it over.
    tracker.beforeNextList(async () => {
      await tdb.db('leases').where({ name: 'error-issues' }).update({ holder: 'the-run-that-took-over', expires_at: new Date(NOW.getTime() + 15 * 60_000) });
    });

    await expect(fileErrorIssues(context(), { trigger: 'cli' })).rejects.toThrow(/another run took over "error-issues"/);

    expect(tracker.created).toHaveLength(0);
  });

  it('while another run holds the lease the run fails with LeaseHeldError and files nothing', async () => {
    await weekOfErrors();
    await tdb.db('leases').insert({ name: 'error-issues', holder: 'other', acquired_at: ago(0, 2), expires_at: new Date(NOW.getTime() + 60_000) });

    await expect(fileErrorIssues(context(), { trigger: 'cli' })).rejects.toBeInstanceOf(LeaseHeldError);

    expect(tracker.requests).toHaveLength(0);
  });
});
