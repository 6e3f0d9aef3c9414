import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BIN, ROOT, RSS_PROBE_URL } from './paths.js';

export interface ProcessRun {
  /** Wall time from spawn to exit. */
  ms: number;
  code: number | null;
  stdout: string;
  stderr: string;
  /** Peak RSS of the process (MiB), from the probe. */
  rssMb: number | undefined;
  /** CPU time of the process (user + system, ms), from the probe. */
  cpuMs: number | undefined;
}

export interface ProcessOptions {
  env: Record<string, string>;
  cwd: string;
  /** Where the probe's RSS file goes. */
  tmpDir: string;
  timeoutMs?: number;
}

let rssFiles = 0;

/**
 * BENCH_PROFILE=1: our processes (not the references) write V8 CPU profiles to bench/profiles/ (diagnosis only),
 * sampled every BENCH_PROFILE_INTERVAL_US microseconds (Node's default, 1000, is too coarse for a 90 ms start).
 */
function profileFlags(args: string[]): string[] {
  if (process.env.BENCH_PROFILE !== '1' || args[0] !== BIN) return [];
  const interval = process.env.BENCH_PROFILE_INTERVAL_US;
  return [
    '--cpu-prof',
    '--cpu-prof-dir',
    path.join(ROOT, 'bench', 'profiles'),
    ...(interval ? ['--cpu-prof-interval', interval] : []),
  ];
}

function probeEnv(options: ProcessOptions): { env: Record<string, string>; rssFile: string } {
  const rssFile = path.join(options.tmpDir, `rss-${process.pid}-${++rssFiles}.txt`);
  return { env: { ...options.env, BENCH_RSS_FILE: rssFile }, rssFile };
}

function readProbe(rssFile: string): { rssMb: number | undefined; cpuMs: number | undefined } {
  if (!fs.existsSync(rssFile)) return { rssMb: undefined, cpuMs: undefined };
  const [kib, cpuMicros] = fs.readFileSync(rssFile, 'utf8').split(' ').map(Number);
  fs.rmSync(rssFile);
  return {
    rssMb: kib !== undefined && Number.isFinite(kib) ? kib / 1024 : undefined,
    cpuMs: cpuMicros !== undefined && Number.isFinite(cpuMicros) ? cpuMicros / 1000 : undefined,
  };
}

/** Runs `node <args>` to completion and times it; the probe reports its peak RSS. */
export function timeNode(args: string[], options: ProcessOptions): Promise<ProcessRun> {
  const { env, rssFile } = probeEnv(options);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, ['--import', RSS_PROBE_URL, ...profileFlags(args), ...args], {
      cwd: options.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 600_000);
    child.on('error', reject);
    let ms = 0;
    child.on('exit', () => {
      ms = performance.now() - started;
      clearTimeout(timer);
    });
    // 'exit' can precede the last output; 'close' comes after both.
    child.on('close', (code) => resolve({ ms, code, stdout, stderr, ...readProbe(rssFile) }));
  });
}

/** Like timeNode, but a non-zero exit is an error naming the command and its stderr. */
export async function runNodeOk(args: string[], options: ProcessOptions): Promise<ProcessRun> {
  const run = await timeNode(args, options);
  if (run.code !== 0) {
    throw new Error(`node ${args.join(' ')} exited ${String(run.code)}\n${run.stderr.slice(-4000)}\n${run.stdout.slice(-2000)}`);
  }
  return run;
}

export interface ServerProcess {
  child: ChildProcess;
  /** SIGTERM, then the exit code, peak RSS and CPU time. */
  stop(): Promise<{ code: number | null; rssMb: number | undefined; cpuMs: number | undefined }>;
}

/** Starts a long-running `node <args>`; its output goes to `logFile` (a file keeps synchronous log writes cheap). */
export function startNode(args: string[], options: ProcessOptions & { logFile: string }): ServerProcess {
  const { env, rssFile } = probeEnv(options);
  const log = fs.openSync(options.logFile, 'a');
  const child = spawn(process.execPath, ['--import', RSS_PROBE_URL, ...profileFlags(args), ...args], {
    cwd: options.cwd,
    env,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      return { code, ...readProbe(rssFile) };
    },
  };
}

/** Polls `url` until it answers 2xx. */
export async function waitForHttp(url: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(url);
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Polls until something accepts TCP connections on 127.0.0.1:`port`. */
export async function waitForPort(port: number, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
