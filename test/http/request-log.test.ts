import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { celebrationsUnsubscribePath, celebrationsUnsubscribeToken } from '../../src/office/people/unsubscribe-link.js';
import { createLogger } from '../../src/logger.js';
import { pathForLog, REDACTED_SEGMENT } from '../../src/secret-paths.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertPerson } from '../support/factories.js';
import { startTestServer } from '../support/http.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

/** A server whose request log (the product's pino logger) is kept in memory, one parsed line per entry. */
async function withLoggedServer(run: (url: string, token: string, lines: () => Array<Record<string, unknown>>) => Promise<void>) {
  const written: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  const ctx = createTestContext({ db: tdb.db, logger: createLogger({ level: 'info', destination }) });
  const person = await insertPerson(tdb.db, ctx.cipher, { first_name: 'Ada', last_name: 'Member', email: 'ada@example.org' });
  const token = celebrationsUnsubscribeToken(ctx.config.keyring, [person.id]);
  const server = await startTestServer(ctx);
  try {
    await run(server.url, token, () =>
      written
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    );
  } finally {
    await server.close();
  }
}

describe('request logs keep secret path tokens out', () => {
  it('a GET and a POST of the unsubscribe link, and a mistyped variant of it, are logged with the token redacted; no log line holds the token', async () => {
    await withLoggedServer(async (url, token, lines) => {
      const path = celebrationsUnsubscribePath(token);
      expect((await fetch(`${url}${path}`)).status).toBe(200);
      const posted = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'List-Unsubscribe=One-Click' });
      expect(posted.status).toBe(200);
      expect((await fetch(`${url}/celebrations/Unsubscribe/${token}/extra?x=1`)).status).toBe(404);

      const requests = lines().filter((line) => line.msg === 'request completed');
      expect(requests.map((line) => (line.req as { method: string; url: string }).url)).toEqual([
        `/celebrations/unsubscribe/${REDACTED_SEGMENT}`,
        `/celebrations/unsubscribe/${REDACTED_SEGMENT}`,
        `/celebrations/Unsubscribe/${REDACTED_SEGMENT}/${REDACTED_SEGMENT}`,
      ]);
      expect(JSON.stringify(lines())).not.toContain(token);
    });
  });

  it('other paths are logged as they are, without their query string', () => {
    expect(pathForLog('/registrations/5f0e/pay?token=secret')).toBe('/registrations/5f0e/pay');
    expect(pathForLog('/events/family-camp')).toBe('/events/family-camp');
    expect(pathForLog('/celebrations/unsubscribe')).toBe('/celebrations/unsubscribe');
    expect(pathForLog('//celebrations/unsubscribe/abc')).toBe(`//celebrations/unsubscribe/${REDACTED_SEGMENT}`);
  });
});
