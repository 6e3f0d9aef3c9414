import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { crashAndRecover, type CrashReport } from './scenarios/crash-recovery.js';

let tdb: TestDatabase;
beforeEach(async () => {
  tdb = await createTestDatabase();
});
afterEach(async () => {
  await tdb.drop();
});

/** The SMTP pool sends three at a time, so at most three messages can be in flight when the process dies. */
const POOL_SIZE = 3;

function expectRecovered(report: CrashReport): void {
  expect(report.killed.signal).toBe('SIGKILL');
  expect(report.acceptedBeforeKill).toBeGreaterThanOrEqual(3);
  expect(report.acceptedBeforeKill).toBeLessThan(report.expected);
  expect({ code: report.recovery.code, stderr: report.recovery.stderr.slice(-1500) }).toMatchObject({ code: 0 });
  expect(report.lost).toEqual([]);
  expect(report.unexpected).toBe(0);
  expect(report.unsettled).toBe(0);
  // Only what the dead run had handed to the server without recording it can arrive twice, each exactly twice.
  expect(report.duplicates).toBe(report.unrecordedBeforeRecovery.length);
  expect(report.duplicated.map((key) => key.split(' | ')[0]).sort()).toEqual(report.unrecordedBeforeRecovery);
  expect(report.duplicates).toBeLessThanOrEqual(POOL_SIZE);
}

describe('crash recovery (issue 7, case 4)', () => {
  it('send-celebrations killed with SIGKILL mid-run: a run before the 15-minute threshold sends nothing; after it every person is emailed, duplicates only for the sends in flight', async () => {
    const report = await crashAndRecover(tdb, 'send-celebrations', { recipients: 12 });
    expectRecovered(report);
    expect({ code: report.early.code, stderr: report.early.stderr.slice(-1500) }).toMatchObject({ code: 0 });
    expect(JSON.parse(report.early.stdout)).toMatchObject({ outcome: 'ok', birthdays: 0, failed: 0, skipped: 12 });
    expect(report.sentByEarlyRun).toBe(0);
  }, 60_000);

  it('send-clearance-digest killed with SIGKILL mid-run: a run while the 30-minute lease stands exits 75; after it every ADMIN and PASTOR is emailed, duplicates only for the sends in flight', async () => {
    const report = await crashAndRecover(tdb, 'send-clearance-digest', { recipients: 12 });
    expectRecovered(report);
    expect(report.early.code).toBe(75);
    expect(report.sentByEarlyRun).toBe(0);
    expect(JSON.parse(report.recovery.stdout)).toMatchObject({ outcome: 'ok', status: 'sent', failed: 0 });
  }, 60_000);
});
