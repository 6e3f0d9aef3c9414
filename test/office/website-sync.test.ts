import crypto from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { parseEventFile } from '../../src/office/event-file.js';
import { createEvent, deleteEvent, publishEvent } from '../../src/office/events.js';
import {
  STUCK_AFTER_ATTEMPTS,
  countPendingWebsiteSync,
  deliverWebsiteSync,
  enqueueWebsiteSync,
  signWebsiteBody,
  verifyWebsiteSignature,
  websiteSyncBackoffMs,
} from '../../src/office/website-sync.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startWebsiteReceiver, type WebsiteReceiver } from '../support/website-receiver.js';

const SECRET = 'website-sync-test-secret';
const T0 = new Date('2026-11-22T00:00:00Z');
const MINUTE = 60_000;

let tdb: TestDatabase;
let receiver: WebsiteReceiver;
let clock: FixedClock;

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db('website_sync_outbox').delete();
  receiver = await startWebsiteReceiver();
  clock = new FixedClock(T0);
});
afterEach(async () => {
  await receiver.close();
});

function context(url = receiver.url) {
  return createTestContext({ db: tdb.db, env: { WEBSITE_SYNC_URL: url, WEBSITE_SYNC_SECRET: SECRET }, clock });
}

let counter = 0;
async function createSampleEvent(ctx = context()) {
  counter += 1;
  const file = parseEventFile({
    slug: `harvest-dinner-${counter}`,
    title: 'Harvest Dinner',
    startsAt: '2027-04-03T18:30:00+11:00',
    capacity: null,
    pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 2500 }] },
  });
  return createEvent(ctx, file);
}

interface OutboxRow {
  id: string;
  status: string;
  attempts: number;
  next_attempt_at: Date;
  claimed_until: Date | null;
  last_error: string | null;
  delivered_at: Date | null;
}

async function outboxRow(id: string | null): Promise<OutboxRow> {
  const row = await tdb.db('website_sync_outbox').where({ id }).first<OutboxRow | undefined>();
  if (!row) throw new Error(`no outbox row ${id}`);
  return row;
}

