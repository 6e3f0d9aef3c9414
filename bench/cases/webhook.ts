import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import type { Db } from '../../src/db/connect.js';
import { freePort } from '../../src/db/embedded.js';
import { priceRegistration } from '../../src/registrations/pricing.js';
import { CHECKOUT_EXPIRY_MS, encryptStagedRegistration, type StagedRegistration } from '../../src/payments/staging.js';
import { DEFAULT_CARD_FEE } from '../../src/settings.js';
import { MIGRATED, settle } from '../support/database.js';
import { signDeliveries, type Delivery, type SessionToComplete } from '../support/deliveries.js';
import { alternate, ratioRow, type BenchEnv, type CaseReport } from '../support/harness.js';
import { BIN, reference } from '../support/paths.js';
import { startNode, waitForHttp, waitForPort } from '../support/processes.js';
import { insertInBatches, seededName, seededUuid } from '../support/seeded.js';
import { median, round } from '../support/stats.js';

export const WEBHOOK_REQUESTS = 3_000;
const CONCURRENCY = 50;
const WARMUP = 1;
const REPS = 3;
const DATABASE = 'bench_webhook';
const REFERENCE_DATABASE = 'bench_webhook_reference';
const SAME_WORK_DATABASE = 'bench_webhook_same_work';
const EVENT_ID = seededUuid('webhook-event');
/**
 * Events the sessions are spread over: 1 by default (a registration rush is
 * one event). BENCH_WEBHOOK_EVENTS=50 shows what the per-event lock costs.
 */
const EVENTS = Math.max(1, Number(process.env.BENCH_WEBHOOK_EVENTS ?? 1));
const PRICING = { tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] };
const WEBHOOK_PATH = '/api/stripe/webhook';

interface LoadRun {
  ms: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
}

/**
 * Case 2 data: one published, card-paid event (or EVENTS) and `count` OPEN
 * checkout sessions staged as startEventCheckout
 * leaves them: priced with the card fee, the registration encrypted in
 * payload_enc, the provider session id recorded.
 */
export async function stageSessions(env: BenchEnv, count: number, database = DATABASE): Promise<SessionToComplete[]> {
  await env.database.create(database, MIGRATED);
  const db = env.database.connect(database, 1);
  try {
    const eventIds = Array.from({ length: EVENTS }, (_, e) => (e === 0 ? EVENT_ID : seededUuid(`webhook-event-${e}`)));
    await db('events').insert(
      eventIds.map((id, e) => ({
        id,
        slug: e === 0 ? 'family-camp' : `family-camp-${e}`,
        title: 'Family Camp',
        location: 'Church Hall, 1 Main St',
        starts_at: new Date(Date.now() + 30 * 86_400_000),
        capacity: null,
        published: true,
        online_payment: true,
        pass_card_fee: true,
        pricing: JSON.stringify(PRICING),
      })),
    );
    const expiresAt = new Date(Date.now() + CHECKOUT_EXPIRY_MS);
    const sessions: SessionToComplete[] = [];
    const rows = Array.from({ length: count }, (_, i) => {
      const name = seededName(i);
      const contact = { name: `${name.first} ${name.last}`, email: `payer${i}@example.org` };
      const attendees = Array.from({ length: 1 + (i % 3) }, (_, a) => ({ name: `${contact.name} ${a + 1}`, tier: 'adult' }));
      const priced = priceRegistration(PRICING, { attendees, family: false }, { cardFee: DEFAULT_CARD_FEE });
      const staged: StagedRegistration = { version: 1, contact, attendees, family: false, priced };
      const eventId = eventIds[i % EVENTS] as string;
      const session: SessionToComplete = {
        checkoutId: seededUuid(`checkout-${i}`),
        eventId,
        providerSessionId: `cs_test_${crypto.createHash('sha256').update(`session${i}`).digest('hex').slice(0, 58)}`,
        paymentIntentId: `pi_${crypto.createHash('sha256').update(`intent${i}`).digest('hex').slice(0, 24)}`,
        amount: priced.total,
        email: contact.email,
        name: contact.name,
      };
      sessions.push(session);
      return {
        id: session.checkoutId,
        event_id: eventId,
        status: 'OPEN',
        expires_at: expiresAt,
        payload_enc: encryptStagedRegistration(env.cipher, staged),
        net_minor: priced.net,
        surcharge_minor: priced.surcharge,
        provider_session_id: session.providerSessionId,
        provider_url: `https://checkout.example/c/pay/${session.providerSessionId}`,
      };
    });
    await insertInBatches(db, 'checkout_sessions', rows, 500);
    await settle(db, ['events', 'checkout_sessions']);
    return sessions;
  } finally {
    await db.destroy();
  }
}

/**
 * CPU time (user + system) of the database's server processes serving `database`,
 * from /proc: the embedded server runs on this machine. Diagnosis only; undefined elsewhere.
 */
