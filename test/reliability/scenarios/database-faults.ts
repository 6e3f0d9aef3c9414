import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { FixedClock } from '../../../src/clock.js';
import type { AppContext } from '../../../src/context.js';
import { createFieldCipher } from '../../../src/crypto/field-cipher.js';
import { connectDb, type Db } from '../../../src/db/connect.js';
import { startEmbeddedServer, type EmbeddedServer } from '../../../src/db/embedded.js';
import { migrateLatest } from '../../../src/db/migrate.js';
import { startCli, type CliResult } from '../../support/cli.js';
import { createTestContext } from '../../support/context.js';
import type { TestDatabase } from '../../support/db.js';
import { insertEvent, insertUser } from '../../support/factories.js';
import { startTestServer } from '../../support/http.js';
import { testConfig, testEnv } from '../../support/env.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import {
  PAYMENTS_ENV,
  completedSession,
  postWebhook,
  signedDelivery,
  stageNewRegistrationCheckout,
  type WebhookResponse,
} from '../../support/webhook-events.js';
import { countDeliveries, seedBirthdaysToday } from './seed.js';

/**
 * Case 6: a PostgreSQL of its own (the shared test server must not go down
 * under other files) that is stopped in the middle of a job and of webhook
 * handling, then started again on the same port, so the application's
 * connection URL and pool stay as they were.
 */

export interface RestartablePostgres extends TestDatabase {
  stop(): Promise<void>;
  start(): Promise<void>;
  running(): boolean;
  /** Stops the server and removes its files. */
  destroy(): Promise<void>;
}

export async function startRestartablePostgres(): Promise<RestartablePostgres> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-fault-pg-'));
  // As root the server runs as "postgres", which must reach the data directory.
  fs.chmodSync(tmp, 0o755);
  const dataDir = path.join(tmp, 'data');
  let server: EmbeddedServer | undefined = await startEmbeddedServer({ dataDir, persistent: true });
  const port = server.port;
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  await admin.query('CREATE DATABASE eventops');
  await admin.end();
  const url = new URL(server.adminUrl);
  url.pathname = '/eventops';
  const db = connectDb({ url: url.toString(), poolMax: 10 });
  await migrateLatest(db);
  const handle: RestartablePostgres = {
    url: url.toString(),
    name: 'eventops',
    db,
    running: () => server !== undefined,
    async stop() {
      await server?.stop();
      server = undefined;
    },
    async start() {
      server ??= await startEmbeddedServer({ dataDir, persistent: true, port });
    },
    drop: () => handle.destroy(),
    async destroy() {
      await db.destroy().catch(() => undefined);
      await server?.stop();
      server = undefined;
      fs.rmSync(tmp, { recursive: true, force: true });
    },
  };
  return handle;
}

