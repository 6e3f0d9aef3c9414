import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { connectDb } from '../../src/db/connect.js';
import { buildServer } from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertUser } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { providerFixture } from '../support/provider-fixtures.js';
import {
  PAYMENTS_ENV,
  completedSession,
  postWebhook,
  queuedMessages,
  signedDelivery,
  stageNewRegistrationCheckout,
} from '../support/webhook-events.js';

const NOW = new Date('2026-11-22T00:00:00Z');
let tdb: TestDatabase;
let ctx: AppContext;
let server: TestServer;
const logLines: string[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  ctx = createTestContext({ db: tdb.db, env: PAYMENTS_ENV, clock: new FixedClock(NOW), logger: createLogger({ level: 'info', destination: sink }) });
  await insertUser(tdb.db, ctx.cipher, { email: 'treasurer@example.org', role: 'ADMIN' });
  server = await startTestServer(ctx);
});
afterAll(async () => {
  await server.close();
  await tdb.drop();
});

const count = async (table: string) => Number((await tdb.db(table).count<{ n: number }>({ n: '*' }).first())?.n ?? 0);

async function openCheckout() {
  const event = await insertEvent(tdb.db, { online_payment: true });
  const staged = await stageNewRegistrationCheckout(ctx, event);
  const session = completedSession({ ...staged, amountTotal: staged.amount });
  return { event, staged, session };
}

describe('webhook signature: verified over the raw body before anything else', () => {
  it('rejects unsigned, wrongly signed, stale and tampered deliveries with 400 invalid_signature, writing nothing and logging no body', async () => {
    const { staged, session } = await openCheckout();
    const genuine = signedDelivery('checkout.session.completed', session);
    const staleSeconds = Math.floor(Date.now() / 1000) - 10 * 60;
    const attempts = {
      unsigned: { body: genuine.body, signature: null },
      wrongSecret: signedDelivery('checkout.session.completed', session, { secret: 'whsec_someone_else' }),
      stale: signedDelivery('checkout.session.completed', session, { timestamp: staleSeconds }),
      tampered: { body: genuine.body.replace(`"amount_total": ${staged.amount}`, '"amount_total": 1'), signature: genuine.signature },
      garbageHeader: { body: genuine.body, signature: 'not-a-signature' },
    };
    expect(attempts.tampered.body).not.toBe(genuine.body);
    logLines.length = 0;

    for (const [name, delivery] of Object.entries(attempts)) {
      const response = await postWebhook(server.url, delivery);
      expect({ name, status: response.status, body: response.body }).toEqual({
        name,
        status: 400,
        body: { error: { code: 'invalid_signature', message: expect.any(String) } },
      });
    }

    expect(await count('processed_webhook_events')).toBe(0);
    expect(await tdb.db('checkout_sessions').where({ id: staged.checkoutId }).first()).toMatchObject({ status: 'OPEN' });
    expect(await count('registrations')).toBe(0);
    const logged = logLines.join('\n');
    expect(logged).not.toContain(staged.providerSessionId);
    expect(logged).not.toContain(genuine.eventId);
    expect(logged).not.toContain('v1=');
  });

  it('a correctly signed body that is not a provider event is refused with 400 invalid_payload', async () => {
    const body = 'this is not json';
    const Stripe = (await import('stripe')).default;
    const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: PAYMENTS_ENV.PSP_WEBHOOK_SECRET });
    const response = await postWebhook(server.url, { body, signature }, { contentType: 'text/plain' });
    expect(response).toMatchObject({ status: 400, body: { error: { code: 'invalid_payload' } } });
  });

  it('accepts a signed delivery whatever its content type, since the signature covers the bytes', async () => {
    const { session } = await openCheckout();
    const response = await postWebhook(server.url, signedDelivery('checkout.session.completed', session), { contentType: 'text/plain' });
    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'completed' } });
  });

  it('refuses a body over 1 MB with 413 before verifying anything', async () => {
    const response = await postWebhook(server.url, { body: 'x'.repeat(1024 * 1024 + 1), signature: 't=1,v1=00' });
    expect(response.status).toBe(413);
    expect(response.body).toMatchObject({ error: { code: expect.any(String) } });
  });

  it('answers GET with 405 and Allow: POST', async () => {
    const response = await fetch(`${server.url}/api/stripe/webhook`);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
  });
});

