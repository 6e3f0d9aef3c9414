import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import {
  MAIL_TIMEOUT_MS,
  celebrationsWithMailApiErrors,
  digestWithMailFaults,
  queuedMailThroughDroppingSmtp,
  queuedMailThroughFailingApi,
  remindersWithRefusedRecipients,
} from './scenarios/mail-faults.js';

let tdb: TestDatabase;
beforeEach(async () => {
  tdb = await createTestDatabase();
});
afterEach(async () => {
  await tdb.drop();
});

describe('mail faults (issue 7, case 5)', () => {
  it('rule 2: send-reminders with some recipients refused reports partial, marks the reminder sent, and never retries the refused ones', async () => {
    const report = await remindersWithRefusedRecipients(tdb, { registrations: 6 });
    expect(report.first).toMatchObject({ outcome: 'partial', events: 1, sent: 4, failed: 2 });
    expect(report.reminderMarkedSent).toBe(true);
    expect(report.retry).toMatchObject({ outcome: 'ok', events: 0, sent: 0, failed: 0 });
    expect(report.refusedDelivered).toBe(0);
    expect(report.lost).toBe(0);
    expect(report.duplicates).toBe(0);
    expect(report.errorLogRows).toBeGreaterThan(0);
  });

  it('rule 7: the digest under refusals, connections dropped before and after DATA, and a server stalled past the timeout reports partial, counts the ambiguous sends as sent, and the retry emails only the certain failures', async () => {
    const report = await digestWithMailFaults(tdb, {
      recipients: 8,
      faults: ['refused', 'drop-before-data', 'drop-after-data', 'stall-after-data'],
    });
    const certain = [...report.faults].filter(([, f]) => f === 'refused' || f === 'drop-before-data').map(([a]) => a);
    const ambiguous = [...report.faults].filter(([, f]) => f === 'drop-after-data' || f === 'stall-after-data').map(([a]) => a);
    expect(report.first).toMatchObject({ outcome: 'partial', status: 'partial', sent: 6, failed: 2 });
    expect(report.monthDoneAfterFirst).toBe(false);
    expect([...report.recordedAfterFirst].sort()).toEqual(report.addresses.filter((address) => !certain.includes(address)).sort());
    expect(ambiguous).toHaveLength(2);
    // One stalled send costs about one timeout, not the 30 s default.
    expect(report.firstMs).toBeLessThan(MAIL_TIMEOUT_MS * 8);
    expect(report.retry).toMatchObject({ outcome: 'ok', status: 'sent', sent: 2, failed: 0 });
    expect(report.retried.sort()).toEqual(certain.sort());
    expect(report.monthDoneAfterRetry).toBe(true);
    expect(report.lost).toBe(0);
    expect(report.duplicates).toBe(0);
  });

  it('send-celebrations through a mail API answering 500 and 429 reports partial, releases those claims, and the next run sends exactly them', async () => {
    const report = await celebrationsWithMailApiErrors(tdb, { people: 6 });
    expect(report.first).toMatchObject({ outcome: 'partial', birthdays: 3, failed: 3 });
    expect(report.retry).toMatchObject({ outcome: 'ok', birthdays: 3, failed: 0, skipped: 3 });
    expect(report.acceptedPerMessage).toEqual([1, 1, 1, 1, 1, 1]);
    expect(report.lost).toBe(0);
  });

  it('queued receipts and alerts are retried through a stalled, 500- and 429-answering mail API until each is delivered', async () => {
    const report = await queuedMailThroughFailingApi(tdb, { messages: 6 });
    expect(report.statuses).toEqual({ SENT: 6 });
    expect(report.acceptedPerMessage).toEqual([1, 1, 1, 1, 1, 1]);
    expect(report.passes).toBeLessThanOrEqual(3);
  });

  it('queued receipts and alerts are retried after the SMTP connection drops until each is delivered exactly once', async () => {
    const report = await queuedMailThroughDroppingSmtp(tdb, { messages: 6 });
    expect(report.faultsInjected).toBe(6);
    expect(report.statuses).toEqual({ SENT: 6 });
    expect(report.acceptedPerMessage).toEqual([1, 1, 1, 1, 1, 1]);
  });
});
