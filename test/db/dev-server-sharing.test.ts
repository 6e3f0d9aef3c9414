import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { JOB_NAMES } from '../../src/jobs/types.js';
import { runCli, startCli } from '../support/cli.js';
import { testEnv } from '../support/env.js';

const DEV_ENV = testEnv({ NODE_ENV: 'development', IN_APP_CRON: 'false' });
const running = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function waitFor<T>(probe: () => T | undefined, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the embedded development database', () => {
  it('while `eventops serve` runs on it, other commands use the same server and leave it running; only serve stops it', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-shared-dev-'));
    fs.chmodSync(cwd, 0o755);
    const pidFile = path.join(cwd, '.eventops/pg/postmaster.pid');
    const serve = startCli(['serve', '--port', '0'], { env: DEV_ENV, cwd, timeoutMs: 120_000 });
    try {
      const address = await waitFor(() => /"address":"(http:\/\/[^"]+)"/.exec(serve.stderr)?.[1], `serve to listen:\n${serve.stderr}`);
      const serverPid = Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0]);

      const status = await runCli(['status', '--json'], { env: DEV_ENV, cwd, timeoutMs: 60_000 });
      expect(status.stderr).not.toContain('in use by another');
      expect(status.code).toBe(0);
      expect(JSON.parse(status.stdout).jobs).toHaveLength(JOB_NAMES.length);
      const events = await runCli(['events', 'list', '--json'], { env: DEV_ENV, cwd, timeoutMs: 60_000 });
      expect(events.code).toBe(0);

      // The commands left the server running: the same postmaster, and serve still reaches its database.
      expect(running(serverPid)).toBe(true);
      expect(Number(fs.readFileSync(pidFile, 'utf8').split('\n')[0])).toBe(serverPid);
      const health = await fetch(`${address}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toMatchObject({ database: 'ok' });

      serve.child.kill('SIGTERM');
      const result = await serve.result;
      expect(result.code).toBe(0);
      expect(fs.existsSync(pidFile)).toBe(false);
      expect(running(serverPid)).toBe(false);
    } finally {
      serve.child.kill('SIGKILL');
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('has a superuser password of its own per data directory, kept in .eventops with mode 0600', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-dev-password-'));
    fs.chmodSync(cwd, 0o755);
    const serve = startCli(['serve', '--port', '0'], { env: DEV_ENV, cwd, timeoutMs: 120_000 });
    try {
      await waitFor(() => /"address":"(http:\/\/[^"]+)"/.exec(serve.stderr)?.[1], `serve to listen:\n${serve.stderr}`);
      const passwordFile = path.join(cwd, '.eventops/pg-password');
      expect(fs.statSync(passwordFile).mode & 0o777).toBe(0o600);
      const password = fs.readFileSync(passwordFile, 'utf8').trim();
      expect(password.length).toBeGreaterThanOrEqual(32);
      const port = Number(fs.readFileSync(path.join(cwd, '.eventops/pg/postmaster.pid'), 'utf8').split('\n')[3]);
      const connect = async (secret: string) => {
        const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: secret, database: 'eventops' });
        await client.connect();
        await client.end();
      };
      await expect(connect('eventops-embedded')).rejects.toThrow(/password authentication failed/);
      await expect(connect(password)).resolves.toBeUndefined();
      serve.child.kill('SIGTERM');
      expect((await serve.result).code).toBe(0);
    } finally {
      serve.child.kill('SIGKILL');
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });

  it.runIf(os.userInfo().uid === 0)('as root in a private (700) directory, `eventops init && eventops demo` work: the data is kept where the postgres user can reach it', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-private-'));
    expect(fs.statSync(cwd).mode & 0o777).toBe(0o700);
    const env = { NODE_ENV: 'development', PATH: process.env.PATH };
    let relocated: string | undefined;
    try {
      const init = await runCli(['init'], { env, cwd });
      expect(init.code).toBe(0);
      const demo = await runCli(['demo'], { env, cwd, timeoutMs: 180_000 });
      expect(demo.stderr).not.toContain('cannot enter');
      expect(demo.code).toBe(0);
      expect(demo.stdout).toContain('send-reminders');
      const link = path.join(cwd, '.eventops/pg');
      expect(fs.lstatSync(link).isSymbolicLink()).toBe(true);
      relocated = fs.readlinkSync(link);
      expect(relocated.startsWith(cwd)).toBe(false);
      expect(fs.existsSync(path.join(relocated, 'PG_VERSION'))).toBe(true);
      expect(fs.existsSync(path.join(relocated, 'postmaster.pid'))).toBe(false);
      // The data persists: a second command sees what demo loaded.
      const events = await runCli(['events', 'list', '--json'], { env, cwd, timeoutMs: 60_000 });
      expect(events.code).toBe(0);
      expect(events.stdout).toContain('demo-family-camp');
    } finally {
      if (relocated) fs.rmSync(path.dirname(relocated), { recursive: true, force: true });
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  });
});
