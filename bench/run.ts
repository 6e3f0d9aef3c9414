import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config/index.js';
import { createFieldCipher } from '../src/crypto/field-cipher.js';
import { TEST_KEYS } from '../test/support/env.js';
import { measureCelebrations, type CelebrationMeasurement } from './cases/celebrations.js';
import { coldStart } from './cases/cold-start.js';
import { ERROR_RSS_LIMIT_MB, measureErrorDigest } from './cases/error-digest.js';
import { growth, type GrowthSubject } from './cases/growth.js';
import { reminders } from './cases/reminders.js';
import { receiptLatency } from './cases/receipt-latency.js';
import { rush as rushCase } from './cases/rush.js';
import { measureSweep } from './cases/sweep.js';
import { webhookThroughput } from './cases/webhook.js';
import { startBenchDatabase } from './support/database.js';
import type { BenchEnv, CaseReport, CaseResult, RushSummary } from './support/harness.js';
import { startMailSink } from './support/mail-sink.js';
import { RESULTS_FILE, ROOT, installLauncher } from './support/paths.js';
import { formatTable, writeResults } from './support/report.js';

/**
 * `npm run bench`: every hot path beside its reference (bench/README.md).
 * BENCH_SCALE multiplies every row count (default below); BENCH_CASES=1,3,7
 * runs only those cases (7 measures the growth of whichever of 3, 5 and 6 ran);
 * BENCH_QUERY_LOG=1 keeps a query log of our processes for diagnosis.
 */
const DEFAULT_SCALE = 0.1;

const scale = Number(process.env.BENCH_SCALE ?? DEFAULT_SCALE);
if (!Number.isFinite(scale) || scale <= 0) throw new Error(`BENCH_SCALE must be a positive number, got ${process.env.BENCH_SCALE}`);
const only = process.env.BENCH_CASES?.split(',').map((c) => c.trim());
const wanted = (id: string) => !only || only.includes(id);

const started = performance.now();
const log = (message: string) => {
  const seconds = ((performance.now() - started) / 1000).toFixed(0).padStart(4);
  process.stderr.write(`[${seconds} s] ${message}\n`);
};

const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-bench-'));
// As root the embedded server runs as "postgres", which must enter this directory.
fs.chmodSync(tmpDir, 0o755);
const cwd = path.join(tmpDir, 'cwd');
fs.mkdirSync(cwd);

// Ours and every reference run on this same binary (process.execPath), whichever `node` npm found first on PATH.
const runtime = `Node ${process.version} (${process.execPath})`;
const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
const supported = major > 22 || (major === 22 && minor >= 17);
// The launcher keeps V8's compile cache in os.tmpdir(), as installed: here the run's own, warmed by each case's warm-up round.
const compileCacheDir = path.join(tmpDir, 'node-compile-cache');
installLauncher();

const baseEnv: Record<string, string> = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: process.env.HOME ?? tmpDir,
  TMPDIR: tmpDir,
  NODE_ENV: 'production',
  AUTH_SECRET: 'bench-auth-secret-that-is-at-least-32-bytes-long',
  AUTH_URL: 'https://events.example.org',
  ENCRYPTION_KEY: TEST_KEYS.v1,
  CRON_SECRET: 'bench-cron-secret-of-at-least-32-characters',
  CHURCH_NAME: 'Grace Community Church',
  IN_APP_CRON: 'false',
  PSP_SECRET_KEY: 'sk_test_eventops_bench',
  PSP_WEBHOOK_SECRET: 'whsec_eventops_bench_signing_secret',
};

log(`eventops bench, BENCH_SCALE=${scale}, temporary files in ${tmpDir}`);
log(`running on ${runtime}${supported ? '' : ": below the project's engines (>=22.17), without the launcher's compile cache"}`);
const database = await startBenchDatabase(tmpDir);
const sink = await startMailSink();
// BENCH_QUERY_LOG=1: our processes log every query with its duration to bench/query-logs/<database>.jsonl (diagnosis only: it slows them).
const queryLogDir = path.join(ROOT, 'bench', 'query-logs');
const queryLog = (databaseUrl: string): Record<string, string> => {
  if (process.env.BENCH_QUERY_LOG !== '1') return {};
  fs.mkdirSync(queryLogDir, { recursive: true });
  return { PERF_QUERY_LOG: 'true', PERF_QUERY_LOG_FILE: path.join(queryLogDir, `${new URL(databaseUrl).pathname.slice(1)}.jsonl`) };
};
const appEnv = (databaseUrl: string, extra: Record<string, string> = {}) => ({
  ...baseEnv,
  ...sink.env(),
  DATABASE_URL: databaseUrl,
  ...queryLog(databaseUrl),
  ...extra,
});
const { config } = loadConfig(appEnv(database.urlFor('unused')), { cwd });
const env: BenchEnv = { scale, tmpDir, cwd, database, sink, appEnv, config, cipher: createFieldCipher(config.keyring), log };