/** Retries `probe` until it returns true or `ms` pass; returns the attempts it took (0 when it never did). */
async function eventually(probe: () => Promise<boolean>, ms: number): Promise<number> {
  const deadline = Date.now() + ms;
  for (let attempt = 1; ; attempt++) {
    if (await probe().catch(() => false)) return attempt;
    if (Date.now() > deadline) return 0;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// ---- A job whose database stops mid-run ----

export interface JobOutageReport {
  people: number;
  /** Messages accepted before the database was stopped. */
  acceptedBeforeStop: number;
  during: CliResult;
  /** The first run after the database is back. */
  next: CliResult;
  /** The run after the dead run's claims were back-dated past the stale threshold. */
  recovery: CliResult;
  lost: number;
  duplicates: number;
  /** People the dead run emailed but could not record as sent: the only ones allowed twice. */
  unconfirmedSent: number;
  jobRunsLeftOpen: number;
}

export async function jobDuringDatabaseOutage(pgServer: RestartablePostgres, options: { people?: number } = {}): Promise<JobOutageReport> {
  const cipher = createFieldCipher(testConfig().keyring);
  const people = options.people ?? 12;
  const expected = await seedBirthdaysToday(pgServer.db, cipher, { people, prefix: `outage-${Date.now()}` });
  let slow = true;
  const sink = await startSmtpSink({ delayAfterData: () => (slow ? 300 : 0) });
  try {
    const env = testEnv({ ...sink.configEnv(), DATABASE_URL: pgServer.url, LOG_LEVEL: 'warn' });
    const first = startCli(['send-celebrations', '--json'], { env, timeoutMs: 60_000 });
    await sink.waitFor(2, 30_000);
    await pgServer.stop();
    const acceptedBeforeStop = sink.messages.length;
    const during = await first.result;
    slow = false;
    await pgServer.start();

    const accepted = new Set(sink.messages.flatMap((m) => m.envelope.to));
    const next = await startCli(['send-celebrations', '--json'], { env }).result;
    const confirmed = await pgServer.db('celebration_claims as c')
      .join('people as p', 'p.id', 'c.person_id')
      .whereNotNull('c.sent_at')
      .select<Array<{ email_enc: string }>>('p.email_enc');
    const confirmedAddresses = new Set(confirmed.map((row) => cipher.decrypt(row.email_enc)));
    const unconfirmedSent = [...accepted].filter((a) => !confirmedAddresses.has(a)).length;

    await pgServer.db.raw(`UPDATE celebration_claims SET claimed_at = claimed_at - interval '16 minutes' WHERE sent_at IS NULL`);
    const recovery = await startCli(['send-celebrations', '--json'], { env }).result;
    const delivered = countDeliveries(sink.messages, expected);
    const open = await pgServer.db('job_runs').whereNull('finished_at');
    return {
      people,
      acceptedBeforeStop,
      during,
      next,
      recovery,
      lost: delivered.lost.length,
      duplicates: delivered.duplicates,
      unconfirmedSent,
      jobRunsLeftOpen: open.length,
    };
  } finally {
    await sink.close();
  }
}

// ---- Webhook handling and /healthz while the database is down ----

export interface WebhookOutageReport {
  deliveries: number;
  /** Answers while the database was down. */
  duringOutage: WebhookResponse[];
  healthDuringOutage: number;
  /** Health checks it took after the restart to answer 200 again (0: never did within the bound). */
  healthChecksUntilOk: number;
  /** Provider redeliveries after the restart, until each delivery was answered 200. */
  redeliveries: number;
  /** Every delivery once more after success: must change nothing. */
  replays: WebhookResponse[];
  /** Registrations of the event afterwards: one per paid checkout. */
  registrations: number;
  completedCheckouts: number;
}

export async function webhookDuringDatabaseOutage(pgServer: RestartablePostgres, options: { deliveries?: number } = {}): Promise<WebhookOutageReport> {
  const ctx: AppContext = createTestContext({ db: pgServer.db, env: PAYMENTS_ENV, clock: new FixedClock(new Date()) });
  await insertUser(pgServer.db, ctx.cipher, { email: `treasurer-${Date.now()}@example.org`, role: 'ADMIN' });
  const event = await insertEvent(pgServer.db, { online_payment: true, capacity: null });
  const count = options.deliveries ?? 3;
  const staged = [];
  for (let i = 0; i < count; i++) staged.push(await stageNewRegistrationCheckout(ctx, event));
  const deliveries = staged.map((s) => signedDelivery('checkout.session.completed', completedSession({ ...s, amountTotal: s.amount })));
  const server = await startTestServer(ctx);
  const health = async () => (await fetch(`${server.url}/healthz`)).status;
  try {
    // Stopped while the first deliveries are on their way.
    const inFlight = deliveries.map((d) => postWebhook(server.url, d));
    await pgServer.stop();
    const firstAnswers = await Promise.all(inFlight);
    const duringOutage = [...firstAnswers.filter((a) => a.status !== 200)];
    for (const delivery of deliveries) duringOutage.push(await postWebhook(server.url, delivery));
    const healthDuringOutage = await health();

    await pgServer.start();
    const healthChecksUntilOk = await eventually(async () => (await health()) === 200, 20_000);
    let redeliveries = 0;
    for (const delivery of deliveries) {
      await eventually(async () => {
        redeliveries++;
        return (await postWebhook(server.url, delivery)).status === 200;
      }, 20_000);
    }
    const replays = await Promise.all(deliveries.map((d) => postWebhook(server.url, d)));
    const registrations = await registrationsOfEvent(pgServer.db, event.id);
    const completed = await pgServer.db('checkout_sessions').whereIn('id', staged.map((s) => s.checkoutId)).where({ status: 'COMPLETED' });
    return {
      deliveries: deliveries.length,
      duringOutage,
      healthDuringOutage,
      healthChecksUntilOk,
      redeliveries,
      replays,
      registrations,
      completedCheckouts: completed.length,
    };
  } finally {
    if (!pgServer.running()) await pgServer.start();
    await server.close();
  }
}

export async function registrationsOfEvent(db: Db, eventId: string): Promise<number> {
  return (await db('registrations').where({ event_id: eventId })).length;
}
