import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { describeError, normaliseErrorMessage, recordError } from '../../src/ops/error-log.js';
import { JobFailedError, runRecordedJob } from '../../src/jobs/run-recorded.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

function failLookup(id: string): Error {
  return new TypeError(`registration ${id} not found after 3 attempts for someone@example.org`);
}

describe('error fingerprints', () => {
  it('the same fault with different ids, numbers and addresses has one fingerprint', () => {
    const a = describeError(failLookup('5f0c1d2e-1111-4222-8333-944455556666'));
    const b = describeError(failLookup('0a0b0c0d-aaaa-4bbb-8ccc-dddddddddddd'));
    expect(a.fingerprint).toBe(b.fingerprint);
    expect(a.errorClass).toBe('TypeError');
  });

  it('a different error class or message gives a different fingerprint', () => {
    const base = describeError(new TypeError('boom'));
    expect(describeError(new RangeError('boom')).fingerprint).not.toBe(base.fingerprint);
    expect(describeError(new TypeError('bang')).fingerprint).not.toBe(base.fingerprint);
  });

  it('in the installed bundle, frames count by function name: one fault across builds and install paths, two faults apart', () => {
    const bundled = (fn: string, chunk: string, root = '/opt/eventops') => {
      const error = new TypeError("Cannot read properties of undefined (reading 'title')");
      error.stack = `${error.name}: ${error.message}\n    at ${fn} (file://${root}/dist/cli/chunks/${chunk}.js:10:5)\n    at async main (file://${root}/dist/cli/main.js:3:1)`;
      return describeError(error).fingerprint;
    };
    // Another build (chunk hash) or a global install under node_modules: the same fault.
    expect(bundled('renderReceipt', 'receipts-AB12CD34')).toBe(bundled('renderReceipt', 'receipts-ZZ99YY88'));
    expect(bundled('renderReceipt', 'receipts-AB12CD34')).toBe(bundled('renderReceipt', 'chunk-QQ11', '/usr/lib/node_modules/eventops'));
    // The same message from another function: another fault, filed on its own.
    expect(bundled('renderReceipt', 'receipts-AB12CD34')).not.toBe(bundled('sendReminder', 'receipts-AB12CD34'));
  });

  it("a database error's SQL counts one fault whatever the length of its placeholder lists", () => {
    const failed = (ids: number) =>
      new Error(`update "celebration_claims" set "sent_at" = $1 where "person_id" in (${Array.from({ length: ids }, (_, i) => `$${i + 2}`).join(', ')}) - Connection terminated`);
    expect(describeError(failed(1)).fingerprint).toBe(describeError(failed(3)).fingerprint);
  });

  it('normalises numbers, uuids, provider ids and emails out of the message', () => {
    expect(normaliseErrorMessage('charge ch_3MmlLrLkdIwHu7ix0snN0B15 of 1200 for a@b.org failed')).toBe(
      'charge <id> of <n> for <email> failed',
    );
  });
});

describe('job run history', () => {
  it('a failing job records a failed run and an error-log row whose id the error carries', async () => {
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date('2026-11-22T02:00:00Z')) });
    const failure = runRecordedJob(ctx, 'error-issues', { trigger: 'scheduler' }, async () => {
      throw new Error('tracker exploded');
    });
    await expect(failure).rejects.toBeInstanceOf(JobFailedError);
    const error = (await failure.catch((e: unknown) => e)) as JobFailedError;
    const logged = await tdb.db('error_logs').where({ id: error.errorId }).first();
    expect(logged).toMatchObject({ error_class: 'Error', message: 'tracker exploded', source: 'job:error-issues' });
    const run = await tdb.db('job_runs').orderBy('id', 'desc').first();
    expect(run).toMatchObject({ job: 'error-issues', trigger: 'scheduler', outcome: 'failed', error: 'tracker exploded' });
  });

  it('recordError stores the fingerprint the digest groups by', async () => {
    const now = new Date('2026-11-22T03:00:00Z');
    await recordError(tdb.db, new Error('disk 91% full'), { source: 'http', now });
    await recordError(tdb.db, new Error('disk 97% full'), { source: 'http', now });
    const groups = await tdb.db('error_logs').where('message', 'like', 'disk%').groupBy('fingerprint').select('fingerprint').count({ n: '*' });
    expect(groups).toHaveLength(1);
    expect(groups[0]?.n).toBe(2);
  });
});
