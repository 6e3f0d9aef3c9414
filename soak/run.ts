import fs from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import setupTestDatabaseServer from '../test/support/global-setup.js';
import { ROOT } from '../test/support/cli.js';
import type { CaseOptions, CaseResult } from './support/result.js';

/**
 * `npm run soak`: the nine reliability cases of issue 7 in their long form,
 * one after another, each bounded in time, everything on loopback. Prints a
 * summary table and writes soak/results.json.
 *
 *   --case-ms N   time budget per case (default 60000; a round that started finishes)
 *   --runs N      at most N rounds per case
 *   --only a,b    run only these cases
 */

const CASES = [
  'webhook-storm',
  'model-interleavings',
  'overlapping-runs',
  'crash-recovery',
  'mail-faults',
  'database-faults',
  'hostile-input',
  'secrets-at-rest',
  'rate-limit',
  'addon-interleavings',
  'deposit-ledger',
] as const;

/** A case that overruns its budget by this much is abandoned and fails. */
const OVERRUN_GRACE_MS = 5 * 60_000;

interface CaseModule {
  run(options: CaseOptions): Promise<CaseResult>;
}

interface Args {
  caseMs: number;
  runs?: number;
  only?: Set<string>;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { caseMs: 60_000 };
  for (let i = 0; i < argv.length; i++) {
    const value = argv[i + 1];
    switch (argv[i]) {
      case '--case-ms':
        args.caseMs = Number(value);
        i++;
        break;
      case '--runs':
        args.runs = Number(value);
        i++;
        break;
      case '--only':
        args.only = new Set((value ?? '').split(',').filter(Boolean));
        i++;
        break;
      default:
        throw new Error(`unknown argument ${argv[i]}; use --case-ms N, --runs N, --only a,b`);
    }
  }
  if (!Number.isFinite(args.caseMs) || args.caseMs <= 0) throw new Error('--case-ms must be a positive number of milliseconds');
  return args;
}

function failedRow(name: string, load: string, detail: string): CaseResult {
  process.stderr.write(`${name}: ${detail}\n`);
  return { case: name, load, faults: '-', inputs: 0, lost: 0, duplicates: 0, passed: false };
}

async function loadCase(name: string): Promise<CaseModule | undefined> {
  try {
    return (await import(`./cases/${name}.js`)) as CaseModule;
  } catch (error) {
    if (error instanceof Error && 'code' in error && error.code === 'ERR_MODULE_NOT_FOUND' && error.message.includes(`cases/${name}.js`)) {
      return undefined;
    }
    throw error;
  }
}

async function runCase(name: string, args: Args): Promise<CaseResult> {
  const module = await loadCase(name);
  if (!module) return failedRow(name, 'missing', `soak/cases/${name}.ts does not exist yet`);
  let timer: NodeJS.Timeout | undefined;
  const overrun = new Promise<CaseResult>((resolve) => {
    timer = setTimeout(() => resolve(failedRow(name, 'abandoned', `still running ${OVERRUN_GRACE_MS / 1000} s after its budget`)), args.caseMs + OVERRUN_GRACE_MS);
  });
  const started = Date.now();
  process.stderr.write(`soak: ${name} …\n`);
  try {
    const result = await Promise.race([module.run({ durationMs: args.caseMs, runs: args.runs }), overrun]);
    process.stderr.write(`soak: ${name} ${result.passed ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
    return result;
  } catch (error) {
    return failedRow(name, 'crashed', error instanceof Error ? (error.stack ?? error.message) : String(error));
  } finally {
    clearTimeout(timer);
  }
}

function table(results: CaseResult[]): string {
  const header = ['case', 'load applied', 'faults injected', 'inputs tried', 'lost', 'duplicates', 'passed'];
  const rows = results.map((r) => [r.case, String(r.load), String(r.faults), String(r.inputs), String(r.lost), String(r.duplicates), r.passed ? 'yes' : 'NO']);
  const widths = header.map((h, i) => Math.min(80, Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length))));
  const line = (cells: string[]) => cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  // The same PostgreSQL and template database the test run uses; createTestDatabase() finds them through these variables.
  const provided: Record<string, string> = {};
  const project = { provide: (key: string, value: string) => (provided[key] = value) } as unknown as TestProject;
  const teardown = await setupTestDatabaseServer(project);
  process.env.EVENTOPS_TEST_ADMIN_URL = provided.adminDatabaseUrl;
  process.env.EVENTOPS_TEST_TEMPLATE = provided.templateDatabase;

  const results: CaseResult[] = [];
  let abandoned = false;
  try {
    for (const name of CASES) {
      if (args.only && !args.only.has(name)) continue;
      const result = await runCase(name, args);
      abandoned ||= result.load === 'abandoned';
      results.push(result);
    }
  } finally {
    if (!abandoned) await teardown();
  }

  process.stdout.write(`\n${table(results)}\n`);
  const file = path.join(ROOT, 'soak/results.json');
  fs.writeFileSync(
    file,
    JSON.stringify(
      results.map((r) => ({ case: r.case, load: r.load, faults: r.faults, inputs: r.inputs, lost: r.lost, duplicates: r.duplicates, passed: r.passed })),
      null,
      2,
    ) + '\n',
  );
  process.stdout.write(`\nwritten ${path.relative(process.cwd(), file)}\n`);
  const passed = results.every((r) => r.passed);
  process.exitCode = passed ? 0 : 1;
  // An abandoned case may still hold servers open; the run is over either way.
  if (abandoned) process.exit();
}

await main();