async function backendCpuMs(db: Db, database: string): Promise<number | undefined> {
  const { rows } = await db.raw<{ rows: Array<{ pid: number }> }>('SELECT pid FROM pg_stat_activity WHERE datname = ? AND pid <> pg_backend_pid()', [database]);
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      return undefined;
    }
  }
  // Linux counts in clock ticks of 1/100 s (USER_HZ).
  return ticks * 10;
}

/** `deliveries.length` POSTs at fixed concurrency; every answer must be 200. */
async function load(port: number, deliveries: Delivery[]): Promise<LoadRun> {
  let next = 0;
  let answered = 0;
  let finished = 0;
  const started = performance.now();
  const instance = autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: CONCURRENCY,
    pipelining: 1,
    amount: deliveries.length,
    timeout: 30,
    requests: [
      {
        method: 'POST',
        path: WEBHOOK_PATH,
        setupRequest: (request) => {
          const delivery = deliveries[next++ % deliveries.length] as Delivery;
          return {
            ...request,
            body: delivery.body,
            headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': delivery.signature },
          };
        },
      },
    ],
  });
  // autocannon notices that `amount` is reached only on its 1-second sampling tick: time the last answer instead.
  instance.on('response', () => {
    if (++answered === deliveries.length) finished = performance.now();
  });
  const result = await instance;
  const ms = (finished || performance.now()) - started;
  if (result.errors > 0 || result.timeouts > 0 || result.non2xx > 0) {
    throw new Error(`webhook load: ${result.non2xx} non-2xx answers, ${result.errors} errors, ${result.timeouts} timeouts`);
  }
  return { ms, requestsPerSecond: (deliveries.length * 1000) / ms, p50: result.latency.p50, p99: result.latency.p99 };
}

/**
 * Case 2: `eventops serve` (production settings, card payments on, request
 * logs to a file) receiving signed completions for distinct staged sessions,
 * driven by autocannon at 50 connections, against the same-work floor
 * (references/same-work: the same checks and writes in raw pg, one
 * transaction; the target) and, informational, the bare floor that verifies
 * the signature and inserts one row.
 */
