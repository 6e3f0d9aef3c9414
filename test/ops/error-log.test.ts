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
