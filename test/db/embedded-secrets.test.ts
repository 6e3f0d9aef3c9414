import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runCli, startCli } from '../support/cli.js';

const SECRET_NAMES = ['ENCRYPTION_KEY', 'AUTH_SECRET', 'CRON_SECRET'] as const;

/** Every file under `dir` with its contents, read as it is found. */
function filesUnder(dir: string, into: Map<string, string>): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    try {
      into.set(file, `${into.get(file) ?? ''}${fs.readFileSync(file, 'utf8')}`);
    } catch {
      // gone between listing and reading
    }
  }
}

/** The postmaster's pid once postmaster.pid says it is ready. */
function readyPostmaster(pidFile: string): number | undefined {
  try {
    const lines = fs.readFileSync(pidFile, 'utf8').split('\n');
    return lines[7]?.trim() === 'ready' ? Number(lines[0]) : undefined;
  } catch {
    return undefined;
  }
}

const environ = (pid: number | string): string => fs.readFileSync(`/proc/${pid}/environ`, 'utf8');

/**
 * The environments of the processes `pid` started (the server's backends and
 * workers); they overwrite theirs with their process title, the postmaster keeps its own.
 */
function childEnvironments(pid: number): string[] {
  const found: string[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) found.push(environ(entry));
    } catch {
      // the process ended meanwhile
    }
  }
  return found;
}

describe('the embedded development database keeps our secrets', () => {
  it('after `init && demo` no file in the temporary directory ever held the superuser password, and the server processes never saw .env', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-secrets-'));
    fs.chmodSync(cwd, 0o755); // as root the server runs as "postgres", which must reach .eventops/pg
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-secrets-tmp-'));
    fs.chmodSync(tmp, 0o1777); // a temporary directory like /tmp, shared by every user
    const env = { TMPDIR: tmp };
    const seenInTmp = new Map<string, string>();
    const watcher = fs.watch(tmp, { recursive: true }, () => filesUnder(tmp, seenInTmp));
    try {
      const init = await runCli(['init'], { env, cwd });
      expect(init.code).toBe(0);
      const dotEnv = fs.readFileSync(path.join(cwd, '.env'), 'utf8');
      const secrets = SECRET_NAMES.map((name) => new RegExp(`^${name}=(.+)$`, 'm').exec(dotEnv)?.[1]);
      expect(secrets.every((value) => value && value.length >= 16)).toBe(true);

      const demo = startCli(['demo'], { env, cwd, timeoutMs: 180_000 });
      let postmasterEnvironment: string | undefined;
      const serverEnvironments: string[] = [];
      for (let done = false; !done; ) {
        filesUnder(tmp, seenInTmp);
        const pid = readyPostmaster(path.join(cwd, '.eventops/pg/postmaster.pid'));
        if (pid && postmasterEnvironment === undefined) {
          postmasterEnvironment = environ(pid);
          serverEnvironments.push(postmasterEnvironment, ...childEnvironments(pid));
        }
        done = (await Promise.race([demo.result.then(() => true), sleep(20).then(() => false)])) || false;
      }
      const result = await demo.result;
      expect(result.code, result.stderr).toBe(0);
      filesUnder(tmp, seenInTmp);

      const password = fs.readFileSync(path.join(cwd, '.eventops/pg-password'), 'utf8').trim();
      expect(password.length).toBeGreaterThanOrEqual(32);
      const holding = [...seenInTmp].filter(([, contents]) => contents.includes(password)).map(([file]) => file);
      expect(holding).toEqual([]);

      // The postmaster was seen while it ran; its environment has what it needs and none of .env.
      const names = (postmasterEnvironment ?? '').split('\0').map((entry) => entry.split('=')[0]);
      expect(names).toContain('PATH');
      expect(serverEnvironments.length).toBeGreaterThan(1);
      for (const seen of serverEnvironments) {
        for (const name of SECRET_NAMES) expect(seen).not.toContain(`${name}=`);
        for (const value of secrets) expect(seen).not.toContain(value);
      }
    } finally {
      watcher.close();
      fs.rmSync(cwd, { recursive: true, force: true });
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }, 240_000);
});
