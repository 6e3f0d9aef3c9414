import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCli, type CliResult } from '../support/cli.js';
import { testEnv } from '../support/env.js';

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

/** The result, or undefined when the process is still running after `ms`. */
const within = (result: Promise<CliResult>, ms: number) => Promise.race([result, sleep(ms).then(() => undefined)]);

function devDirectory(prefix: string): { cwd: string; pidFile: string; postmaster(): number } {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(cwd, 0o755); // as root the server runs as "postgres", which must reach .eventops/pg
  const pidFile = path.join(cwd, '.eventops/pg/postmaster.pid');
  return { cwd, pidFile, postmaster: () => Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]) };
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
