import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobDuringDatabaseOutage, startRestartablePostgres, webhookDuringDatabaseOutage, type RestartablePostgres } from './scenarios/database-faults.js';

// A PostgreSQL of this file's own: it is stopped and started while the shared test server keeps serving the other files.
let pgServer: RestartablePostgres;
beforeAll(async () => {
  pgServer = await startRestartablePostgres();
}, 60_000);
afterAll(async () => {
  await pgServer.destroy();
});

describe('database faults (issue 7, case 6)', () => {
  it('a job whose database stops mid-run exits 1 with a message naming the database problem; once it is back the next run completes, and after the stale threshold everyone is emailed', async () => {
    const report = await jobDuringDatabaseOutage(pgServer, { people: 12 });
    expect(report.during.code).toBe(1);
    // Run with --json, the failure is the last line of stderr as JSON.
    const lastLine = JSON.parse(report.during.stderr.trim().split('\n').at(-1) ?? '{}') as { error?: { code: string; message: string } };
    expect(lastLine.error?.code).toBe('job_failed');
    expect(lastLine.error?.message).toMatch(/^send-celebrations failed: .+ \(not recorded in the error log: is the database reachable\?\)$/);
    expect(report.next.code).toBe(0);
    expect(JSON.parse(report.next.stdout)).toMatchObject({ outcome: 'ok', failed: 0 });
    expect(report.recovery.code).toBe(0);
    expect(report.lost).toBe(0);
    // The run stops sending once it cannot record a send: only the sends in flight (the SMTP pool's 3) can arrive twice.
    expect(report.duplicates).toBeLessThanOrEqual(report.unconfirmedSent);
    expect(report.duplicates).toBeLessThanOrEqual(3);
  }, 60_000);

  it('the webhook answers 500 while the database is down and the redelivery afterwards completes exactly once; /healthz goes 503 and back to 200 without a restart', async () => {
    const report = await webhookDuringDatabaseOutage(pgServer, { deliveries: 3 });
    expect(report.duringOutage.length).toBeGreaterThanOrEqual(3);
    for (const answer of report.duringOutage) expect(answer).toMatchObject({ status: 500, body: { error: { code: 'internal_error' } } });
    expect(report.healthDuringOutage).toBe(503);
    expect(report.healthChecksUntilOk).toBeGreaterThan(0);
    expect(report.completedCheckouts).toBe(3);
    expect(report.registrations).toBe(3);
    for (const replay of report.replays) expect(replay.status).toBe(200);
  }, 60_000);
});
