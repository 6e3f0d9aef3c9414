import { EventEmitter } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { parseEventFile } from '../../src/office/event-file.js';
import { createEvent } from '../../src/office/events.js';
import { enqueueWebsiteSync } from '../../src/office/website-sync.js';
import { connectDb, type Db } from '../../src/db/connect.js';
import { enqueueMail } from '../../src/mail/queue.js';
import type { MailMessage } from '../../src/mail/types.js';
import { startDeliveryLoop, WEBSITE_BATCH, type DeliveryLoop } from '../../src/scheduler/delivery-loop.js';
import { listenForOutbox } from '../../src/scheduler/outbox-listener.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';
import { startWebsiteReceiver } from '../support/website-receiver.js';

let tdb: TestDatabase;
/** A second connection pool on the same database: another server, or a cron job, writing the outbox. */
let otherServer: Db;
const loops: DeliveryLoop[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase();
  otherServer = connectDb({ url: tdb.url, poolMax: 2 });
});
afterAll(async () => {
  await otherServer.destroy();
  await tdb.drop();
});
beforeEach(async () => {
  while (loops.length > 0) await loops.pop()?.stop();
  await tdb.db('queued_mail').delete();
});
// Registered after the hook that stops the loops, so the sink is emptied once nothing can still send to it.
const mail = useSinkAndMailer();

const NEVER_BY_TIMER = 10 * 60_000;
const context = (db: Db = tdb.db) => createTestContext({ db, clock: systemClock, mailer: mail.mailer });
const receipt = (n: number): MailMessage => ({ to: [`family${n}@example.org`], subject: `Receipt ${n}`, html: '<p>Paid</p>', text: 'Paid' });

async function queueCommitted(db: Db, count: number): Promise<void> {
  const ctx = context(db);
  await db.transaction(async (trx) => {
    for (let n = 0; n < count; n += 1) await enqueueMail(trx, ctx.cipher, { kind: 'receipt', message: receipt(n) }, new Date());
  });
}

async function listening(db: Db): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const others = await db.raw<{ rows: Array<{ n: number }> }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN eventops_outbox%'`,
    );
    if ((others.rows[0]?.n ?? 0) > 0) return;
    if (Date.now() > deadline) throw new Error('the delivery loop never started listening');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The mail server may accept a message a moment before the row is marked SENT. */
