import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The checkout root: the nearest ancestor holding bin/eventops (this file also runs compiled, from dist/soak). */
function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'bin/eventops'))) return dir;
    if (path.dirname(dir) === dir) return path.resolve(start, '../..');
  }
}

export const ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));
export const BIN = path.join(ROOT, 'bin/eventops');

export interface CliResult {
  code: number | null;
  /** The signal that ended the process (SIGKILL after a kill or the timeout), else null. */
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  env?: Record<string, string | undefined>;
  cwd?: string;
  timeoutMs?: number;
}

export interface RunningCli {
  child: ChildProcess;
  /** Output so far. */
  readonly stdout: string;
  readonly stderr: string;
  result: Promise<CliResult>;
}

/** libfaketime's variables when set, so a subprocess keeps the suite's faked clock (`faketime -f +400d npm test`). */
export function fakedClockEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['LD_PRELOAD', 'FAKETIME', 'FAKETIME_DONT_RESET']) {
    const value = process.env[key];
    if (value) env[key] = value;
  }
  return env;
}

/**
 * Starts the built `eventops` command in a subprocess with exactly the given
 * environment (plus PATH, and a faked clock's variables), no stdin and no TTY, as cron would; the child is
 * exposed so a test can kill it mid-run.
 */
export function startCli(args: string[], options: CliOptions = {}): RunningCli {
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' };
  Object.assign(env, fakedClockEnv());
  for (const [key, value] of Object.entries(options.env ?? {})) if (value !== undefined) env[key] = value;
  const cwd = options.cwd ?? fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-cli-'));
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const result = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    result,
  };
}

/** Runs the built `eventops` command to completion (see startCli). */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return startCli(args, options).result;
}