describe('website sync delivery', () => {
  it('POSTs the stored body as JSON with a valid HMAC signature over "<t>.<body>", then marks the row DELIVERED', async () => {
    const ctx = context();
    const created = await createSampleEvent(ctx);

    const result = await deliverWebsiteSync(ctx);
    expect(result).toMatchObject({ enabled: true, delivered: 1, failed: 0, pending: 0 });

    expect(receiver.requests).toHaveLength(1);
    const [request] = receiver.requests;
    expect(request?.method).toBe('POST');
    expect(request?.path).toBe('/hooks/eventops');
    expect(request?.headers['content-type']).toBe('application/json');

    const body = request?.body ?? '';
    const header = String(request?.headers['x-eventops-signature']);
    const nowSeconds = Math.floor(T0.getTime() / 1000);
    expect(verifyWebsiteSignature(SECRET, header, body, nowSeconds, 300)).toBe(true);

    // Recomputed independently of the module under test.
    const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
    expect(match?.[1]).toBe(String(nowSeconds));
    const expected = crypto.createHmac('sha256', SECRET).update(`${match?.[1]}.${body}`).digest('hex');
    expect(match?.[2]).toBe(expected);

    const parsed = JSON.parse(body) as { id: string; type: string; occurredAt: string; event: Record<string, unknown> };
    expect(parsed).toMatchObject({
      id: created.deliveryId,
      type: 'event.created',
      occurredAt: T0.toISOString(),
      event: { slug: created.event.slug, title: 'Harvest Dinner', capacity: null, maxAttendeesPerRegistration: 10, unpaidHoldDays: 7, deleted: false },
    });

    expect(await outboxRow(created.deliveryId)).toMatchObject({ status: 'DELIVERED', attempts: 1, delivered_at: T0, claimed_until: null });
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 0, failed: 0, pending: 0 });
    expect(receiver.requests).toHaveLength(1);
  });

  it('a receiver answering 500 leaves the row PENDING with a later next attempt; a later delivery succeeds with the same id', async () => {
    const ctx = context();
    const created = await createSampleEvent(ctx);
    receiver.answerWith(500);

    const failed = await deliverWebsiteSync(ctx);
    expect(failed).toMatchObject({ delivered: 0, failed: 1, pending: 1 });
    const afterFailure = await outboxRow(created.deliveryId);
    expect(afterFailure).toMatchObject({ status: 'PENDING', attempts: 1, claimed_until: null, delivered_at: null });
    expect(afterFailure.next_attempt_at).toEqual(new Date(T0.getTime() + MINUTE));
    expect(afterFailure.last_error).toContain('HTTP 500');

    // Not due yet: nothing is sent.
    receiver.answerWith(200);
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 0, failed: 0, pending: 1 });
    expect(receiver.requests).toHaveLength(1);

    clock.advance(MINUTE);
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 1, failed: 0, pending: 0 });
    expect(receiver.requests).toHaveLength(2);
    const ids = receiver.requests.map((r) => (JSON.parse(r.body) as { id: string }).id);
    expect(ids).toEqual([created.deliveryId, created.deliveryId]);
    expect(await outboxRow(created.deliveryId)).toMatchObject({ status: 'DELIVERED', attempts: 2, last_error: null });
  });

  it('a notification the website keeps refusing goes to the error log once, at its tenth failed try, for the weekly digest', async () => {
    const ctx = context();
    const created = await createSampleEvent(ctx);
    receiver.answerWith(401);
    await tdb.db('error_logs').where({ source: 'website-sync' }).delete();
    for (let attempt = 1; attempt <= STUCK_AFTER_ATTEMPTS + 2; attempt += 1) {
      expect(await deliverWebsiteSync(ctx)).toMatchObject({ failed: 1 });
      expect((await outboxRow(created.deliveryId)).attempts).toBe(attempt);
      const logged = await tdb.db('error_logs').where({ source: 'website-sync' }).select('error_class', 'message');
      expect(logged).toHaveLength(attempt < STUCK_AFTER_ATTEMPTS ? 0 : 1);
      clock.advance(60 * MINUTE);
    }
    const [logged] = await tdb.db('error_logs').where({ source: 'website-sync' }).select('error_class', 'message');
    expect(logged).toMatchObject({ error_class: 'WebsiteSyncStuckError' });
    expect(logged?.message).toContain('event.created notification 10 times');
    expect(logged?.message).toContain('HTTP 401');
  });

  it('backoff doubles from 1 minute per attempt and is capped at 1 hour', async () => {
    expect([1, 2, 3, 4, 6, 7, 20].map(websiteSyncBackoffMs)).toEqual([1, 2, 4, 8, 32, 60, 60].map((m) => m * MINUTE));

    const ctx = context();
    const created = await createSampleEvent(ctx);
    receiver.answerWith(503);
    await deliverWebsiteSync(ctx);
    clock.advance(MINUTE);
    await deliverWebsiteSync(ctx);
    expect((await outboxRow(created.deliveryId)).next_attempt_at).toEqual(new Date(T0.getTime() + MINUTE + 2 * MINUTE));
  });

  it('a receiver that is down loses nothing: the failure is recorded, not thrown, and delivery resumes once it is back', async () => {
    const ctx = context();
    const created = await createSampleEvent(ctx);
    const downUrl = receiver.url;
    await receiver.close();

    const result = await deliverWebsiteSync(ctx);
    expect(result).toMatchObject({ delivered: 0, failed: 1, pending: 1 });
    expect(result.failures[0]?.error).toMatch(/fetch failed|ECONNREFUSED/);
    expect(await countPendingWebsiteSync(tdb.db)).toBe(1);

    receiver = await startWebsiteReceiver();
    clock.advance(MINUTE);
    expect(downUrl).not.toBe(receiver.url);
    expect(await deliverWebsiteSync(context(receiver.url))).toMatchObject({ delivered: 1, pending: 0 });
    expect((JSON.parse(receiver.requests[0]?.body ?? '{}') as { id: string }).id).toBe(created.deliveryId);
  });

  it('delivers oldest first and stops at the first failure, handing the untried rows back unclaimed', async () => {
    const ctx = context();
    const created = await createSampleEvent(ctx);
    clock.advance(1000);
    const published = await publishEvent(ctx, created.event.slug);
    clock.advance(1000);
    const deleted = await deleteEvent(ctx, created.event.slug);

    receiver.answerWith(500);
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 0, failed: 1, pending: 3 });
    expect(receiver.requests).toHaveLength(1);
    for (const later of [published, deleted]) {
      expect(await outboxRow(later.deliveryId)).toMatchObject({ status: 'PENDING', attempts: 0, claimed_until: null });
    }

    receiver.answerWith(200);
    clock.advance(MINUTE);
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 3, failed: 0, pending: 0 });
    const types = receiver.requests.slice(1).map((r) => (JSON.parse(r.body) as { type: string }).type);
    expect(types).toEqual(['event.created', 'event.published', 'event.deleted']);
  });

  it('against a slow website no post starts late in the claim: the rest is handed back, so another run never sends a later change first', async () => {
    const ctx = context();
    const created = await createSampleEvent(ctx);
    for (let i = 0; i < 19; i++) {
      clock.advance(1000);
      await enqueueWebsiteSync(tdb.db, ctx, 'event.updated', created.event);
    }
    // Every reading of this clock is 7 seconds after the last: each post takes about 14 seconds.
    let tick = clock.now().getTime();
    const slowCtx = createTestContext({ db: tdb.db, env: { WEBSITE_SYNC_URL: receiver.url, WEBSITE_SYNC_SECRET: SECRET }, clock: { now: () => new Date((tick += 7_000)) } });

    const first = await deliverWebsiteSync(slowCtx);

    expect(first.delivered).toBeGreaterThan(0);
    expect(first.delivered).toBeLessThan(20);
    expect(receiver.requests).toHaveLength(first.delivered);
    const handedBack = await tdb.db('website_sync_outbox').where({ status: 'PENDING' });
    expect(handedBack).toHaveLength(20 - first.delivered);
    for (const row of handedBack) expect(row).toMatchObject({ claimed_until: null, attempts: 0 });

    clock.set(new Date(tick));
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 20 - first.delivered, pending: 0 });
    const ids = receiver.requests.map((r) => (JSON.parse(r.body) as { id: string }).id);
    const queued = await tdb.db('website_sync_outbox').orderBy('seq').pluck('id');
    expect(ids).toEqual(queued);
  });

  it('a later notification for an event waits while an earlier one is backing off; other events go on', async () => {
    const ctx = context();
    const camp = await createSampleEvent(ctx);
    receiver.answerWith(500);
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 0, failed: 1 });
    receiver.answerWith(200);

    // While "created" waits out its backoff, the event is published and deleted, and another event is created.
    clock.advance(1000);
    const published = await publishEvent(ctx, camp.event.slug);
    clock.advance(1000);
    const deleted = await deleteEvent(ctx, camp.event.slug);
    clock.advance(1000);
    const other = await createSampleEvent(ctx);
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 1, failed: 0, pending: 3 });
    for (const waiting of [published, deleted]) {
      expect(await outboxRow(waiting.deliveryId)).toMatchObject({ status: 'PENDING', attempts: 0 });
    }

    clock.advance(MINUTE);
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 3, failed: 0, pending: 0 });
    const received = receiver.requests.slice(1).map((r) => JSON.parse(r.body) as { id: string; type: string; event: { slug: string } });
    expect(received.map((r) => `${r.event.slug} ${r.type}`)).toEqual([
      `${other.event.slug} event.created`,
      `${camp.event.slug} event.created`,
      `${camp.event.slug} event.published`,
      `${camp.event.slug} event.deleted`,
    ]);
  });

  it('does not follow a redirect: a 3xx is a failed delivery with its status recorded, and the signed body goes nowhere else', async () => {
    const elsewhere = await startWebsiteReceiver();
    try {
      const ctx = context();
      const created = await createSampleEvent(ctx);
      receiver.answerWith(307, { location: elsewhere.url });

      const result = await deliverWebsiteSync(ctx);

      expect(result).toMatchObject({ delivered: 0, failed: 1, pending: 1 });
      expect(result.failures[0]?.error).toMatch(/^HTTP 307: redirects are not followed/);
      expect(receiver.requests).toHaveLength(1);
      expect(elsewhere.requests).toHaveLength(0);
      expect(await outboxRow(created.deliveryId)).toMatchObject({
        status: 'PENDING',
        attempts: 1,
        last_error: expect.stringMatching(/^HTTP 307/),
        next_attempt_at: new Date(T0.getTime() + MINUTE),
      });
    } finally {
      await elsewhere.close();
    }
  });

  it('two concurrent deliveries send each notification exactly once', async () => {
    const ctx = context();
    const ids: Array<string | null> = [];
    for (let i = 0; i < 12; i += 1) {
      ids.push((await createSampleEvent(ctx)).deliveryId);
      clock.advance(10);
    }
    const [a, b] = await Promise.all([deliverWebsiteSync(ctx, { limit: 7 }), deliverWebsiteSync(ctx, { limit: 7 })]);
    // Whatever one run could not claim, a follow-up run picks up.
    const rest = await deliverWebsiteSync(ctx);
    expect(a.delivered + b.delivered + rest.delivered).toBe(12);

    const received = receiver.requests.map((r) => (JSON.parse(r.body) as { id: string }).id);
    expect(received).toHaveLength(12);
    expect(new Set(received)).toEqual(new Set(ids));
    const delivered = await tdb.db('website_sync_outbox').where({ status: 'DELIVERED', attempts: 1 }).count<{ count: number }[]>({ count: '*' });
    expect(Number(delivered[0]?.count)).toBe(12);
  });

  it("a row claimed by a run in progress is not delivered by another run until its claim expires by the database's clock", async () => {
    const ctx = context();
    const created = await createSampleEvent(ctx);
    await tdb.db.raw(`UPDATE website_sync_outbox SET claimed_until = now() + interval '2 minutes' WHERE id = ?`, [created.deliveryId]);
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 0, pending: 1 });
    // A server whose clock runs ten minutes ahead still sees the claim as live.
    clock.set(new Date(Date.now() + 10 * MINUTE));
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 0, pending: 1 });
    expect(receiver.requests).toHaveLength(0);
    // The run that held it crashed: its claim ran out.
    await tdb.db.raw(`UPDATE website_sync_outbox SET claimed_until = now() - interval '1 second' WHERE id = ?`, [created.deliveryId]);
    expect(await deliverWebsiteSync(ctx)).toMatchObject({ delivered: 1, pending: 0 });
  });

  it('with website sync off nothing is attempted and queued rows are kept', async () => {
    await createSampleEvent(context());
    const off = createTestContext({ db: tdb.db, clock });
    expect(await deliverWebsiteSync(off)).toMatchObject({ enabled: false, delivered: 0, failed: 0, pending: 1 });
    expect(receiver.requests).toHaveLength(0);
  });
});

describe('verifyWebsiteSignature', () => {
  const body = '{"id":"d1","type":"event.created"}';
  const t = 1_800_000_000;
  const header = signWebsiteBody(SECRET, body, t);

  it('accepts the signature within the tolerance', () => {
    expect(verifyWebsiteSignature(SECRET, header, body, t + 299, 300)).toBe(true);
  });

  it('rejects a wrong secret, a changed body, a stale timestamp and malformed headers', () => {
    expect(verifyWebsiteSignature('another-secret', header, body, t, 300)).toBe(false);
    expect(verifyWebsiteSignature(SECRET, header, body.replace('d1', 'd2'), t, 300)).toBe(false);
    expect(verifyWebsiteSignature(SECRET, header, body, t + 301, 300)).toBe(false);
    for (const bad of [undefined, '', 'v1=abc', `t=${t}`, `t=${t},v1=zz`, header.replace(/.$/, '')]) {
      expect(verifyWebsiteSignature(SECRET, bad, body, t, 300)).toBe(false);
    }
  });
});
