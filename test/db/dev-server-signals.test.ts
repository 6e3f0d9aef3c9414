import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { connectDb } from '../../src/db/connect.js';
import { startDevDatabase } from '../../src/db/embedded.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { silentLogger } from '../../src/logger.js';
import { startCli, type CliResult } from '../support/cli.js';
import { testConfig, testEnv } from '../support/env.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useSmtpSink } from '../support/mail-fixture.js';

// Subprocesses of the built command on the embedded development database (DATABASE_URL unset).
const DEV_ENV = testEnv({ NODE_ENV: 'development', IN_APP_CRON: 'false' });

const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

async function waitForPromise(promise: Promise<void>, what: string, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs)));
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The result, or undefined when the process is still running after `ms`. */
const within = (result: Promise<CliResult>, ms: number) => Promise.race([result, sleep(ms).then(() => undefined)]);

function devDirectory(prefix: string): { cwd: string; pidFile: string; postmaster(): number } {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(cwd, 0o755); // as root the server runs as "postgres", which must reach .eventops/pg
  const pidFile = path.join(cwd, '.eventops/pg/postmaster.pid');
  return { cwd, pidFile, postmaster: () => Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]) };
}

/** Answers a reminder's DATA this long after receiving it: the test's window to freeze the postmaster while the job still runs. */
const SMTP_ANSWER_DELAY_MS = 3_000;
let dataReceived: () => void = () => undefined;
const mail = useSmtpSink({
  delayAfterData: () => {
    dataReceived();
    return SMTP_ANSWER_DELAY_MS;
  },
});

/** The embedded database of `cwd`, migrated, with one event whose reminder is due (the subprocess runs on the real clock); stopped again. */
async function seedDueReminder(cwd: string, email: string): Promise<void> {
  const dev = await startDevDatabase(path.join(cwd, '.eventops'), silentLogger());
  const db = connectDb({ url: dev.url, poolMax: 1 });
  try {
    await migrateLatest(db);
    const hour = 60 * 60_000;
    const event = await insertEvent(db, { reminder_at: new Date(Date.now() - hour), starts_at: new Date(Date.now() + 48 * hour) });
    await insertRegistration(db, createFieldCipher(testConfig().keyring), event.id, { email });
  } finally {
    await db.destroy();
    await dev.stop();
  }
}

/** A card provider that accepts connections and never answers: the command waits on it for as long as the test likes. */
let silentProvider: net.Server;
let providerConnections = 0;
const sockets = new Set<net.Socket>();
beforeAll(async () => {
  silentProvider = net.createServer((socket) => {
    providerConnections++;
    sockets.add(socket);
  });
  await new Promise<void>((resolve) => silentProvider.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silentProvider.close(resolve));
});

