import crypto from 'node:crypto';
import { fingerprintMarker } from '../../src/jobs/tracker.js';
import { startTrackerServer, type TrackerServer } from '../../test/support/tracker-server.js';
import { MIGRATED, settle } from '../support/database.js';
import { alternate, processRow, type BenchEnv } from '../support/harness.js';
import { BIN, reference } from '../support/paths.js';
import { runNodeOk } from '../support/processes.js';
import { maxOf } from '../support/stats.js';
import type { ScaledMeasurement } from './sweep.js';

export const ERROR_ROWS = 1_000_000;
const FINGERPRINTS = 5_000;
/** Fingerprints without an open issue: filed by every run. */
const NEW_FINGERPRINTS = 1;
export const ERROR_RSS_LIMIT_MB = 200;

/** The fingerprint of group `f`, as the generator's SQL computes it. */
function fingerprintOf(f: number): string {
  return crypto.createHash('md5').update(`fingerprint${f}`).digest('hex').slice(0, 16);
}

/**
 * Case 6 data: `rows` error rows spread evenly over 120 days and inserted in
 * time order (as the error log fills: ids and heap order follow created_at),
 * over 5,000 fingerprints with a skewed frequency (golden-ratio sequence;
 * group f has about 1/sqrt(f) of the rows), realistic message, stack and
 * context sizes.
 * No row lies within an hour of the 7- or 90-day boundary, so the counts
 * checked after each run do not drift while the case runs.
 */
export async function buildTemplate(env: BenchEnv, name: string, rows: number): Promise<{ recent: number; old: number; fingerprints: string[] }> {
  await env.database.create(name, MIGRATED);
  const db = env.database.connect(name, 1);
  try {
    await db.raw(
      `INSERT INTO error_logs (fingerprint, error_class, message, stack, source, context, created_at)
       SELECT substr(md5('fingerprint' || f), 1, 16),
              (ARRAY['MailSendError','TrackerError','KnexTimeoutError','FieldDecryptError','TypeError','AppError'])[1 + f % 6],
              'Could not complete step ' || f || ' for registration ' || md5('registration' || i)::uuid || ': connection reset by peer',
              'Error: Could not complete step ' || f || E'\\n' ||
                repeat('    at handler' || f || ' (file:///srv/eventops/dist/src/jobs/send-reminders.js:' || (i % 300) || E':17)\\n', 6) ||
                '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)',
              (ARRAY['job:send-reminders','job:send-celebrations','http','job:error-issues'])[1 + f % 4],
              jsonb_build_object('runId', i, 'eventId', md5('event' || f)::uuid),
              now() - CASE WHEN abs(extract(epoch FROM age) - 7 * 86400) < 3600 OR abs(extract(epoch FROM age) - 90 * 86400) < 3600
                           THEN age + interval '2 hours' ELSE age END
       FROM (
         SELECT i, interval '120 days' * (1 - i::float8 / ${rows}) AS age, least(${FINGERPRINTS - 1}, floor(${FINGERPRINTS} * power((i * 0.7548776662466927 - floor(i * 0.7548776662466927)), 2))::int) AS f
         FROM generate_series(1, ${rows}) AS i
       ) AS g`,
    );
    await settle(db, ['error_logs']);
    const counts = await db.raw<{ rows: Array<{ recent: number; old: number }> }>(
      `SELECT count(*) FILTER (WHERE created_at > now() - interval '7 days')::int AS recent,
              count(*) FILTER (WHERE created_at < now() - interval '90 days')::int AS old FROM error_logs`,
    );
    const groups = await db.raw<{ rows: Array<{ fingerprint: string }> }>(
      `SELECT DISTINCT fingerprint FROM error_logs WHERE created_at > now() - interval '7 days' ORDER BY fingerprint`,
    );
    const row = counts.rows[0] ?? { recent: 0, old: 0 };
    return { ...row, fingerprints: groups.rows.map((r) => r.fingerprint) };
  } finally {
    await db.destroy();
  }
}

