import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDb } from '../../src/db/connect.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startTestServer } from '../support/http.js';
import { captureLogger } from '../support/payments-harness.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

describe('first-admin setup', () => {
  it('is 404 without SETUP_TOKEN, and a form while zero users exist with it', async () => {
    const off = await startTestServer(createTestContext({ db: tdb.db, env: { SETUP_TOKEN: undefined } }));
    expect((await fetch(`${off.url}/setup`)).status).toBe(404);
    await off.close();

    const on = await startTestServer(createTestContext({ db: tdb.db, env: { SETUP_TOKEN: 'setup-token-123' } }));
    const page = await fetch(`${on.url}/setup`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('<label for="token">Setup token</label>');
    expect(html).toContain('Grace Community Church');
    await on.close();
  });

  it('refuses a control character with the name and email typed back in the form, never the token', async () => {
    const server = await startTestServer(createTestContext({ db: tdb.db, env: { SETUP_TOKEN: 'setup-token-123' } }));
    for (const [fields, error] of [
      [{ token: 'setup-token-123\u0007', email: 'ann@church.example', name: 'Ann Admin' }, 'Setup token: remove the control characters.'],
      [{ token: 'setup-token-123', email: 'ann@church.example', name: 'Ann\u202eAdmin' }, 'Your name: remove the control characters.'],
    ] as const) {
      const response = await fetch(`${server.url}/setup`, form(fields));
      expect(response.status).toBe(400);
      const html = await response.text();
      expect(html).toContain(error);
      expect(html).toContain(`value="${fields.name}"`);
      expect(html).toContain('value="ann@church.example"');
      expect(html).not.toContain('setup-token-123');
    }
    expect(await tdb.db('users').count({ n: '*' }).first()).toEqual({ n: 0 });
    await server.close();
  });

  it('refuses a wrong token, creates exactly one ADMIN from concurrent posts, then disables itself', async () => {
    const server = await startTestServer(createTestContext({ db: tdb.db, env: { SETUP_TOKEN: 'setup-token-123' } }));
    const wrong = await fetch(`${server.url}/setup`, form({ token: 'nope', email: 'a@church.example', name: 'A' }));
    expect(wrong.status).toBe(403);
    expect(await tdb.db('users').count({ n: '*' }).first()).toEqual({ n: 0 });

    const attempts = await Promise.all(
      ['one', 'two', 'three'].map((who) =>
        fetch(`${server.url}/setup`, form({ token: 'setup-token-123', email: `${who}@church.example`, name: who })),
      ),
    );
    expect(attempts.map((r) => r.status).sort()).toEqual([201, 404, 404]);
    const users = await tdb.db('users').select('role', 'created_by_setup');
    expect(users).toEqual([{ role: 'ADMIN', created_by_setup: true }]);

    expect((await fetch(`${server.url}/setup`)).status).toBe(404);
    // Only the form shown in the first test counts (404 answers do not), as one counter for the day.
    expect(await tdb.db('route_view_days').select('path', 'day', 'views')).toEqual([{ path: '/setup', day: '2026-11-22', views: 1 }]);
    await server.close();
  });

  it('rate limits setup attempts per client, counted in PostgreSQL so a restart does not reset them', async () => {
    await tdb.db('rate_limits').delete();
    const env = { SETUP_TOKEN: 'setup-token-123' };
    const responses: Response[] = [];
    const before = await startTestServer(createTestContext({ db: tdb.db, env }));
    for (let i = 0; i < 6; i++) {
      responses.push(await fetch(`${before.url}/setup`, form({ token: 'guess', email: 'x@church.example', name: 'x' })));
    }
    await before.close();
    const server = await startTestServer(createTestContext({ db: tdb.db, env }));
    for (let i = 0; i < 5; i++) {
      responses.push(await fetch(`${server.url}/setup`, form({ token: 'guess', email: 'x@church.example', name: 'x' })));
    }
    expect(responses.slice(0, 10).every((r) => r.status !== 429)).toBe(true);
    expect(await tdb.db('rate_limits').select('bucket', 'client_key', 'hits')).toEqual([{ bucket: 'setup', client_key: '127.0.0.1', hits: 11 }]);
    const limited = responses[10] as Response;
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The setup form is a page, so the refusal is one too.
    expect(limited.headers.get('content-type')).toContain('text/html');
    expect(await limited.text()).toMatch(/Too many requests; try again in \d+ seconds\./);
    await server.close();
  });
});

describe('GET /healthz', () => {
  it('answers 200 with version, commit and database ok', async () => {
    const server = await startTestServer(createTestContext({ db: tdb.db, env: { NEXT_PUBLIC_GIT_SHA: 'abc1234' } }));
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', version: '0.0.0-test', gitSha: 'abc1234', database: 'ok' });
    await server.close();
  });

  it('answers 503 while the database is unreachable', async () => {
    const unreachable = connectDb({ url: 'postgres://u:p@127.0.0.1:1/none' });
    const server = await startTestServer(createTestContext({ db: unreachable }));
    const response = await fetch(`${server.url}/healthz`);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ status: 'degraded', database: 'unreachable' });
    await server.close();
    await unreachable.destroy();
  });
});

describe('request logs', () => {
  it('write one line per request when it is answered, with method, path without its query string, status and time', async () => {
    const { logger, logs } = captureLogger('info');
    const server = await startTestServer(createTestContext({ db: tdb.db, logger }));
    const response = await fetch(`${server.url}/registrations/00000000-0000-4000-8000-000000000000?token=secret-registration-token`);
    expect(response.status).toBe(404);
    await server.close();

    const requestLines = logs.lines
      .map((line) => JSON.parse(line) as { msg: string; req?: { method: string; url: string }; res?: { statusCode: number }; responseTime?: number })
      .filter((line) => line.req);
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatchObject({
      msg: 'request completed',
      req: { method: 'GET', url: '/registrations/00000000-0000-4000-8000-000000000000' },
      res: { statusCode: 404 },
    });
    expect(typeof requestLines[0]?.responseTime).toBe('number');
    expect(logs.text()).not.toContain('secret-registration-token');
  });
});
