import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { FixedClock, type Clock } from '../../src/clock.js';
import { silentLogger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/create.js';
import { countPendingMail, deliverQueuedMail, enqueueMail, QUEUED_MAIL_MAX_ATTEMPTS } from '../../src/mail/queue.js';
import type { Mailer, MailMessage } from '../../src/mail/types.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { TEST_KEYS, testConfig } from '../support/env.js';
import { startMailApiServer, type MailApiServer } from '../support/mail-api-server.js';
import { startSmtpSink, type SmtpSink } from '../support/smtp-sink.js';

let tdb: TestDatabase;
let sink: SmtpSink;
let smtpMailer: Mailer;
let api: MailApiServer;
let apiMailer: Mailer;

beforeAll(async () => {
  tdb = await createTestDatabase();
  sink = await startSmtpSink({
    rejectRecipient: (address) => address.startsWith('nobody'),
    // The connection is closed at RCPT TO, before any content: a send that failed for now, to be retried.
    dropOnRecipient: (address) => address.startsWith('hangup'),
  });
  smtpMailer = await createMailer(testConfig(sink.configEnv()), silentLogger(), { timeoutMs: 2_000 });
  api = await startMailApiServer();
  apiMailer = await createMailer(testConfig(api.configEnv()), silentLogger(), { timeoutMs: 2_000 });
});
afterAll(async () => {
  await smtpMailer.close();
  await sink.close();
  await api.close();
  await tdb.drop();
});
beforeEach(async () => {
  sink.clear();
  api.requests.length = 0;
  await tdb.db('queued_mail').delete();
});

const t0 = new Date('2026-11-22T10:00:00Z');
const minute = 60_000;

function context(mailer: Mailer, clock: Clock = new FixedClock(t0), env?: Record<string, string | undefined>) {
  return createTestContext({ db: tdb.db, clock, mailer, env });
}

/** Keys v1 and v2, writing with v2: a process already switched over in a key rotation. */
const rotatedKeys = { ENCRYPTION_KEY_V1: TEST_KEYS.v1, ENCRYPTION_KEY_V2: TEST_KEYS.v2, ENCRYPTION_KEY_ID: 'v2' };

const receipt = (to: string, subject = 'Your receipt'): MailMessage => ({
  to: [to],
  subject,
  html: '<p>Paid in full</p>',
  text: 'Paid in full',
  attachments: [{ filename: 'receipt.txt', content: Buffer.from('paid'), contentType: 'text/plain' }],
});

describe('queued mail', () => {
  it('enqueued mail is delivered and marked SENT', async () => {
    const ctx = context(smtpMailer);
    const id = await enqueueMail(tdb.db, ctx.cipher, { kind: 'receipt', message: receipt('alice@example.org') }, t0);
    expect(await countPendingMail(tdb.db)).toBe(1);

    expect(await deliverQueuedMail(ctx, { limit: 10 })).toEqual({ sent: 1, retried: 0, failed: 0 });

    const [received] = await sink.waitFor(1);
    expect(received?.envelope.to).toEqual(['alice@example.org']);
    expect(received?.text.trim()).toBe('Paid in full');
    expect(received?.attachments[0]?.content.toString()).toBe('paid');
    const row = await tdb.db('queued_mail').where({ id }).first();
    expect(row).toMatchObject({ status: 'SENT', attempts: 1, sent_at: t0, claimed_until: null });
    expect(await countPendingMail(tdb.db)).toBe(0);
  });

  it('stores the message encrypted: no address or subject in plain text', async () => {
    const ctx = context(smtpMailer);
    await tdb.db.transaction((trx) =>
      enqueueMail(trx, ctx.cipher, { kind: 'receipt', message: receipt('carol.secret@example.org', 'Receipt for Carol') }, t0),
    );
    const row = await tdb.db('queued_mail').first();
    expect(row.kind).toBe('receipt');
    expect(row.message_enc).not.toContain('carol');
    expect(row.message_enc).not.toContain('Receipt');
    expect(ctx.cipher.decrypt(row.message_enc)).toContain('carol.secret@example.org');
  });

  it('mail enqueued in a transaction that rolls back is never sent', async () => {
    const ctx = context(smtpMailer);
    await tdb.db
      .transaction(async (trx) => {
        await enqueueMail(trx, ctx.cipher, { kind: 'receipt', message: receipt('alice@example.org') }, t0);
        throw new Error('payment handling failed');
      })
      .catch(() => undefined);
    expect(await countPendingMail(tdb.db)).toBe(0);
  });

  it('a failing server schedules a retry with backoff and the same idempotency key, then it is sent', async () => {
    const clock = new FixedClock(t0);
    const ctx = context(apiMailer, clock);
    const id = await enqueueMail(tdb.db, ctx.cipher, { kind: 'alert', message: receipt('alice@example.org') }, t0);
    api.failNext(2, 500);

    expect(await deliverQueuedMail(ctx)).toEqual({ sent: 0, retried: 1, failed: 0 });
    let row = await tdb.db('queued_mail').where({ id }).first();
    expect(row).toMatchObject({ status: 'PENDING', attempts: 1, claimed_until: null });
    expect(row.next_attempt_at).toEqual(new Date(t0.getTime() + minute));
    expect(row.last_error).toContain('500');
    expect(row.last_error).not.toContain('@');

    // Not due yet: nothing is sent.
    expect(await deliverQueuedMail(ctx)).toEqual({ sent: 0, retried: 0, failed: 0 });

    clock.advance(minute);
    expect(await deliverQueuedMail(ctx)).toEqual({ sent: 0, retried: 1, failed: 0 });
    row = await tdb.db('queued_mail').where({ id }).first();
    expect(row.attempts).toBe(2);
    expect(row.next_attempt_at).toEqual(new Date(t0.getTime() + 3 * minute));

    clock.advance(2 * minute);
    expect(await deliverQueuedMail(ctx)).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect(await tdb.db('queued_mail').where({ id }).first()).toMatchObject({ status: 'SENT', attempts: 3 });
    const keys = api.requests.map((r) => r.idempotencyKey);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBeTruthy();
  });

  it(`after ${QUEUED_MAIL_MAX_ATTEMPTS} attempts the mail is marked FAILED`, async () => {
    const ctx = context(apiMailer);
    const id = await enqueueMail(tdb.db, ctx.cipher, { kind: 'alert', message: receipt('alice@example.org') }, t0);
    await tdb.db('queued_mail').where({ id }).update({ attempts: QUEUED_MAIL_MAX_ATTEMPTS - 1 });
    api.failNext(1, 429);
    expect(await deliverQueuedMail(ctx)).toEqual({ sent: 0, retried: 0, failed: 1 });
    expect(await tdb.db('queued_mail').where({ id }).first()).toMatchObject({ status: 'FAILED', attempts: QUEUED_MAIL_MAX_ATTEMPTS });
  });

  it('mail under a key this server does not have yet (mid-rotation) waits for a server that has it, instead of failing', async () => {
    const clock = new FixedClock(t0);
    // A command already running with the new keys queues a receipt under v2; the server still has only v1.
    const rotated = context(smtpMailer, clock, rotatedKeys);
    const stale = context(smtpMailer, clock);
    const id = await enqueueMail(tdb.db, rotated.cipher, { kind: 'receipt', message: receipt('alice@example.org') }, t0);
    expect(rotated.cipher.versionOf((await tdb.db('queued_mail').where({ id }).first()).message_enc)).toBe('v2');

    expect(await deliverQueuedMail(stale)).toEqual({ sent: 0, retried: 1, failed: 0 });
    const row = await tdb.db('queued_mail').where({ id }).first();
    expect(row).toMatchObject({ status: 'PENDING', attempts: 1, claimed_until: null });
    expect(row.next_attempt_at).toEqual(new Date(t0.getTime() + minute));
    expect(row.last_error).toContain('v2');
    expect(row.last_error).toContain('ENCRYPTION_KEY_V2');
    expect(sink.messages).toHaveLength(0);

    // The server restarted with the new keys sends it once its backoff has passed.
    clock.advance(minute);
    expect(await deliverQueuedMail(rotated)).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect(await tdb.db('queued_mail').where({ id }).first()).toMatchObject({ status: 'SENT', attempts: 2, last_error: null });
    await sink.waitFor(1);
    expect(sink.messages.map((m) => m.envelope.to[0])).toEqual(['alice@example.org']);
  });

  it(`mail under a missing key is FAILED after ${QUEUED_MAIL_MAX_ATTEMPTS} attempts, naming the key; mail that does not decrypt under a known key fails at once`, async () => {
    const rotated = context(smtpMailer, new FixedClock(t0), rotatedKeys);
    const stale = context(smtpMailer);
    const missingKey = await enqueueMail(tdb.db, rotated.cipher, { kind: 'receipt', message: receipt('alice@example.org') }, t0);
    await tdb.db('queued_mail').where({ id: missingKey }).update({ attempts: QUEUED_MAIL_MAX_ATTEMPTS - 1 });
    // Written under v1, then damaged: no restart makes it readable.
    const damaged = await enqueueMail(tdb.db, stale.cipher, { kind: 'receipt', message: receipt('bob@example.org') }, t0);
    const stored = (await tdb.db('queued_mail').where({ id: damaged }).first()).message_enc as string;
    const parts = stored.split(':');
    parts[3] = Buffer.from(Buffer.from(parts[3] ?? '', 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64');
    await tdb.db('queued_mail').where({ id: damaged }).update({ message_enc: parts.join(':') });

    expect(await deliverQueuedMail(stale)).toEqual({ sent: 0, retried: 0, failed: 2 });
    const failed = await tdb.db('queued_mail').where({ id: missingKey }).first();
    expect(failed).toMatchObject({ status: 'FAILED', attempts: QUEUED_MAIL_MAX_ATTEMPTS });
    expect(failed.last_error).toContain('ENCRYPTION_KEY_V2');
    const unreadable = await tdb.db('queued_mail').where({ id: damaged }).first();
    expect(unreadable).toMatchObject({ status: 'FAILED', attempts: 1 });
    expect(unreadable.last_error).toMatch(/^unreadable: .*wrong key or tampered data/);
    expect(sink.messages).toHaveLength(0);
  });

  it('a permanently refused recipient fails at once, with no address in last_error', async () => {
    const ctx = context(smtpMailer);
    const id = await enqueueMail(tdb.db, ctx.cipher, { kind: 'receipt', message: receipt('nobody@example.org') }, t0);
    expect(await deliverQueuedMail(ctx)).toEqual({ sent: 0, retried: 0, failed: 1 });
    const row = await tdb.db('queued_mail').where({ id }).first();
    expect(row.status).toBe('FAILED');
    expect(row.last_error).toContain('550');
    expect(row.last_error).not.toContain('nobody');
  });

  it('two concurrent deliveries send each message exactly once', async () => {
    const ctx = context(smtpMailer);
    const subjects = Array.from({ length: 12 }, (_, i) => `Receipt ${i}`);
    for (const subject of subjects) {
      await enqueueMail(tdb.db, ctx.cipher, { kind: 'receipt', message: receipt('alice@example.org', subject) }, t0);
    }
    const [a, b] = await Promise.all([deliverQueuedMail(ctx, { limit: 50 }), deliverQueuedMail(ctx, { limit: 50 })]);
    expect((a?.sent ?? 0) + (b?.sent ?? 0)).toBe(12);
    await sink.waitFor(12);
    expect(sink.messages.map((m) => m.subject).sort()).toEqual([...subjects].sort());
    expect(await tdb.db('queued_mail').where({ status: 'SENT', attempts: 1 }).count<{ count: number }[]>({ count: '*' })).toEqual([{ count: 12 }]);
  });

  it('a run against a slow mail server starts no send late in its claim and hands the rest back, so no message is still being sent when another run may take it', async () => {
    const clock = new FixedClock(t0);
    // Each send takes 20 seconds of the clock.
    const slow: Mailer = {
      kind: 'smtp',
      close: async () => undefined,
      async send(message: MailMessage) {
        clock.advance(20_000);
        return smtpMailer.send(message);
      },
    };
    const ctx = context(slow, clock);
    for (let i = 0; i < 50; i++) await enqueueMail(tdb.db, ctx.cipher, { kind: 'receipt', message: receipt(`slow${i}@example.org`) }, t0);

    const first = await deliverQueuedMail(ctx, { limit: 50 });

    // Sends start only in the first three of the claim's five minutes.
    expect(first.sent).toBeGreaterThan(0);
    expect(first.sent).toBeLessThan(12);
    expect(sink.messages).toHaveLength(first.sent);
    const handedBack = await tdb.db('queued_mail').where({ status: 'PENDING' });
    expect(handedBack).toHaveLength(50 - first.sent);
    for (const row of handedBack) expect(row).toMatchObject({ claimed_until: null, attempts: 0 });

    // Later runs send the rest, each message once.
    while ((await countPendingMail(tdb.db)) > 0) await deliverQueuedMail(ctx, { limit: 50 });
    expect(sink.messages).toHaveLength(50);
    expect(new Set(sink.messages.map((m) => m.envelope.to[0])).size).toBe(50);
  });

  it('a claim held by another run is skipped until it expires by the database clock', async () => {
    const clock = new FixedClock(t0);
    const ctx = context(smtpMailer, clock);
    const id = await enqueueMail(tdb.db, ctx.cipher, { kind: 'receipt', message: receipt('alice@example.org') }, t0);
    await tdb.db.raw(`UPDATE queued_mail SET claimed_until = now() + interval '5 minutes', attempts = 1 WHERE id = ?`, [id]);
    expect(await deliverQueuedMail(ctx)).toEqual({ sent: 0, retried: 0, failed: 0 });
    // The other run crashed: its claim ran out.
    await tdb.db.raw(`UPDATE queued_mail SET claimed_until = now() - interval '1 second' WHERE id = ?`, [id]);
    expect(await deliverQueuedMail(ctx)).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect(await tdb.db('queued_mail').where({ id }).first()).toMatchObject({ status: 'SENT', attempts: 2 });
  });

  it("a server whose clock runs ahead does not take a message another server is still sending: claims run out by the database's clock", async () => {
    const behind = context(smtpMailer, new FixedClock(new Date()));
    const ahead = context(smtpMailer, new FixedClock(new Date(Date.now() + 10 * minute)));
    const id = await enqueueMail(tdb.db, behind.cipher, { kind: 'receipt', message: receipt('alice@example.org') }, t0);
    // The first server claims the message and is still sending it (its send never finishes here).
    let sending!: () => void;
    const stuck: Mailer = { kind: 'smtp', close: async () => undefined, send: () => new Promise((resolve) => { sending = () => resolve({ accepted: [], rejected: [] }); }) };
    const first = deliverQueuedMail(context(stuck, new FixedClock(new Date())));
    await vi.waitFor(async () => expect(await tdb.db('queued_mail').where({ id }).first()).toMatchObject({ attempts: 1 }));

    expect(await deliverQueuedMail(ahead)).toEqual({ sent: 0, retried: 0, failed: 0 });
    expect(await deliverQueuedMail(behind)).toEqual({ sent: 0, retried: 0, failed: 0 });
    sending();
    expect(await first).toEqual({ sent: 1, retried: 0, failed: 0 });
    expect(sink.messages).toHaveLength(0);
    expect(await tdb.db('queued_mail').where({ id }).first()).toMatchObject({ status: 'SENT', attempts: 1 });
  });
  it('a pass marks its sent mail SENT a batch at a time, each message with the time it was sent', async () => {
    let tick = 0;
    const ctx = context(smtpMailer, { now: () => new Date(t0.getTime() + 1_000 * tick++) });
    for (let i = 0; i < 30; i++) {
      await enqueueMail(tdb.db, ctx.cipher, { kind: 'receipt', message: receipt(`member${i}@example.org`, `Receipt ${i}`) }, t0);
    }
    const marking: string[] = [];
    const onQuery = (query: { sql: string }) => {
      if (/^update "?queued_mail"?(?: q)? set "?status/i.test(query.sql.trim())) marking.push(query.sql);
    };
    tdb.db.on('query', onQuery);
    try {
      expect(await deliverQueuedMail(ctx, { limit: 50 })).toEqual({ sent: 30, retried: 0, failed: 0 });
    } finally {
      tdb.db.off('query', onQuery);
    }

    const rows = await tdb.db('queued_mail').select('status', 'sent_at', 'claimed_until');
    expect(rows.every((row) => row.status === 'SENT' && row.claimed_until === null)).toBe(true);
    expect(new Set(rows.map((row) => (row.sent_at as Date).getTime())).size).toBe(30);
    // 30 messages, 25 to a statement: two statements instead of thirty.
    expect(marking).toHaveLength(2);
    await sink.waitFor(30);
  });

  it('a retry that cannot be recorded leaves only that message claimed: the sends under way are marked SENT, the rest is handed back, and nothing is sent twice', async () => {
    const clock = new FixedClock(t0);
    const ctx = context(smtpMailer, clock);
    // The first message's send fails for now, and the database refuses to record its retry.
    const refused = await enqueueMail(tdb.db, ctx.cipher, { kind: 'receipt', message: receipt('hangup@example.org') }, t0);
    const others: number[] = [];
    for (let i = 0; i < 12; i++) {
      others.push(await enqueueMail(tdb.db, ctx.cipher, { kind: 'receipt', message: receipt(`member${i}@example.org`, `Receipt ${i}`) }, t0));
    }
    await refuseOutcomeOf(refused);
    try {
      // The run still fails, once its bookkeeping is settled.
      await expect(deliverQueuedMail(ctx, { limit: 50 })).rejects.toThrow(`outcome of queued mail ${refused} refused`);
    } finally {
      await tdb.db.raw('DROP TRIGGER IF EXISTS refuse_outcome ON queued_mail');
    }
    // What the run marked SENT has reached the sink (parsed), and sends still under way when it answered (there
    // should be none) have time to arrive.
    const markedSent = await tdb.db('queued_mail').whereIn('id', others).where({ status: 'SENT' }).count<Array<{ count: number }>>({ count: '*' });
    await sink.waitFor(Number(markedSent[0]?.count ?? 0));
    await settled(() => sink.messages.length);

    // Only the refused message is still claimed; every message that reached the server is SENT.
    const stillClaimed = await tdb.db('queued_mail').where({ id: refused }).first();
    expect(stillClaimed).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(await claimLiveFor(refused)).toBeGreaterThan(4 * minute);
    const firstRun = sink.messages.map((m) => m.envelope.to[0]);
    expect(firstRun.length).toBeGreaterThan(0);
    const rows = await tdb.db('queued_mail').whereIn('id', others).orderBy('id');
    for (const [i, row] of rows.entries()) {
      if (firstRun.includes(`member${i}@example.org`)) expect(row).toMatchObject({ status: 'SENT', claimed_until: null });
      // Not reached: handed back, its attempt not counted.
      else expect(row).toMatchObject({ status: 'PENDING', claimed_until: null, attempts: 0 });
    }

    // Once the refused message's claim has expired, the next run sends what was handed back and retries it; nothing goes out twice.
    await tdb.db.raw(`UPDATE queued_mail SET claimed_until = now() - interval '1 second' WHERE id = ?`, [refused]);
    expect(await deliverQueuedMail(ctx, { limit: 50 })).toEqual({ sent: 12 - firstRun.length, retried: 1, failed: 0 });
    await sink.waitFor(12);
    await settled(() => sink.messages.length);
    const addresses = sink.messages.map((m) => m.envelope.to[0]);
    expect(addresses).toHaveLength(12);
    expect(new Set(addresses).size).toBe(12);
    expect(await tdb.db('queued_mail').whereIn('id', others).where({ status: 'SENT' }).count<{ count: number }[]>({ count: '*' })).toEqual([{ count: 12 }]);
    expect(await tdb.db('queued_mail').where({ id: refused }).first()).toMatchObject({ status: 'PENDING', attempts: 2, claimed_until: null });
  });
});

/** How long the message's claim still runs, by the database's clock. */
async function claimLiveFor(id: number): Promise<number> {
  const { rows } = await tdb.db.raw<{ rows: Array<{ ms: number }> }>(
    `SELECT extract(epoch FROM claimed_until - now()) * 1000 AS ms FROM queued_mail WHERE id = ?`,
    [id],
  );
  return Number(rows[0]?.ms);
}

/** Makes the database refuse to record a retry or FAILED (any change of last_error) for this queued mail. */
async function refuseOutcomeOf(id: number): Promise<void> {
  await tdb.db.raw(`
    CREATE OR REPLACE FUNCTION refuse_outcome() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.id = TG_ARGV[0]::bigint AND NEW.last_error IS DISTINCT FROM OLD.last_error THEN
        RAISE EXCEPTION 'outcome of queued mail % refused', NEW.id;
      END IF;
      RETURN NEW;
    END $$`);
  await tdb.db.raw('DROP TRIGGER IF EXISTS refuse_outcome ON queued_mail');
  await tdb.db.raw(`CREATE TRIGGER refuse_outcome BEFORE UPDATE ON queued_mail FOR EACH ROW EXECUTE FUNCTION refuse_outcome('${Number(id)}')`);
}

/** Resolves once count() has not changed for 300 ms. */
async function settled(count: () => number): Promise<void> {
  let last = count();
  let stableSince = Date.now();
  while (Date.now() - stableSince < 300) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const now = count();
    if (now !== last) {
      last = now;
      stableSince = Date.now();
    }
  }
}