export async function webhookThroughput(env: BenchEnv): Promise<CaseReport> {
  const perRun = Math.max(500, Math.round(WEBHOOK_REQUESTS * env.scale));
  const runs = WARMUP + REPS;
  env.log(`case 2: staging ${(perRun * runs).toLocaleString('en')} checkout sessions, for ours and for the same-work floor`);
  const sessions = await stageSessions(env, perRun * runs);
  await stageSessions(env, perRun * runs, SAME_WORK_DATABASE);
  const referenceUrl = await env.database.create(REFERENCE_DATABASE, MIGRATED);
  const secret = env.appEnv('postgres://unused').PSP_WEBHOOK_SECRET as string;
  const [ourPort, referencePort, floorPort] = [await freePort(), await freePort(), await freePort()];
  const base = { cwd: env.cwd, tmpDir: env.tmpDir };
  const ours = startNode([BIN, 'serve', '--port', String(ourPort), '--host', '127.0.0.1'], {
    ...base,
    env: env.appEnv(env.database.urlFor(DATABASE)),
    logFile: path.join(env.tmpDir, 'serve.log'),
  });
  const referenceServer = startNode([reference('webhook-server')], {
    ...base,
    env: {
      ...env.appEnv(referenceUrl),
      BENCH_PORT: String(referencePort),
      BENCH_WEBHOOK_REFERENCE_ROUND_TRIPS: process.env.BENCH_WEBHOOK_REFERENCE_ROUND_TRIPS ?? '1',
    },
    logFile: path.join(env.tmpDir, 'reference-server.log'),
  });
  const floorServer = startNode([reference('same-work/server')], {
    ...base,
    env: { ...env.appEnv(env.database.urlFor(SAME_WORK_DATABASE)), BENCH_PORT: String(floorPort) },
    logFile: path.join(env.tmpDir, 'same-work-server.log'),
  });
  const slice = (run: number) => sessions.slice(run * perRun, (run + 1) * perRun);
  // Each side completes every staged session once, in its own database: a run's deliveries are the next slice.
  const nextRun = { ours: 0, floor: 0, bare: 0 };
  const loadSide = (side: keyof typeof nextRun, port: number) => {
    const run = nextRun[side]++;
    // Signed just before each run: the provider's tolerance is 5 minutes.
    return load(port, signDeliveries(slice(run), secret, perRun * run));
  };
  try {
    await waitForHttp(`http://127.0.0.1:${ourPort}/healthz`);
    await waitForPort(referencePort);
    await waitForPort(floorPort);
    env.log(`case 2: ${perRun.toLocaleString('en')} deliveries per run at ${CONCURRENCY} connections, ours against the same-work floor`);
    const samples = await alternate({
      warmup: WARMUP,
      reps: REPS,
      ours: () => loadSide('ours', ourPort),
      reference: () => loadSide('floor', floorPort),
      log: env.log,
    });
    env.log('case 2: the bare floor (signature and one INSERT), informational');
    const bare: LoadRun[] = [];
    for (let run = 0; run < runs; run++) {
      const sample = await loadSide('bare', referencePort);
      if (run >= WARMUP) bare.push(sample);
    }
    const db = env.database.connect(DATABASE, 1);
    const databaseCpu = {
      ours: await backendCpuMs(db, DATABASE),
      floor: await backendCpuMs(db, SAME_WORK_DATABASE),
      reference: await backendCpuMs(db, REFERENCE_DATABASE),
    };
    await db.destroy();
    for (const database of [DATABASE, SAME_WORK_DATABASE]) {
      const check = env.database.connect(database, 1);
      const made = await check('registrations').count<Array<{ n: number }>>({ n: '*' }).first();
      const receipts = await check('queued_mail').count<Array<{ n: number }>>({ n: '*' }).first();
      await check.destroy();
      if (Number(made?.n) !== perRun * runs || Number(receipts?.n) < perRun * runs) {
        throw new Error(`${database}: expected ${perRun * runs} registrations and receipts, got ${String(made?.n)} and ${String(receipts?.n)}`);
      }
    }
    const ourServer = await ours.stop();
    const cpuPerDelivery = (cpuMs: number | undefined) => (cpuMs === undefined ? '?' : round(cpuMs / (perRun * runs), 2));
    const referenceExit = await referenceServer.stop();
    const floorExit = await floorServer.stop();
    const rps = (side: LoadRun[]) => Math.round(median(side.map((s) => s.requestsPerSecond)));
    const describe = (side: LoadRun[]) =>
      `${rps(side)} req/s, p50 ${median(side.map((s) => s.p50))} ms, p99 ${median(side.map((s) => s.p99))} ms`;
    const msPerDelivery = (side: LoadRun[]) => side.map((s) => s.ms / perRun);
    const peakRssMb = ourServer.rssMb ?? null;
    return {
      results: [
        ratioRow({
          name: '2 webhook: ms per delivery (1/throughput)',
          scale: env.scale,
          ours: msPerDelivery(samples.ours),
          reference: msPerDelivery(samples.reference),
          targetRatio: 2,
          peakRssMb,
        }),
        ratioRow({
          name: `2 webhook: p99 latency at ${CONCURRENCY} connections`,
          scale: env.scale,
          ours: samples.ours.map((s) => s.p99),
          reference: samples.reference.map((s) => s.p99),
          peakRssMb,
          // The p99 at 50 connections within twice the same-work floor's.
          targetRatio: 2,
        }),
        ratioRow({
          name: '2 webhook vs bare floor: ms per delivery',
          scale: env.scale,
          ours: msPerDelivery(samples.ours),
          reference: msPerDelivery(bare),
          peakRssMb,
        }),
        ratioRow({
          name: '2 webhook vs bare floor: p99',
          scale: env.scale,
          ours: samples.ours.map((s) => s.p99),
          reference: bare.map((s) => s.p99),
          peakRssMb,
        }),
      ],
      notes: [
        `case 2, webhook at ${CONCURRENCY} connections, ${perRun} deliveries per run (medians of ${REPS}): ours ${describe(samples.ours)}; ` +
          `same-work floor (raw pg, the same checks and writes in one transaction, receipts sent) ${describe(samples.reference)}; ` +
          `bare floor (signature and one INSERT) ${describe(bare)}. Peak RSS serve ${Math.round(ourServer.rssMb ?? 0)} MB, ` +
          `same-work floor ${Math.round(floorExit.rssMb ?? 0)} MB, bare floor ${Math.round(referenceExit.rssMb ?? 0)} MB. ` +
          `CPU per delivery (whole process life over its ${perRun * runs} deliveries, start-up included): serve ${cpuPerDelivery(ourServer.cpuMs)} ms, ` +
          `same-work floor ${cpuPerDelivery(floorExit.cpuMs)} ms, bare floor ${cpuPerDelivery(referenceExit.cpuMs)} ms; PostgreSQL CPU per delivery ` +
          `(each server's connections) ours ${cpuPerDelivery(databaseCpu.ours)} ms, same-work floor ${cpuPerDelivery(databaseCpu.floor)} ms, ` +
          `bare floor ${cpuPerDelivery(databaseCpu.reference)} ms`,
      ],
    };
  } finally {
    for (const server of [ours, referenceServer, floorServer]) if (server.child.exitCode === null) await server.stop();
    await env.database.drop(DATABASE);
    await env.database.drop(REFERENCE_DATABASE);
    await env.database.drop(SAME_WORK_DATABASE);
  }
}
