import { MIGRATED, settle } from '../support/database.js';
import { alternate, processRow, type BenchEnv, type CaseResult } from '../support/harness.js';
import { BIN, reference } from '../support/paths.js';
import { runNodeOk, type ProcessRun } from '../support/processes.js';
import { startFakeProvider } from '../../test/support/fake-provider.js';

export const SWEEP_ROWS = 1_000_000;
const EVENTS = 20;

export interface ScaledMeasurement {
  result: CaseResult;
  /** Rows the job changes or reads (what its cost should follow). */
  touched: number;
  /** Rows in the table it works on. */
  tableRows: number;
}

/**
 * Case 3 data, generated in SQL from the row number only (deterministic):
 * `rows` checkout sessions over two years for 20 events, inserted in time
 * order as checkouts are; every 10th row OPEN
 * and past its expiry (with a staged payload to scrub), every 100th (+1) OPEN
 * and still live, every 10th (+2) EXPIRED and already scrubbed, the rest COMPLETED.
 */
async function buildTemplate(env: BenchEnv, name: string, rows: number): Promise<number> {
  await env.database.create(name, MIGRATED);
  const db = env.database.connect(name, 1);
  try {
    await db.raw(
      `INSERT INTO events (id, slug, title, location, starts_at, capacity, published, online_payment, pricing, created_at, updated_at)
       SELECT md5('event' || e)::uuid, 'event-' || e, 'Event ' || e, 'Church Hall', now() - (e || ' days')::interval, 200, true, true,
              '{"tiers":[{"id":"adult","label":"Adult","price":12000}]}'::jsonb, now() - interval '2 years', now() - interval '2 years'
       FROM generate_series(1, ${EVENTS}) AS e`,
    );
    await db.raw(
      `INSERT INTO checkout_sessions (id, event_id, status, expires_at, payload_enc, net_minor, surcharge_minor,
         provider_session_id, provider_url, payment_intent_id, completed_at, scrubbed_at, created_at, updated_at)
       SELECT md5('checkout' || i)::uuid,
              md5('event' || (1 + i % ${EVENTS}))::uuid,
              CASE WHEN i % 10 = 0 OR i % 100 = 1 THEN 'OPEN' WHEN i % 10 = 2 THEN 'EXPIRED' ELSE 'COMPLETED' END,
              CASE WHEN i % 100 = 1 THEN now() + interval '1 day' ELSE created + interval '31 minutes' END,
              CASE WHEN i % 10 = 0 OR i % 100 = 1 THEN 'v1:' || repeat(md5('payload' || i), 14) END,
              12000, 234,
              'cs_test_' || md5('session' || i),
              'https://checkout.example/c/pay/cs_test_' || md5('session' || i),
              CASE WHEN i % 10 NOT IN (0, 2) AND i % 100 <> 1 THEN 'pi_' || substr(md5('intent' || i), 1, 24) END,
              CASE WHEN i % 10 NOT IN (0, 2) AND i % 100 <> 1 THEN created + interval '3 minutes' END,
              -- EXPIRED rows without a payload were scrubbed by earlier sweeps, as the product leaves them.
              CASE WHEN i % 10 = 2 THEN created + interval '31 minutes' + interval '72 hours' END,
              created, created
       FROM (
         SELECT i, CASE WHEN i % 100 = 1 THEN now() - interval '5 minutes'
                        ELSE now() - interval '2 hours' - (interval '730 days' * (1 - i::float8 / ${rows})) END AS created
         FROM generate_series(1, ${rows}) AS i
       ) AS g`,
    );
    await settle(db, ['events', 'checkout_sessions']);
    const [row] = (
      await db.raw<{ rows: Array<{ n: number }> }>(`SELECT count(*)::int AS n FROM checkout_sessions WHERE status = 'OPEN' AND expires_at <= now()`)
    ).rows;
    return row?.n ?? 0;
  } finally {
    await db.destroy();
  }
}

/**
 * Case 3 at `scale`: ours is the whole `eventops sweep-checkouts` process, the reference its same-work floor
 * (sweep-same-work: the one UPDATE over pg, then a provider look-up per expired checkout awaiting its word).
 * Both ask the same local provider fake (the provider's wire format), which knows none of the generated
 * sessions (404, "missing"), so both leave them as they are: the look-ups are the work compared.
 */
export async function measureSweep(
  env: BenchEnv,
  options: { scale: number; name: string; warmup: number; reps: number; target?: number },
): Promise<ScaledMeasurement> {
  const rows = Math.max(1000, Math.round(SWEEP_ROWS * options.scale));
  const template = 'bench_sweep_template';
  const run = 'bench_sweep_run';
  env.log(`case 3: generating ${rows.toLocaleString('en')} checkout rows`);
  const due = await buildTemplate(env, template, rows);
  env.log(`case 3: sweeping ${due.toLocaleString('en')} expired checkouts`);
  const url = env.database.urlFor(run);
  const provider = await startFakeProvider({ webhookSecret: env.appEnv(url).PSP_WEBHOOK_SECRET as string });
  const processOptions = { env: env.appEnv(url, provider.configEnv()), cwd: env.cwd, tmpDir: env.tmpDir };
  const expect = (expired: number, run: ProcessRun) => {
    if (expired !== due) throw new Error(`expected ${due} checkouts expired, got ${expired}`);
    return run;
  };
  try {
    const samples = await alternate({
      warmup: options.warmup,
      reps: options.reps,
      // Each run gets an identical copy: the sweep changes what it sweeps.
      before: async () => {
        await env.database.create(run, template);
      },
      ours: async () => {
        const result = await runNodeOk([BIN, 'sweep-checkouts', '--json'], processOptions);
        return expect((JSON.parse(result.stdout) as { expired: number }).expired, result);
      },
      reference: async () => {
        const result = await runNodeOk([reference('sweep-same-work')], processOptions);
        return expect(Number(result.stdout.trim()), result);
      },
      log: env.log,
    });
    return {
      result: processRow({ name: options.name, scale: options.scale, samples, targetRatio: options.target }),
      touched: due,
      tableRows: rows,
    };
  } finally {
    await provider.close();
    await env.database.drop(run);
    await env.database.drop(template);
  }
}
