import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { runOverlappingJobs } from './scenarios/overlapping-runs.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('overlapping runs (issue 7, case 3)', () => {
  it('5 processes each of send-reminders, send-celebrations and send-clearance-digest started together deliver every email exactly once, exiting 0 or 75', async () => {
    const report = await runOverlappingJobs(tdb, { copies: 5 });

    expect(report.processes).toBe(15);
    expect(report.badExits).toEqual([]);
    expect(report.lost).toEqual([]);
    expect(report.duplicated).toEqual([]);
    expect(report.unexpected).toBe(0);
    expect(report.messages).toBe(report.expected);
    // Reminders and celebrations claim per event / per person: no lease, so every process finishes with 0.
    expect(report.exitCodes['send-reminders']).toEqual([0, 0, 0, 0, 0]);
    expect(report.exitCodes['send-celebrations']).toEqual([0, 0, 0, 0, 0]);
    expect(report.exitCodes['send-clearance-digest'].every((code) => code === 0 || code === 75)).toBe(true);
    // The database agrees: each reminder marked sent once, each birthday confirmed, the month done.
    expect(await tdb.db('events').whereNull('reminder_sent_at')).toEqual([]);
    expect(await tdb.db('celebration_claims').whereNull('sent_at')).toEqual([]);
    expect(await tdb.db('app_settings').where({ key: 'clearanceDigestLastMonth' })).toHaveLength(1);
    expect(await tdb.db('job_runs').whereNull('finished_at')).toEqual([]);
  }, 120_000);
});
