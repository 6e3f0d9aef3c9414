import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, fakedClockEnv, runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb?.drop();
});

/** Starts `eventops serve --port 0`, waits for its "events page:" line on stdout, then stops it with SIGTERM. */
async function serveUntilStarted(env: Record<string, string | undefined>): Promise<{ stdout: string; stderr: string; code: number | null; eventsPage: string; body: string }> {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-serve-pages-'));
  const fullEnv: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...fakedClockEnv() };
  for (const [key, value] of Object.entries(env)) if (value !== undefined) fullEnv[key] = value;
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
  const listening = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${stderr}`)), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const match = /^eventops is listening on (\S+)$/m.exec(stdout);
      if (match?.[1] && /^events page: /m.test(stdout)) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
    void exit.then((code) => reject(new Error(`serve exited ${String(code)}:\n${stderr}`)));
  });
  const eventsPage = /^events page: (\S+)$/m.exec(stdout)?.[1] ?? '';
  // Fetched from the server itself: a public address behind a proxy is not reachable from the test.
  const body = await (await fetch(`${listening}/`)).text();
  child.kill('SIGTERM');
  return { stdout, stderr, code: await exit, eventsPage, body };
}

describe('eventops serve tells a person where the pages are', () => {
  it('--help lists the public pages (events page, event, success, pay-now, manage, check-in) and that they live under AUTH_URL', async () => {
    const result = await runCli(['serve', '--help'], { env: testEnv() });
    expect(result.code).toBe(0);
    const help = result.stdout;
    expect(help).toContain('AUTH_URL (else');
    expect(help).toContain('PUBLIC_URL/                          the events page');
    expect(help).toMatch(/PUBLIC_URL\/events\s+the same events page/);
    expect(help).toMatch(/PUBLIC_URL\/events\/SLUG\s+an event's page and registration form/);
    expect(help).toMatch(/PUBLIC_URL\/events\/SLUG\/success\s+the success page/);
    expect(help).toMatch(/PUBLIC_URL\/registrations\/ID\/pay\?…\s+the pay-now page/);
    expect(help).toMatch(/PUBLIC_URL\/manage\/TOKEN\s+the manage page/);
    expect(help).toMatch(/PUBLIC_URL\/checkin\/TOKEN\s+the check-in page/);
  });

  it('on start prints where it listens, the public address and the events page on stdout; the log on stderr stays JSON', async () => {
    const served = await serveUntilStarted(testEnv({ DATABASE_URL: tdb.url, AUTH_URL: 'https://events.grace.example.org' }));
    expect(served.stdout).toMatch(/^eventops is listening on http:\/\/127\.0\.0\.1:\d+\npublic address: https:\/\/events\.grace\.example\.org\nevents page: https:\/\/events\.grace\.example\.org\/\n/);
    expect(served.eventsPage).toBe('https://events.grace.example.org/');
    expect(served.body).toContain('<h1>Upcoming events</h1>');
    const logLines = served.stderr.split('\n').filter(Boolean);
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(() => JSON.parse(line), line).not.toThrow();
    expect(served.stdout).not.toContain('{');
    expect(served.code).toBe(0);
  });

  it('without a public address the events page is this server’s own, and it says links in emails cannot be built', async () => {
    const served = await serveUntilStarted(testEnv({ DATABASE_URL: tdb.url, AUTH_URL: undefined }));
    expect(served.stdout).toContain('public address: not set (AUTH_URL, else APP_URL): links in emails cannot be built\n');
    const listening = /^eventops is listening on (\S+)$/m.exec(served.stdout)?.[1];
    expect(served.eventsPage).toBe(`${listening}/`);
    expect(served.body).toContain('<h1>Upcoming events</h1>');
  });
});
