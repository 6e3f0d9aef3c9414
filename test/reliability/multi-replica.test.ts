import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { systemClock } from '../../src/clock.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { startCli, type RunningCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertEvent, insertUser } from '../support/factories.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startRoundRobinProxy, type RoundRobinProxy } from '../support/round-robin-proxy.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';
import { TEST_WEBHOOK_SECRET } from '../support/webhook-events.js';
import { zoneWhereItIsMidday } from '../support/zones.js';

const SERVERS = 3;
const SESSIONS = 24;
const DELIVERIES_PER_SESSION = 3;

let tdb: TestDatabase;
let sink: SmtpSink;
let provider: FakeProvider;
let proxy: RoundRobinProxy;
const servers: RunningCli[] = [];
const cwds: string[] = [];

async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

beforeAll(async () => {
  tdb = await createTestDatabase();
  sink = await startSmtpSink();
  provider = await startFakeProvider({ webhookSecret: TEST_WEBHOOK_SECRET });
  const env = testEnv({
    DATABASE_URL: tdb.url,
    TRUST_PROXY: 'true',
    IN_APP_CRON: 'true',
    APP_TIMEZONE: zoneWhereItIsMidday(),
    ...sink.configEnv(),
    ...provider.configEnv(),
  });
  const addresses: string[] = [];
  for (let i = 0; i < SERVERS; i++) {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), `eventops-replica-${i}-`));
    cwds.push(cwd);
    const server = startCli(['serve', '--port', '0'], { env, cwd, timeoutMs: 300_000 });
    servers.push(server);
    addresses.push(
      await until(async () => /"address":"(http:\/\/[^"]+)"/.exec(server.stderr)?.[1], `server ${i} to listen:\n${server.stderr}`, 60_000),
    );
  }
  proxy = await startRoundRobinProxy(addresses);
  provider.setWebhookUrl(`${proxy.url}/api/stripe/webhook`);
}, 180_000);

afterAll(async () => {
  for (const server of servers) server.child.kill('SIGTERM');
  const codes = await Promise.all(servers.map((server) => server.result));
  await proxy?.close();
  await provider?.close();
  await sink?.close();
  await tdb?.drop();
  for (const cwd of cwds) fs.rmSync(cwd, { recursive: true, force: true });
  expect(codes.map((c) => c.code)).toEqual(servers.map(() => 0));
}, 60_000);

describe(`${SERVERS} eventops serve processes on one PostgreSQL behind a round-robin proxy behave as one`, () => {
  it('a webhook storm spread over the servers makes one registration per paid session, and each receipt is sent once', async () => {
    await insertUser(tdb.db, createTestContext({ db: tdb.db }).cipher, { email: 'treasurer@example.org', role: 'ADMIN' });
    const created = await insertEvent(tdb.db, { online_payment: true, capacity: 500, starts_at: new Date(Date.now() + 30 * 86_400_000) });
    const event = (await getEventBySlug(tdb.db, created.slug)) as EventRecord;
    const ctx = createTestContext({ db: tdb.db, clock: systemClock, env: provider.configEnv() });
    const sessions: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const started = await startEventCheckout(ctx, {
        event,
        contact: { name: `Payer ${i}`, email: `payer${i}@example.org` },
        attendees: [{ name: `Payer ${i}`, tier: 'adult' }],
        family: false,
      });
      const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first<{ provider_session_id: string }>();
      sessions.push(row.provider_session_id);
    }
    const events = sessions.map((session) => {
      provider.completeSession(session);
      return provider.buildEvent('checkout.session.completed', session);
    });
    const deliveries = events.flatMap((event) => Array.from({ length: DELIVERIES_PER_SESSION }, () => event));
    const statuses = await Promise.all(deliveries.map(async (event) => (await provider.deliverEvent(event)).status));
    expect(statuses.every((status) => status === 200)).toBe(true);
    expect(proxy.forwarded.every((count) => count >= (SESSIONS * DELIVERIES_PER_SESSION) / SERVERS - 1)).toBe(true);

    const registrations = await tdb.db('registrations').where({ event_id: created.id }).count({ n: '*' }).first();
    expect(registrations).toEqual({ n: SESSIONS });
    expect(await tdb.db('checkout_sessions').where({ event_id: created.id, status: 'COMPLETED' }).count({ n: '*' }).first()).toEqual({ n: SESSIONS });

    // Receipts leave within seconds (the outbox notification wakes every server), each exactly once.
    const receipts = () => sink.messages.filter((m) => m.envelope.to.some((to) => to.startsWith('payer')));
    await until(async () => (receipts().length >= SESSIONS ? true : undefined), 'every receipt', 15_000);
    await until(async () => {
      const pending = await tdb.db('queued_mail').where({ status: 'PENDING' }).count({ n: '*' }).first();
      return Number(pending?.n) === 0 ? true : undefined;
    }, 'the mail queue to settle');
    const recipients = receipts().flatMap((m) => m.envelope.to);
    expect(recipients).toHaveLength(SESSIONS);
    expect(new Set(recipients).size).toBe(SESSIONS);
  });

  it('the public-form rate limit is shared: 11 registrations from one client address spread over the servers, the 11th gets 429', async () => {
    const created = await insertEvent(tdb.db, { capacity: null, starts_at: new Date(Date.now() + 30 * 86_400_000) });
    const body = new URLSearchParams({ name: 'Jo Citizen', email: 'jo@example.org', payment: 'bank', attendee_name: 'Jo', attendee_tier: 'adult' });
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const response = await fetch(`${proxy.url}/events/${created.slug}/register`, { method: 'POST', body, redirect: 'manual' });
      await response.arrayBuffer();
      statuses.push(response.status);
    }
    expect(statuses.slice(0, 10).every((status) => status < 400)).toBe(true);
    expect(statuses[10]).toBe(429);
  });

  it('the in-app scheduler runs each due period once across the servers', async () => {
    const jobs = ['send-reminders', 'sweep-checkouts', 'send-celebrations'];
    const runs = await until(async () => {
      const rows = await tdb.db('job_runs').where({ trigger: 'scheduler' }).whereNotNull('finished_at').select<Array<{ job: string }>>('job');
      return jobs.every((job) => rows.some((row) => row.job === job)) ? rows : undefined;
    }, 'the first scheduled runs');
    void runs;
    // Every server has ticked at least once by now; give a late tick time to (not) run a period again.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const perJob = await tdb.db('job_runs').where({ trigger: 'scheduler' }).groupBy('job').select<Array<{ job: string; n: number }>>('job', tdb.db.raw('count(*)::int AS n'));
    for (const job of jobs) expect(perJob.find((row) => row.job === job)?.n, job).toBe(1);
  });
});
