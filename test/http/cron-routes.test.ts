import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import * as fieldCipher from '../../src/crypto/field-cipher.js';
import { bearerMatches } from '../../src/http/cron-routes.js';
import { JOB_NAMES } from '../../src/jobs/types.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertCheckoutSession, insertEvent } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/http.js';

let tdb: TestDatabase;
let server: TestServer;
let unsetServer: TestServer;
const clock = new FixedClock(new Date('2026-11-22T01:00:00Z'));

beforeAll(async () => {
  tdb = await createTestDatabase();
  server = await startTestServer(createTestContext({ db: tdb.db, clock, env: { CRON_SECRET: 'cron-secret-for-tests' } }));
  unsetServer = await startTestServer(createTestContext({ db: tdb.db, clock, env: { CRON_SECRET: undefined } }));
});
afterAll(async () => {
  await server.close();
  await unsetServer.close();
  await tdb.drop();
});

const post = (base: string, path: string, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: 'POST', headers });
const auth = { authorization: 'Bearer cron-secret-for-tests' };

describe('cron endpoints', () => {
  it('answer 401 with WWW-Authenticate and a JSON error for a missing or wrong bearer', async () => {
    const attempts: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong' }, { authorization: 'cron-secret-for-tests' }, { authorization: 'Basic cron-secret-for-tests' }];
    for (const headers of attempts) {
      const response = await post(server.url, '/api/cron/sweep-checkouts', headers);
      expect(response.status).toBe(401);
      expect(response.headers.get('www-authenticate')).toBe('Bearer');
      expect(await response.json()).toEqual({ error: { code: 'unauthorized', message: 'Missing or wrong bearer token.' } });
    }
  });

  it('answer 503 on every call while CRON_SECRET is unset', async () => {
    for (const job of ['send-reminders', 'sweep-checkouts', 'send-celebrations', 'send-clearance-digest', 'error-issues']) {
      const response = await post(unsetServer.url, `/api/cron/${job}`, auth);
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('cron_secret_unset');
    }
  });

  it('run the job with trigger http and answer 200 with its JSON summary', async () => {
    const ctx = createTestContext({ db: tdb.db });
    const event = await insertEvent(tdb.db);
    await insertCheckoutSession(tdb.db, ctx.cipher, event.id, { expires_at: new Date('2026-11-22T00:00:00Z') });
    const response = await post(server.url, '/api/cron/sweep-checkouts', auth);
    expect(response.status).toBe(200);
    const summary = (await response.json()) as { job: string; outcome: string; expired: number; runId: number };
    expect(summary).toMatchObject({ job: 'sweep-checkouts', outcome: 'ok', expired: 1 });
    expect(await tdb.db('job_runs').where({ id: summary.runId }).first()).toMatchObject({ trigger: 'http', outcome: 'ok' });
  });

  it('answer 405 to any method but POST, OPTIONS and HEAD included, on every cron endpoint', async () => {
    for (const job of JOB_NAMES) {
      for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        const response = await fetch(`${server.url}/api/cron/${job}`, { method, headers: auth });
        expect(response.status, `${method} /api/cron/${job}`).toBe(405);
        expect(response.headers.get('allow')).toBe('POST');
      }
    }
  });

  it('answer 409 with the holder start time when another run holds the job lease', async () => {
    const heldSince = new Date('2026-11-22T00:50:00Z');
    await tdb.db('leases').insert({ name: 'clearance-digest', holder: 'other-run', acquired_at: heldSince, expires_at: new Date('2026-11-22T01:20:00Z') });
    const response = await post(server.url, '/api/cron/send-clearance-digest', auth);
    expect(response.status).toBe(409);
    const body = (await response.json()) as { error: { code: string; heldSince: string } };
    expect(body.error).toMatchObject({ code: 'lease_held', heldSince: heldSince.toISOString() });
    await tdb.db('leases').where({ name: 'clearance-digest' }).delete();
  });

  it('answer 500 with an error id that matches the error-log row when the job fails unexpectedly', async () => {
    await tdb.db.raw('ALTER TABLE checkout_sessions RENAME TO checkout_sessions_away');
    try {
      const response = await post(server.url, '/api/cron/sweep-checkouts', auth);
      expect(response.status).toBe(500);
      const body = (await response.json()) as { error: { code: string; id: number } };
      expect(body.error.code).toBe('job_failed');
      const row = await tdb.db('error_logs').where({ id: body.error.id }).first();
      expect(row).toMatchObject({ source: 'job:sweep-checkouts' });
      expect(row.message).toContain('checkout_sessions');
    } finally {
      await tdb.db.raw('ALTER TABLE checkout_sessions_away RENAME TO checkout_sessions');
    }
  });

  it('compare the bearer secret with the constant-time comparison', () => {
    const spy = vi.spyOn(fieldCipher, 'secretsEqual');
    expect(bearerMatches('Bearer abc', 'abc')).toBe(true);
    expect(bearerMatches('Bearer abd', 'abc')).toBe(false);
    expect(spy).toHaveBeenCalledTimes(2);
    spy.mockRestore();
  });

  it('answer 404 with a JSON error for an unknown job', async () => {
    const response = await post(server.url, '/api/cron/no-such-job', auth);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });
});