/** Every fingerprint but the most frequent (NEW_FINGERPRINTS) has an open issue, as after a few weeks of use. */
function seedTracker(tracker: TrackerServer, fingerprints: string[], skip: Set<string>): number {
  tracker.issues.length = 0;
  const open = fingerprints.filter((f) => !skip.has(f));
  tracker.seed(
    open.map((fingerprint, i) => ({
      title: `[eventops] MailSendError: Could not complete step <n> for registration <id> (${i})`,
      body: `This error happened **12** times in the last 7 days.\n\n- Source: \`job:send-reminders\`\n- Fingerprint: \`${fingerprint}\`\n\nSample message:\n\n\`\`\`text\nCould not complete step ${i}\n\`\`\`\n\n${fingerprintMarker(fingerprint)}`,
    })),
  );
  tracker.seed(Array.from({ length: 500 }, (_, i) => ({ title: `closed ${i}`, body: 'fixed', state: 'closed' as const })));
  return tracker.issues.length;
}

/** Case 6 at `scale`: ours is the whole `eventops error-issues` process against a local tracker. */
export async function measureErrorDigest(
  env: BenchEnv,
  options: { scale: number; name: string; warmup: number; reps: number; target?: number },
): Promise<ScaledMeasurement> {
  const rows = Math.max(10_000, Math.round(ERROR_ROWS * options.scale));
  const template = 'bench_errors_template';
  const run = 'bench_errors_run';
  env.log(`case 6: generating ${rows.toLocaleString('en')} error rows`);
  const data = await buildTemplate(env, template, rows);
  const tracker = await startTrackerServer({ repo: 'grace-church/eventops-issues' });
  const unfiled = new Set(Array.from({ length: NEW_FINGERPRINTS }, (_, f) => fingerprintOf(f)));
  const seeded = seedTracker(tracker, data.fingerprints, unfiled);
  env.log(`case 6: ${data.fingerprints.length} groups in the last 7 days, ${data.old.toLocaleString('en')} rows to purge`);
  const processOptions = {
    env: env.appEnv(env.database.urlFor(run), tracker.configEnv()),
    cwd: env.cwd,
    tmpDir: env.tmpDir,
  };
  try {
    const samples = await alternate({
      warmup: options.warmup,
      reps: options.reps,
      before: async () => {
        await env.database.create(run, template);
        tracker.issues.length = seeded;
        tracker.created.length = 0;
        tracker.requests.length = 0;
      },
      ours: async () => {
        const result = await runNodeOk([BIN, 'error-issues', '--json'], processOptions);
        const summary = JSON.parse(result.stdout) as { groups: number; filed: number; purgedErrors: number };
        if (summary.groups !== data.fingerprints.length || summary.filed !== NEW_FINGERPRINTS || summary.purgedErrors !== data.old) {
          throw new Error(`unexpected error-issues summary ${result.stdout}`);
        }
        return result;
      },
      reference: async () => {
        const result = await runNodeOk([reference('error-digest-pg')], processOptions);
        const [groups, purged] = result.stdout.trim().split(' ').map(Number);
        if (groups !== data.fingerprints.length || purged !== data.old) throw new Error(`unexpected reference output ${result.stdout}`);
        return result;
      },
      log: env.log,
    });
    const peak = maxOf(samples.ours.map((r) => r.rssMb));
    return {
      result: processRow({
        name: options.name,
        scale: options.scale,
        samples,
        targetRatio: options.target,
        extraTarget:
          options.target === undefined ? undefined : { text: `RSS ≤ ${ERROR_RSS_LIMIT_MB} MB`, met: peak !== null && peak <= ERROR_RSS_LIMIT_MB },
      }),
      touched: data.recent + data.old,
      tableRows: rows,
    };
  } finally {
    await tracker.close();
    await env.database.drop(run);
    await env.database.drop(template);
  }
}