async function pendingMailSettles(): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (Number((await tdb.db('queued_mail').where({ status: 'PENDING' }).count({ n: '*' }).first())?.n) > 0) {
    if (Date.now() > deadline) throw new Error('queued mail still PENDING');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('queued mail leaves within seconds', () => {
  it('mail committed by another server is delivered at once through LISTEN/NOTIFY, not at the next timer tick', async () => {
    const loop = startDeliveryLoop(context(), { intervalMs: NEVER_BY_TIMER });
    loops.push(loop);
    await listening(tdb.db);
    const committedAt = Date.now();
    await queueCommitted(otherServer, 1);
    const [message] = await mail.sink.waitFor(1, 2_000);
    expect(message?.subject).toBe('Receipt 0');
    expect(Date.now() - committedAt).toBeLessThan(2_000);
    await pendingMailSettles();
    expect(await tdb.db('queued_mail').where({ status: 'SENT' }).count({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it('with a listening connection of its own (DIRECT_URL beside a pooler), the loop LISTENs there and still wakes at once', async () => {
    const direct = connectDb({ url: tdb.url, poolMax: 1, applicationName: 'eventops-listener-test' });
    try {
      const loop = startDeliveryLoop(context(), { intervalMs: NEVER_BY_TIMER, listenOn: direct });
      loops.push(loop);
      await listening(tdb.db);
      const listeners = await tdb.db.raw<{ rows: Array<{ application_name: string }> }>(
        `SELECT application_name FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN eventops_outbox%'`,
      );
      expect(listeners.rows.map((row) => row.application_name)).toEqual(['eventops-listener-test']);

      await queueCommitted(otherServer, 1);
      const [message] = await mail.sink.waitFor(1, 2_000);
      expect(message?.subject).toBe('Receipt 0');
      await loop.stop();
    } finally {
      await direct.destroy();
    }
  });

  it('nothing is sent for a transaction that rolls back', async () => {
    const loop = startDeliveryLoop(context(), { intervalMs: NEVER_BY_TIMER });
    loops.push(loop);
    await listening(tdb.db);
    await otherServer
      .transaction(async (trx) => {
        await enqueueMail(trx, context().cipher, { kind: 'receipt', message: receipt(7) }, new Date());
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    await queueCommitted(otherServer, 1);
    await mail.sink.waitFor(1, 2_000);
    await loop.runOnce();
    expect(mail.sink.messages.map((m) => m.subject)).toEqual(['Receipt 0']);
  });

  it('wake() delivers at once in the same process, and a pass drains more than one batch', async () => {
    const loop = startDeliveryLoop(context(), { intervalMs: NEVER_BY_TIMER, listen: false });
    loops.push(loop);
    await loop.runOnce();
    await queueCommitted(tdb.db, 120);
    loop.wake();
    const messages = await mail.sink.waitFor(120, 10_000);
    expect(new Set(messages.map((m) => m.subject)).size).toBe(120);
    await pendingMailSettles();
    expect(await tdb.db('queued_mail').where({ status: 'SENT' }).count({ n: '*' }).first()).toEqual({ n: 120 });
  });

  it('two servers on one database deliver every queued message exactly once', async () => {
    const second = connectDb({ url: tdb.url, poolMax: 5 });
    try {
      loops.push(startDeliveryLoop(context(), { intervalMs: NEVER_BY_TIMER }), startDeliveryLoop(context(second), { intervalMs: NEVER_BY_TIMER }));
      await queueCommitted(otherServer, 150);
      const messages = await mail.sink.waitFor(150, 15_000);
      await Promise.all(loops.map((loop) => loop.runOnce()));
      expect(mail.sink.messages).toHaveLength(150);
      expect(new Set(messages.map((m) => m.subject)).size).toBe(150);
    } finally {
      while (loops.length > 0) await loops.pop()?.stop();
      await second.destroy();
    }
  });
});

describe('website notifications', () => {
  it('one pass delivers a backlog larger than a batch: it goes on while a whole batch went out', async () => {
    const receiver = await startWebsiteReceiver();
    try {
      const ctx = createTestContext({ db: tdb.db, clock: systemClock, env: { WEBSITE_SYNC_URL: receiver.url, WEBSITE_SYNC_SECRET: 'delivery-loop-website-secret' } });
      const { event } = await createEvent(createTestContext({ db: tdb.db, clock: systemClock }), parseEventFile({
        slug: 'backlog-after-outage',
        title: 'Harvest Dinner',
        startsAt: '2027-04-03T18:30:00+11:00',
        capacity: null,
        pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 2500 }] },
      }));
      const backlog = WEBSITE_BATCH + 5;
      await tdb.db.transaction(async (trx) => {
        for (let n = 0; n < backlog; n += 1) await enqueueWebsiteSync(trx, ctx, 'event.updated', event);
      });
      // No timer, no LISTEN, no wake: only the start-up pass runs.
      loops.push(startDeliveryLoop(ctx, { intervalMs: NEVER_BY_TIMER, listen: false }));
      const deadline = Date.now() + 10_000;
      while (Number((await tdb.db('website_sync_outbox').where({ status: 'DELIVERED' }).count({ n: '*' }).first())?.n) < backlog) {
        if (Date.now() > deadline) throw new Error('the start-up pass left website notifications undelivered');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(receiver.requests).toHaveLength(backlog);
    } finally {
      while (loops.length > 0) await loops.pop()?.stop();
      await receiver.close();
    }
  });
});

/**
 * A stand-in for the pool behind the listener, counting what it lends and gets back.
 * Each connection runs its queries one after another, as a pg client does; a LISTEN
 * fails while `listenFailures` lasts, or waits for `settleListen` when `holdListen` is set.
 */
function fakePool() {
  class FakeConnection extends EventEmitter {
    queries: string[] = [];
    private tail: Promise<unknown> = Promise.resolve();
    query(sql: string): Promise<unknown> {
      const run = async () => {
        this.queries.push(sql);
        if (!sql.startsWith('LISTEN')) return;
        if (pool.holdListen) {
          await new Promise<void>((resolve, reject) => (pool.settleListen = (error?: Error) => (error ? reject(error) : resolve())));
        } else if (pool.listenFailures > 0) {
          pool.listenFailures -= 1;
          throw new Error('LISTEN refused');
        }
      };
      const result = this.tail.then(run);
      this.tail = result.catch(() => undefined);
      return result;
    }
  }
  const pool = {
    listenFailures: 0,
    holdListen: false,
    settleListen: (_error?: Error): void => undefined,
    holdAcquire: false,
    settleAcquire: (): void => undefined,
    lent: [] as FakeConnection[],
    returned: [] as FakeConnection[],
    /** Lent and not given back. */
    get inUse() {
      return pool.lent.filter((c) => !pool.returned.includes(c)).length;
    },
    client: {
      async acquireConnection() {
        if (pool.holdAcquire) await new Promise<void>((resolve) => (pool.settleAcquire = resolve));
        const connection = new FakeConnection();
        pool.lent.push(connection);
        return connection;
      },
      async releaseConnection(connection: FakeConnection) {
        pool.returned.push(connection);
      },
    },
  };
  return pool;
}

describe('the outbox listener gives every pooled connection back', () => {
  const RECONNECT_MS = 5_000;
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const listen = (pool: ReturnType<typeof fakePool>, onNotify: () => void = () => undefined) =>
    listenForOutbox({ db: { client: pool.client } as unknown as Db, logger: context().logger }, onNotify);

  it('releases the connection each time LISTEN fails, and listens once it succeeds', async () => {
    const pool = fakePool();
    pool.listenFailures = 3;
    let notified = 0;
    const listener = listen(pool, () => (notified += 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(pool.lent).toHaveLength(1);
    expect(pool.inUse).toBe(0);
    await vi.advanceTimersByTimeAsync(3 * RECONNECT_MS);
    expect(pool.lent).toHaveLength(4);
    expect(pool.returned).toHaveLength(3);
    expect(new Set(pool.returned).size).toBe(3);
    // The fourth LISTEN succeeded: it holds exactly that one connection, and a notification on it wakes the loop.
    expect(notified).toBe(1);
    pool.lent[3]?.emit('notification', { channel: 'eventops_outbox' });
    expect(notified).toBe(2);
    await vi.advanceTimersByTimeAsync(10 * RECONNECT_MS);
    expect(pool.lent).toHaveLength(4);
    await listener.close();
    expect(pool.lent[3]?.queries).toEqual(['LISTEN eventops_outbox', 'UNLISTEN eventops_outbox']);
    expect(pool.returned).toHaveLength(4);
    expect(pool.inUse).toBe(0);
  });

  it('says it listens only while its LISTEN holds on a live connection, so the server wakes the loop itself in the gaps', async () => {
    const pool = fakePool();
    pool.listenFailures = 1;
    const listener = listen(pool);
    await vi.advanceTimersByTimeAsync(0);
    expect(listener.listening()).toBe(false);
    await vi.advanceTimersByTimeAsync(RECONNECT_MS);
    expect(listener.listening()).toBe(true);
    pool.lent[1]?.emit('end');
    expect(listener.listening()).toBe(false);
    await vi.advanceTimersByTimeAsync(RECONNECT_MS);
    expect(pool.lent).toHaveLength(3);
    expect(listener.listening()).toBe(true);
    await listener.close();
    expect(listener.listening()).toBe(false);
  });

  it('releases a connection lost while its LISTEN is in flight, once, and reconnects once', async () => {
    const pool = fakePool();
    pool.holdListen = true;
    const listener = listen(pool);
    await vi.advanceTimersByTimeAsync(0);
    const first = pool.lent[0];
    first?.emit('error', new Error('terminating connection'));
    pool.settleListen(new Error('Connection terminated unexpectedly'));
    await vi.advanceTimersByTimeAsync(0);
    expect(pool.returned).toEqual([first]);
    pool.holdListen = false;
    await vi.advanceTimersByTimeAsync(RECONNECT_MS);
    expect(pool.lent).toHaveLength(2);
    expect(pool.inUse).toBe(1);
    await listener.close();
    expect(pool.returned).toHaveLength(2);
    expect(pool.inUse).toBe(0);
  });

  it('releases the connection when closed while LISTEN is in flight, or while the connection is being acquired', async () => {
    const pool = fakePool();
    pool.holdListen = true;
    let notified = 0;
    const listener = listen(pool, () => (notified += 1));
    await vi.advanceTimersByTimeAsync(0);
    const closing = listener.close();
    pool.settleListen();
    await closing;
    await vi.advanceTimersByTimeAsync(10 * RECONNECT_MS);
    expect(pool.lent).toHaveLength(1);
    expect(pool.inUse).toBe(0);
    expect(pool.lent[0]?.queries.at(-1)).toBe('UNLISTEN eventops_outbox');
    expect(notified).toBe(0);

    const acquiring = fakePool();
    acquiring.holdAcquire = true;
    const other = listen(acquiring);
    await other.close();
    acquiring.settleAcquire();
    await vi.advanceTimersByTimeAsync(10 * RECONNECT_MS);
    expect(acquiring.lent).toHaveLength(1);
    expect(acquiring.inUse).toBe(0);
  });
});