describe('the embedded development database and signals', () => {
  it('a command stopped with SIGTERM while it runs stops the embedded PostgreSQL it started, then exits 143', async () => {
    const dir = devDirectory('eventops-dev-sigterm-');
    const { port } = silentProvider.address() as net.AddressInfo;
    const env = { ...DEV_ENV, PSP_SECRET_KEY: 'sk_test_signals', PSP_WEBHOOK_SECRET: 'whsec_signals', PSP_API_BASE: `http://127.0.0.1:${port}` };
    const connectionsBefore = providerConnections;
    const reconcile = startCli(['reconcile', '--apply'], { env, cwd: dir.cwd, timeoutMs: 120_000 });
    let postmaster: number | undefined;
    try {
      // Reconcile is waiting on the provider: the embedded server is up, the command mid-run.
      await waitFor(() => (providerConnections > connectionsBefore ? true : undefined), `reconcile to call the provider:\n${reconcile.stderr}`);
      postmaster = dir.postmaster();
      expect(running(postmaster)).toBe(true);

      reconcile.child.kill('SIGTERM');
      const result = await within(reconcile.result, 30_000);
      expect(result).toMatchObject({ code: 143, signal: null });
      expect(fs.existsSync(dir.pidFile)).toBe(false);
      expect(running(postmaster)).toBe(false);
    } finally {
      reconcile.child.kill('SIGKILL');
      if (postmaster && running(postmaster)) process.kill(postmaster, 'SIGINT');
      fs.rmSync(dir.cwd, { recursive: true, force: true });
    }
  });

  it('a Ctrl-C after send-reminders finished, while it closes its context, still stops the embedded PostgreSQL and exits 130', async () => {
    const dir = devDirectory('eventops-dev-close-');
    await seedDueReminder(dir.cwd, 'close-signal@example.org');
    const env = { ...DEV_ENV, ...mail.sink.configEnv() };
    const received = new Promise<void>((resolve) => (dataReceived = resolve));
    const reminders = startCli(['send-reminders', '--json'], { env, cwd: dir.cwd, timeoutMs: 120_000 });
    let postmaster: number | undefined;
    let watcher: pg.Client | undefined;
    try {
      // The reminder is on the wire and its answer delayed: the command holds its database connections, the job still runs.
      await waitForPromise(received, `the reminder to reach the SMTP sink:\n${reminders.stderr}`, 90_000);
      postmaster = dir.postmaster();
      const port = Number(fs.readFileSync(dir.pidFile, 'utf8').split('\n')[3]);
      const password = fs.readFileSync(path.join(dir.cwd, '.eventops/pg-password'), 'utf8').trim();
      const client = (watcher = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password, database: 'postgres' }));
      client.on('error', () => undefined); // the server's shutdown ends this connection
      await client.connect();
      // Frozen, the postmaster cannot exit: the command's close waits in its stop of the server for as long as the test likes.
      process.kill(postmaster, 'SIGSTOP');
      const clientsOfEventops = async () =>
        Number((await client.query(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = 'eventops' AND backend_type = 'client backend'`)).rows[0].n);
      expect(await clientsOfEventops()).toBeGreaterThan(0);
      // The job ends once the sink answers; the command then closes its pool (backends exit without the postmaster) and stops the server.
      const deadline = Date.now() + 60_000;
      while ((await clientsOfEventops()) > 0) {
        if (Date.now() > deadline) throw new Error(`the command never closed its connections:\n${reminders.stderr}`);
        await sleep(100);
      }
      expect(await within(reminders.result, 500)).toBeUndefined();

      reminders.child.kill('SIGINT');
      // Handled, the guard logs before it waits on the (frozen) server; ignored, nothing is logged: either way the server is let go.
      await waitFor(() => (reminders.stderr.includes('stopping the embedded PostgreSQL') ? true : undefined), 'the signal to be handled', 5_000).catch(() => undefined);
      process.kill(postmaster, 'SIGCONT');
      const result = await within(reminders.result, 30_000);
      expect(result).toMatchObject({ code: 130, signal: null });
      expect(fs.existsSync(dir.pidFile)).toBe(false);
      expect(running(postmaster)).toBe(false);
      expect(mail.sink.messages.flatMap((m) => m.envelope.to)).toEqual(['close-signal@example.org']);
    } finally {
      await watcher?.end().catch(() => undefined);
      reminders.child.kill('SIGKILL');
      if (postmaster && running(postmaster)) {
        process.kill(postmaster, 'SIGCONT');
        process.kill(postmaster, 'SIGINT');
      }
      fs.rmSync(dir.cwd, { recursive: true, force: true });
    }
  });

  it('Ctrl-C in a terminal reaches the command and the server alike: once the server is gone, the command still exits 130', async () => {
    const dir = devDirectory('eventops-dev-sigint-');
    const { port } = silentProvider.address() as net.AddressInfo;
    const env = { ...DEV_ENV, PSP_SECRET_KEY: 'sk_test_signals', PSP_WEBHOOK_SECRET: 'whsec_signals', PSP_API_BASE: `http://127.0.0.1:${port}` };
    const connectionsBefore = providerConnections;
    const reconcile = startCli(['reconcile', '--apply'], { env, cwd: dir.cwd, timeoutMs: 120_000 });
    let postmaster: number | undefined;
    try {
      await waitFor(() => (providerConnections > connectionsBefore ? true : undefined), `reconcile to call the provider:\n${reconcile.stderr}`);
      postmaster = dir.postmaster();
      process.kill(postmaster, 'SIGINT');
      const stopped = postmaster;
      await waitFor(() => (running(stopped) ? undefined : true), 'the postmaster to stop', 30_000);

      reconcile.child.kill('SIGINT');
      const result = await within(reconcile.result, 30_000);
      expect(result).toMatchObject({ code: 130, signal: null });
      expect(fs.existsSync(dir.pidFile)).toBe(false);
    } finally {
      reconcile.child.kill('SIGKILL');
      if (postmaster && running(postmaster)) process.kill(postmaster, 'SIGINT');
      fs.rmSync(dir.cwd, { recursive: true, force: true });
    }
  });
});
