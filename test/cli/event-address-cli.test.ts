import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { startTestServer, type TestServer } from '../support/http.js';

let tdb: TestDatabase;
let server: TestServer;
let workDir: string;
beforeAll(async () => {
  tdb = await createTestDatabase();
  // The subprocess runs on the real clock: this server too, so the event it was told about is still to come.
  server = await startTestServer(createTestContext({ db: tdb.db, clock: { now: () => new Date() } }));
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-event-address-'));
});
afterAll(async () => {
  await server?.close();
  await tdb?.drop();
});

/** The public address is the running server's, so the printed link can be followed. */
const env = (overrides: Record<string, string | undefined> = {}) =>
  testEnv({ DATABASE_URL: tdb.url, LOG_LEVEL: 'warn', AUTH_URL: server.url, ...overrides });

function eventFile(slug: string, title: string): string {
  const file = path.join(workDir, `${slug}.json`);
  const startsAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
  fs.writeFileSync(file, JSON.stringify({ slug, title, startsAt, capacity: 40, pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 0 }] } }));
  return file;
}

describe('events create, update and publish print the event’s public page', () => {
  it('a draft names the page it will have, publish names it again, and that address serves the event page', async () => {
    const file = eventFile('harvest-lunch', 'Harvest Lunch');
    const created = await runCli(['events', 'create', file], { env: env(), cwd: workDir });
    expect(created.code).toBe(0);
    expect(created.stdout).toContain(`public page once published: ${server.url}/events/harvest-lunch\n`);

    const published = await runCli(['events', 'publish', 'harvest-lunch'], { env: env(), cwd: workDir });
    expect(published.code).toBe(0);
    const address = /^public page: (\S+)$/m.exec(published.stdout)?.[1];
    expect(address).toBe(`${server.url}/events/harvest-lunch`);
    const page = await fetch(address as string);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<h1><bdi>Harvest Lunch</bdi></h1>');

    const updated = await runCli(['events', 'update', file], { env: env(), cwd: workDir });
    expect(updated.code).toBe(0);
    expect(updated.stdout).toContain(`public page: ${server.url}/events/harvest-lunch\n`);
  });

  it('--json stays one JSON document, with the address as publicUrl', async () => {
    const created = await runCli(['events', 'create', eventFile('quiz-night', 'Quiz Night'), '--json'], { env: env(), cwd: workDir });
    expect(created.code).toBe(0);
    const result = JSON.parse(created.stdout) as { change: string; publicUrl: string };
    expect(result).toMatchObject({ change: 'created', publicUrl: `${server.url}/events/quiz-night` });

    const published = await runCli(['events', 'publish', 'quiz-night', '--json'], { env: env(), cwd: workDir });
    expect(JSON.parse(published.stdout)).toMatchObject({ change: 'published', publicUrl: `${server.url}/events/quiz-night` });
    // Unpublishing takes the page away: no address to give.
    const unpublished = await runCli(['events', 'unpublish', 'quiz-night', '--json'], { env: env(), cwd: workDir });
    expect(JSON.parse(unpublished.stdout)).not.toHaveProperty('publicUrl');
  });

  it('without a public address (AUTH_URL and APP_URL unset, outside production) it gives the path and says what to set', async () => {
    const created = await runCli(['events', 'create', eventFile('no-address', 'No Address Yet'), '--json'], { env: env({ AUTH_URL: undefined }), cwd: workDir });
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ publicUrl: null });
    const published = await runCli(['events', 'publish', 'no-address'], { env: env({ AUTH_URL: undefined }), cwd: workDir });
    expect(published.stdout).toContain('public page: /events/no-address on the app\'s public address (set AUTH_URL to it');
  });
});