const results: CaseResult[] = [];
const notes: string[] = [];
let rush: RushSummary | undefined;
const failures: string[] = [];
const record = async (id: string, fn: () => Promise<CaseReport>) => {
  if (!wanted(id)) return;
  try {
    const report = await fn();
    results.push(...report.results);
    notes.push(...report.notes);
    rush ??= report.rush;
  } catch (error) {
    const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
    failures.push(`case ${id} failed: ${message}`);
    log(`case ${id} failed: ${message}`);
  }
};

function explainNotes(measured: CelebrationMeasurement): string[] {
  const notes = [measured.cpu, measured.phases, `case 5, EXPLAIN (ANALYZE, BUFFERS) of the job's page queries at ${measured.tableRows.toLocaleString('en')} people:`];
  for (const plan of measured.plans) {
    notes.push(`  ${plan.query}: ${plan.usesIndex ? 'uses its month/day index' : 'DOES NOT use its month/day index'}`);
    notes.push(...plan.plan.split('\n').map((line) => `    ${line}`));
  }
  return notes;
}

/** The extra scales of case 7 only show a trend: fewer rounds. */
const TREND = { warmup: 1, reps: 3 };
const MAIN = { warmup: 1, reps: 5 };
const subjects: GrowthSubject[] = [];

try {
  await record('1', () => coldStart(env));
  await record('2', () => webhookThroughput(env));
  await record('3', async () => {
    const sweep = await measureSweep(env, { scale, name: '3 sweep-checkouts', ...MAIN, target: 1.3 });
    subjects.push({
      label: 'sweep-checkouts',
      atScale: sweep,
      expectation: 'touched',
      measure: (s, name) => measureSweep(env, { scale: s, name, ...TREND }),
    });
    return { results: [sweep.result], notes: [] };
  });
  await record('4', () => reminders(env));
  await record('5', async () => {
    const celebrations = await measureCelebrations(env, { scale, name: '5 send-celebrations', ...MAIN, target: 2, watch: true });
    subjects.push({
      label: 'send-celebrations',
      atScale: celebrations,
      expectation: 'flat',
      measure: (s, name) => measureCelebrations(env, { scale: s, name, ...TREND }),
      describe: (largest) => explainNotes(largest as CelebrationMeasurement),
    });
    return { results: [celebrations.result], notes: explainNotes(celebrations) };
  });
  await record('6', async () => {
    const digest = await measureErrorDigest(env, { scale, name: '6 error-issues', ...MAIN, target: 1.5 });
    subjects.push({
      label: 'error-issues',
      atScale: digest,
      expectation: 'touched',
      measure: (s, name) => measureErrorDigest(env, { scale: s, name, ...TREND }),
    });
    return { results: [digest.result], notes: [`case 6: peak RSS limit ${ERROR_RSS_LIMIT_MB} MB`] };
  });
  if (subjects.length > 0) await record('7', () => growth(env, subjects));
  await record('8', () => receiptLatency(env));
  await record('9', () => rushCase(env));
  notes.push(compileCacheNote());
} finally {
  await sink.close();
  await database.stop();
  fs.rmSync(tmpDir, { recursive: true, force: true });
}

/**
 * The bench's one summary line: the rush as the families feel it, then how many targets hold. A watch row
 * past its limit (a regression of a path nobody waits for) fails the line.
 */
function summaryLine(rows: CaseResult[], measured: RushSummary | undefined): string {
  const judged = rows.filter((r) => r.met !== undefined);
  const within = judged.filter((r) => r.met).length;
  const regressed = rows.filter((r) => r.watch && r.met === false).map((r) => r.row.case);
  const rushPart = measured
    ? `pages p99 ${Math.round(measured.pagesP99Ms)} ms, posts p99 ${Math.round(measured.postsP99Ms)} ms, ` +
      `confirmations p95 ${(measured.confirmationsP95Ms / 1000).toFixed(1)} s, ` +
      (measured.placesTaken === measured.capacity ? 'places exact' : `places NOT exact (${measured.placesTaken} of ${measured.capacity})`)
    : 'case 9 not run';
  const line = `rush: ${rushPart}, within targets ${within} of ${judged.length}`;
  return regressed.length > 0 ? `${line}; FAILED: past a watch row: ${regressed.join(', ')}` : line;
}

/** Evidence that the measured runs used the compile cache (the launcher turns it on from Node 22). */
function compileCacheNote(): string {
  const files = fs.existsSync(compileCacheDir) ? fs.readdirSync(compileCacheDir, { recursive: true }).length : 0;
  return files > 0
    ? `compile cache: ${files} entries in ${compileCacheDir}, written by the warm-up runs`
    : `compile cache: none written (${process.version} has no module.enableCompileCache)`;
}

const table = formatTable(results);
process.stdout.write(`\n${runtime}${supported ? '' : ", below the project's engines (>=22.17)"}\n\n${table}\n\n`);
for (const note of notes) process.stdout.write(`${note}\n`);
writeResults(results);
process.stdout.write(`\n${summaryLine(results, rush)}\n`);
process.stdout.write(`\nresults: ${RESULTS_FILE}; whole run ${((performance.now() - started) / 60_000).toFixed(1)} min\n`);
if (failures.length > 0) {
  for (const failure of failures) process.stderr.write(`${failure}\n`);
  process.exitCode = 1;
}
