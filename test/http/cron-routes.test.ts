import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import * as fieldCipher from '../../src/crypto/field-cipher.js';
import { bearerMatches } from '../../src/http/cron-routes.js';
import { JOB_NAMES } from '../../src/jobs/types.js';
import { MailSendError, type Mailer } from '../../src/mail/types.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertCheckoutSession, insertEvent, insertPerson } from '../support/factories.js';
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

  it('answer 503 on every call while CRON_SECRET is unset, never 429: with no secret there is no bearer to guess, so no call is counted', async () => {
    await tdb.db('rate_limits').delete();
    const jobs = ['send-reminders', 'sweep-checkouts', 'send-celebrations', 'send-clearance-digest', 'error-issues'];
    for (let i = 0; i < 15; i++) {
      const response = await post(unsetServer.url, `/api/cron/${jobs[i % jobs.length]}`, i % 2 === 0 ? auth : {});
      expect(response.status).toBe(503);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('cron_secret_unset');
    }
    expect(await tdb.db('rate_limits').where({ bucket: 'cron-bearer' })).toEqual([]);
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

  it('take no payload: a POST that declares a JSON or other body type, empty or not, runs the job like a bare POST, and the bearer is checked first', async () => {
    // As `curl -X POST -H 'Content-Type: application/json'` and many hosted schedulers send it.
    const bodies: Array<[string, string | undefined]> = [
      ['application/json', undefined],
      ['application/json', ''],
      ['application/json', '{"anything": true}'],
      ['application/octet-stream', ''],
      ['text/plain', 'run'],
    ];
    const runs = async () => Number((await tdb.db('job_runs').where({ job: 'sweep-checkouts', trigger: 'http' }).count({ n: '*' }).first())?.n);
    const before = await runs();
    for (const [type, body] of bodies) {
      const response = await fetch(`${server.url}/api/cron/sweep-checkouts`, { method: 'POST', headers: { ...auth, 'content-type': type }, body });
      expect(response.status, `${type} ${JSON.stringify(body)}`).toBe(200);
      expect(await response.json()).toMatchObject({ job: 'sweep-checkouts', outcome: 'ok' });
    }
    const unauthorised = await fetch(`${server.url}/api/cron/sweep-checkouts`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '' });
    expect(unauthorised.status).toBe(401);
    expect((await runs()) - before).toBe(bodies.length);
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

  it('answer 500 with the summary when the job ran but did none of its work (every send failed), as the CLI exits 1', async () => {
    const refusing: Mailer = {
      kind: 'smtp',
      close: async () => undefined,
      send: async () => {
        throw new MailSendError('535 authentication failed', false);
      },
    };
    const ctx = createTestContext({ db: tdb.db, clock, mailer: refusing, env: { CRON_SECRET: 'cron-secret-for-tests' } });
    const failing = await startTestServer(ctx);
    try {
      await setSetting(tdb.db, 'celebrations.birthdays', true, clock.now());
      await insertPerson(tdb.db, ctx.cipher, { email: 'birthday@example.org', birth_date: '1990-11-22' });
      const response = await post(failing.url, '/api/cron/send-celebrations', auth);
      expect(response.status).toBe(500);
      expect(await response.json()).toMatchObject({ job: 'send-celebrations', outcome: 'failed', birthdays: 0, failed: 1 });
    } finally {
      await setSetting(tdb.db, 'celebrations.birthdays', false, clock.now());
      await failing.close();
    }
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

  it('answer 500 without claiming the error was recorded when the error log could not be written either', async () => {
    await tdb.db.raw('ALTER TABLE checkout_sessions RENAME TO checkout_sessions_away');
    await tdb.db.raw('ALTER TABLE error_logs RENAME TO error_logs_away');
    try {
      const response = await post(server.url, '/api/cron/sweep-checkouts', auth);
      expect(response.status).toBe(500);
      expect(await response.json()).toEqual({
        error: { code: 'job_failed', message: 'sweep-checkouts failed, and the error log could not be written: is the database reachable?' },
      });
    } finally {
      await tdb.db.raw('ALTER TABLE error_logs_away RENAME TO error_logs');
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

/** A POST from a chosen loopback source address (127.0.0.0/8), so two clients really are two addresses. */
function postFrom(base: string, path: string, localAddress: string, headers: Record<string, string> = {}) {
  const target = new URL(path, base);
  return new Promise<{ status: number; retryAfter: string | undefined; body: string }>((resolve, reject) => {
    const request = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', localAddress, agent: false, headers },
      (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'], body }));
      },
    );
    request.on('error', reject);
    request.end();
  });
}

describe('failed cron bearers', () => {
  it('are limited per client address over all cron endpoints: the 11th in a minute is 429 with Retry-After, counted in PostgreSQL; the right bearer is never limited', async () => {
    await tdb.db('rate_limits').delete();
    const jobs = ['sweep-checkouts', 'send-reminders', 'error-issues'];
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await postFrom(server.url, `/api/cron/${jobs[i % 3]}`, '127.0.0.3', { authorization: `Bearer guess-${i}` })).status);
    expect(statuses).toEqual(Array.from({ length: 10 }, () => 401));

    const limited = await postFrom(server.url, '/api/cron/sweep-checkouts', '127.0.0.3', { authorization: 'Bearer guess-10' });
    expect(limited.status).toBe(429);
    expect(limited.retryAfter).toBe('60');
    expect(JSON.parse(limited.body)).toMatchObject({ error: { code: 'rate_limited' } });
    expect(await tdb.db('rate_limits').select('bucket', 'client_key', 'hits')).toEqual([{ bucket: 'cron-bearer', client_key: '127.0.0.3', hits: 11 }]);

    // The same limited address with the right bearer runs the job, and is not counted.
    for (let i = 0; i < 3; i++) {
      expect((await postFrom(server.url, '/api/cron/sweep-checkouts', '127.0.0.3', auth)).status).toBe(200);
    }
    expect(await tdb.db('rate_limits').first('hits')).toEqual({ hits: 11 });
    // Another address is not affected.
    expect((await postFrom(server.url, '/api/cron/sweep-checkouts', '127.0.0.4', { authorization: 'Bearer wrong' })).status).toBe(401);

    // A restarted server (or another one on the same database) keeps the count until the window ends.
    const restarted = await startTestServer(createTestContext({ db: tdb.db, clock, env: { CRON_SECRET: 'cron-secret-for-tests' } }));
    try {
      expect((await postFrom(restarted.url, '/api/cron/sweep-checkouts', '127.0.0.3', {})).status).toBe(429);
      await tdb.db('rate_limits').update({ window_ends_at: new Date(clock.now().getTime() - 1) });
      expect((await postFrom(restarted.url, '/api/cron/sweep-checkouts', '127.0.0.3', {})).status).toBe(401);
    } finally {
      await restarted.close();
      await tdb.db('rate_limits').delete();
    }
  });
});
