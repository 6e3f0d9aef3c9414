import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOperationsStatus } from '../../src/jobs/status.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('eventops status', () => {
  it("shows each job's latest run with its age, and counts open alerts, pending deliveries and queued mail", async () => {
    const now = new Date('2026-11-22T10:00:00Z');
    await tdb.db('job_runs').insert([
      { job: 'send-reminders', trigger: 'cli', started_at: new Date('2026-11-22T08:00:00Z'), finished_at: new Date('2026-11-22T08:00:05Z'), outcome: 'ok', summary: JSON.stringify({ sent: 3 }) },
      { job: 'send-reminders', trigger: 'http', started_at: new Date('2026-11-22T09:00:00Z'), finished_at: new Date('2026-11-22T09:00:02Z'), outcome: 'partial', summary: JSON.stringify({ sent: 1, failed: 1 }) },
      { job: 'error-issues', trigger: 'scheduler', started_at: new Date('2026-11-22T09:59:00Z') },
      { job: 'send-celebrations', trigger: 'cli', started_at: new Date('2026-11-22T07:00:00Z') },
    ]);
    await tdb.db('operations_alerts').insert([
      { kind: 'amount_mismatch', reason: 'charged 100 priced 90' },
      { kind: 'partial_refund', reason: 'x', resolved_at: now },
    ]);
    await tdb.db('website_sync_outbox').insert([
      { type: 'event.created', body: '{}', attempts: 12, last_error: 'HTTP 401', created_at: new Date('2026-11-21T10:00:00Z') },
      { type: 'event.updated', body: '{}', status: 'DELIVERED', created_at: new Date('2026-11-20T10:00:00Z') },
    ]);
    await tdb.db('queued_mail').insert([{ kind: 'receipt', message_enc: 'v1:x:y:z' }, { kind: 'alert', message_enc: 'v1:x:y:z', status: 'FAILED' }]);

    const status = await readOperationsStatus(tdb.db, now);
    const byJob = new Map(status.jobs.map((j) => [j.job, j.lastRun]));
    expect(byJob.get('send-reminders')).toMatchObject({ trigger: 'http', outcome: 'partial', ageSeconds: 3600, summary: { sent: 1, failed: 1 } });
    expect(byJob.get('error-issues')).toMatchObject({ outcome: 'running', ageSeconds: 60 });
    expect(byJob.get('sweep-checkouts')).toBeUndefined();
    expect(byJob.get('send-celebrations')).toMatchObject({ outcome: 'abandoned', ageSeconds: 3 * 3600 });
    expect(status).toMatchObject({ openAlerts: 1, pendingWebsiteSync: 1, pendingMail: 1, failedMail: 1 });
    // The oldest undelivered notification, with how long and how often the website refused it.
    expect(status.oldestWebsiteSync).toEqual({ type: 'event.created', ageSeconds: 24 * 3600, attempts: 12, lastError: 'HTTP 401' });
    expect(status.jobs.map((j) => j.job)).toEqual(['send-reminders', 'sweep-checkouts', 'send-celebrations', 'send-clearance-digest', 'error-issues', 'reconcile', 'purge-answers']);
  });
});