describe('webhook answers (decisions.md "HTTP answers")', () => {
  it('an event type we do not use is answered 200 and recorded nowhere', async () => {
    // The published example event as it is: a plan.created.
    const fixture = providerFixture('event');
    const delivery = signedDelivery(fixture.type as string, (fixture.data as { object: Record<string, unknown> }).object);
    const before = await count('processed_webhook_events');

    const response = await postWebhook(server.url, delivery);

    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'ignored' } });
    expect(await count('processed_webhook_events')).toBe(before);
  });

  it('a redelivery of the same event id is answered 200 and does nothing a second time', async () => {
    const { event, staged, session } = await openCheckout();
    const delivery = signedDelivery('checkout.session.completed', session);

    const first = await postWebhook(server.url, delivery);
    const second = await postWebhook(server.url, delivery);
    const third = await postWebhook(server.url, signedDelivery('checkout.session.completed', session, { eventId: delivery.eventId }));

    expect(first.body).toEqual({ received: true, outcome: 'completed' });
    expect(second).toEqual({ status: 200, body: { received: true, outcome: 'duplicate_event' } });
    expect(third.body).toEqual({ received: true, outcome: 'duplicate_event' });
    expect(await tdb.db('registrations').where({ event_id: event.id })).toHaveLength(1);
    expect((await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email))).toHaveLength(1);
    expect(await tdb.db('processed_webhook_events').where({ event_id: delivery.eventId })).toEqual([
      expect.objectContaining({ type: 'checkout.session.completed' }),
    ]);
  });

  it('the same completion under a new event id (the provider retrying after a lost answer) finds the session already handled', async () => {
    const { event, session } = await openCheckout();
    await postWebhook(server.url, signedDelivery('checkout.session.completed', session));
    const again = await postWebhook(server.url, signedDelivery('checkout.session.completed', session));
    expect(again).toEqual({ status: 200, body: { received: true, outcome: 'already_handled' } });
    expect(await tdb.db('registrations').where({ event_id: event.id })).toHaveLength(1);
  });

  it('logs the event id, type and outcome of a handled delivery, and not the payer', async () => {
    const { staged, session } = await openCheckout();
    const delivery = signedDelivery('checkout.session.completed', session);
    logLines.length = 0;
    await postWebhook(server.url, delivery);
    const handled = logLines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.eventId === delivery.eventId);
    expect(handled).toMatchObject({ eventType: 'checkout.session.completed', outcome: 'completed' });
    expect(logLines.join('\n')).not.toContain(staged.email);
  });

  it('answers 503 payments_disabled while PSP_SECRET_KEY and PSP_WEBHOOK_SECRET are unset', async () => {
    const off = createTestContext({ db: tdb.db, clock: new FixedClock(NOW) });
    const offServer = await startTestServer(off);
    try {
      const { session } = await openCheckout();
      const response = await postWebhook(offServer.url, signedDelivery('checkout.session.completed', session));
      expect(response).toMatchObject({ status: 503, body: { error: { code: 'payments_disabled' } } });
    } finally {
      await offServer.close();
    }
  });

  it('answers 500 when the database is unavailable, so the provider delivers again; the retry then succeeds', async () => {
    const { event, session } = await openCheckout();
    const delivery = signedDelivery('checkout.session.completed', session);
    const deadDb = connectDb({ url: tdb.url, poolMax: 1 });
    await deadDb.destroy();
    const down = createTestContext({ db: deadDb, env: PAYMENTS_ENV, clock: new FixedClock(NOW) });
    const downServer = await startTestServer(down);
    try {
      const failed = await postWebhook(downServer.url, delivery);
      expect(failed).toMatchObject({ status: 500, body: { error: { code: 'internal_error' } } });
    } finally {
      await downServer.close();
    }
    expect(await tdb.db('processed_webhook_events').where({ event_id: delivery.eventId })).toHaveLength(0);

    const retried = await postWebhook(server.url, delivery);
    expect(retried).toEqual({ status: 200, body: { received: true, outcome: 'completed' } });
    expect(await tdb.db('registrations').where({ event_id: event.id })).toHaveLength(1);
  });
});

describe('other routes keep their own body parsing', () => {
  it('the raw-body parser is scoped to the webhook: the app itself still parses JSON and forms', async () => {
    const built = await buildServer(ctx);
    try {
      await built.app.ready();
      expect(built.app.hasContentTypeParser('application/json')).toBe(true);
      expect(built.app.hasContentTypeParser('application/x-www-form-urlencoded')).toBe(true);
      expect(built.app.hasContentTypeParser('*')).toBe(false);
    } finally {
      await built.app.close();
    }
  });
});
