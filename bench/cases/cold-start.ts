import { MIGRATED } from '../support/database.js';
import { alternate, ratioRow, type BenchEnv, type CaseReport } from '../support/harness.js';
import { BIN, reference } from '../support/paths.js';
import { runNodeOk } from '../support/processes.js';
import type { ProcessRun } from '../support/processes.js';
import { maxOf, median, round } from '../support/stats.js';

const DATABASE = 'bench_cold_start';

/**
 * Case 1: the whole `eventops sweep-checkouts` process on an empty migrated
 * database (config, .env lookup, knex, the migration check, the job_runs row,
 * the UPDATE, pool shutdown) against a plain script that connects with pg,
 * runs the same UPDATE and exits. Also `eventops --help` against `node -e 0`.
 */
export async function coldStart(env: BenchEnv): Promise<CaseReport> {
  const url = await env.database.create(DATABASE, MIGRATED);
  const options = { env: env.appEnv(url), cwd: env.cwd, tmpDir: env.tmpDir };
  try {
    env.log('case 1: cold start, sweep-checkouts on an empty database');
    const sweep = await alternate({
      warmup: 2,
      reps: 10,
      ours: async () => {
        const run = await runNodeOk([BIN, 'sweep-checkouts', '--json'], options);
        const summary = JSON.parse(run.stdout) as { expired: number };
        if (summary.expired !== 0) throw new Error(`expected nothing to expire, got ${summary.expired}`);
        return run;
      },
      reference: () => runNodeOk([reference('sweep-pg')], options),
    });
    env.log('case 1: cold start, --help');
    const help = await alternate({
      warmup: 2,
      reps: 10,
      ours: () => runNodeOk([BIN, '--help'], options),
      reference: () => runNodeOk(['-e', '0'], options),
    });
    return {
      results: [
        ratioRow({
          name: '1 cold start: sweep-checkouts, empty db',
          scale: 1,
          ours: sweep.ours.map((r) => r.ms),
          reference: sweep.reference.map((r) => r.ms),
          // A cron job's start: nobody waits for it, so 2× its floor is a watch against regressions, not a goal.
          targetRatio: 2,
          watch: true,
          peakRssMb: maxOf(sweep.ours.map((r) => r.rssMb)),
        }),
        ratioRow({
          name: '1 cold start: --help vs node -e 0',
          scale: 1,
          ours: help.ours.map((r) => r.ms),
          reference: help.reference.map((r) => r.ms),
          peakRssMb: maxOf(help.ours.map((r) => r.rssMb)),
        }),
      ],
      notes: [
        `case 1, CPU time (user + system, median; it moves little with the machine's load): sweep-checkouts ${cpuLine(sweep.ours, sweep.reference)}; --help ${cpuLine(help.ours, help.reference)}`,
      ],
    };
  } finally {
    await env.database.drop(DATABASE);
  }
}

function cpuLine(ours: ProcessRun[], reference: ProcessRun[]): string {
  const cpu = (runs: ProcessRun[]) => median(runs.map((r) => r.cpuMs ?? Number.NaN));
  return `ours ${round(cpu(ours), 1)} ms, reference ${round(cpu(reference), 1)} ms (${round(cpu(ours) / cpu(reference), 2)}×)`;
}
