import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, fakedClockEnv, runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { testEnv } from '../support/env.js';
import { zoneWhereItIsMidday } from '../support/zones.js';

let tdb: TestDatabase;
const mail = useSmtpSink();
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

interface Served {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exit: Promise<number | null>;
}

/** Starts `eventops serve` on a free port and resolves once it logs its address. */
function serve(env: Record<string, string | undefined>): Promise<Served> {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-serve-'));
  const fullEnv: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' };
  Object.assign(fullEnv, fakedClockEnv());
  for (const [key, value] of Object.entries(env)) if (value !== undefined) fullEnv[key] = value;
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${stderr}`)), 30_000);
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const match = /"address":"(http:\/\/[^"]+)"/.exec(stderr);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ child, url: match[1], stderr: () => stderr, exit });
      }
    });
    void exit.then((code) => reject(new Error(`serve exited ${String(code)}:\n${stderr}`)));
  });
}

/** Starts `eventops serve` expected to stop by itself: its exit code, or 'still running' (then killed) after 30 s. */
async function serveExpectingExit(port: string, cwd: string, env: Record<string, string | undefined>) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', port], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...fakedClockEnv(), ...env } as Record<string, string>,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const stillRunning = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 30_000).unref());
  const outcome = await Promise.race([exited, stillRunning]);
  if (outcome === 'still running') child.kill('SIGKILL');
  return { outcome, stderr };
}

async function waitFor(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('eventops serve', () => {
  it('with IN_APP_CRON=true sends the demo church its due emails once, and not again after a restart', async () => {
    const env = testEnv({ DATABASE_URL: tdb.url, NODE_ENV: 'development', ALLOW_DEMO_SEED: 'true', APP_TIMEZONE: zoneWhereItIsMidday(), ...mail.sink.configEnv() });
    const seeded = await runCli(['demo', '--seed-only'], { env });
    expect(seeded.code).toBe(0);

    const scheduledRuns = async () =>
      (await tdb.db('job_runs').where({ trigger: 'scheduler' }).whereNotNull('finished_at').select('job')).map((r) => r.job as string);
    const first = await serve({ ...env, IN_APP_CRON: 'true' });
    await waitFor(async () => {
      const jobs = await scheduledRuns();
      return jobs.includes('send-reminders') && jobs.includes('send-celebrations') && jobs.includes('sweep-checkouts');
    });
    const health = await fetch(`${first.url}/healthz`);
    expect(health.status).toBe(200);
    // AUTH_URL names port 3000 and this server took another: the start says its links lead nowhere.
    expect(first.stderr()).toContain(`links in emails and pages point at http://127.0.0.1:3000, but this server listens on port ${new URL(first.url).port}`);
    first.child.kill('SIGTERM');
    expect(await first.exit).toBe(0);

    const sentFirst = mail.sink.messages.length;
    const subjects = mail.sink.messages.map((m) => m.subject).join('\n');
    expect(sentFirst).toBeGreaterThanOrEqual(4); // reminders to 3 live registrations, birthdays and the anniversary
    expect(subjects).toMatch(/birthday/i);
    expect(await tdb.db('checkout_sessions').where({ status: 'EXPIRED' }).count({ n: '*' }).first()).toEqual({ n: 1 });

    const runsBefore = (await scheduledRuns()).length;
    const second = await serve({ ...env, IN_APP_CRON: 'true' });
    // The first tick happens at start; give it time to decide, then stop.
    await waitFor(async () => (await tdb.db('scheduler_periods').max({ last: 'last_attempt_at' }).first()) !== undefined);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    second.child.kill('SIGTERM');
    expect(await second.exit).toBe(0);
    expect(mail.sink.messages.length).toBe(sentFirst);
    expect((await scheduledRuns()).length).toBeGreaterThanOrEqual(runsBefore);
  }, 120_000);

  it('a port already in use stops serve at once with exit 1, naming the address, instead of leaving its jobs running unseen', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-serve-'));
      const failed = await serveExpectingExit(String(port), cwd, testEnv({ DATABASE_URL: tdb.url, IN_APP_CRON: 'true', ...mail.sink.configEnv() }));
      expect(failed.outcome).toBe(1);
      expect(failed.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the address is in use`);
      expect(failed.stderr).toContain('suggestion: another process');
    } finally {
      blocker.close();
    }
  }, 60_000);

  it('a start-up that fails once the database is open exits 1 at once and stops the embedded PostgreSQL it started', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-serve-'));
    fs.chmodSync(cwd, 0o755); // as root the server runs as "postgres", which must reach .eventops/pg
    // A connection string config check accepts, which the exporter's own JSON configuration (read from the
    // environment) replaces with one it refuses: starting telemetry throws after openContext, as an unchecked value did.
    const env = testEnv({
      NODE_ENV: 'development',
      TELEMETRY_CONNECTION_STRING: 'InstrumentationKey=0a1b2c3d-1111-2222-3333-444444444444;IngestionEndpoint=https://127.0.0.1:9/',
      APPLICATIONINSIGHTS_CONFIGURATION_CONTENT: JSON.stringify({ azureMonitorExporterOptions: { connectionString: 'InstrumentationKey=not-a-guid' } }),
    });
    const { outcome, stderr } = await serveExpectingExit('0', cwd, env);
    const pidFile = path.join(cwd, '.eventops/pg/postmaster.pid');
    // The server a hung run left behind: a fast shutdown, so the failed run leaves nothing running.
    if (outcome === 'still running' && fs.existsSync(pidFile)) process.kill(Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]), 'SIGINT');
    expect(outcome).toBe(1);
    expect(stderr).toContain('database migrated'); // it failed after the database was open
    expect(stderr).toContain('Invalid instrumentation key');
    expect(fs.existsSync(pidFile)).toBe(false);
    fs.rmSync(cwd, { recursive: true, force: true });
  }, 60_000);

  it('on SIGTERM a keep-alive connection whose request was in flight is closed once answered, so the server stops at once', async () => {
    const served = await serve(testEnv({ DATABASE_URL: tdb.url, ...mail.sink.configEnv() }));
    const { port } = new URL(served.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (chunk: Buffer) => (response += chunk.toString()));
    const socketClosed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    // The headers, and half the body once the server has taken the request (its 100 Continue): in flight at the signal.
    socket.write(
      'POST /api/cron/sweep-checkouts HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n',
    );
    await waitFor(async () => response.includes('100 Continue'), 10_000);
    socket.write('{');
    served.child.kill('SIGTERM');
    await waitFor(async () => served.stderr().includes('shutting down'));
    socket.write('}');
    await socketClosed;
    expect(response).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 401/);
    expect(response.toLowerCase()).toContain('connection: close');
    const stopped = await Promise.race([served.exit, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 15_000).unref())]);
    if (stopped === 'still running') served.child.kill('SIGKILL');
    expect(stopped).toBe(0);
    expect(served.stderr()).not.toContain('graceful shutdown took too long');
  }, 60_000);

  it('stops gracefully on SIGTERM with exit 0 and warns loudly when CRON_SECRET is unset', async () => {
    const served = await serve(testEnv({ DATABASE_URL: tdb.url, CRON_SECRET: undefined, ...mail.sink.configEnv() }));
    const response = await fetch(`${served.url}/api/cron/sweep-checkouts`, { method: 'POST' });
    expect(response.status).toBe(503);
    served.child.kill('SIGTERM');
    expect(await served.exit).toBe(0);
    expect(served.stderr()).toContain('CRON_SECRET is not set');
    expect(served.stderr()).not.toMatch(/authorization/i);
  }, 60_000);
});
