import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { cardPaymentStateOf } from '../../src/payments/card-payment-state.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('sweep-checkouts', () => {
  it('expires OPEN sessions past expiry keeping their payload for a late payment, leaves others alone, and is repeatable', async () => {
    const clock = new FixedClock(new Date('2026-11-22T01:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db);
    const past = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, { expires_at: new Date('2026-11-22T00:59:00Z') });
    const future = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, { expires_at: new Date('2026-11-22T01:30:00Z') });
    const done = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, {
      status: 'COMPLETED',
      expires_at: new Date('2026-11-22T00:10:00Z'),
    });

    const dry = await sweepExpiredCheckouts(ctx, { trigger: 'cli', dryRun: true });
    expect(dry).toMatchObject({ expired: 1, dryRun: true });
    expect(dry.wouldDo?.[0]).toContain(past.id);
    expect(dry.wouldDo?.[0]).toContain('(expired 2026-11-22 11:59 Australia/Sydney)');
    expect((await tdb.db('checkout_sessions').where({ id: past.id }).first()).status).toBe('OPEN');
    expect(await tdb.db('job_runs').count({ n: '*' }).first()).toEqual({ n: 0 });

    const first = await sweepExpiredCheckouts(ctx, { trigger: 'cli' });
    expect(first).toMatchObject({ job: 'sweep-checkouts', outcome: 'ok', expired: 1 });
    const rows = await tdb.db('checkout_sessions').select('id', 'status', 'payload_enc');
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(past.id)).toMatchObject({ status: 'EXPIRED' });
    expect(byId.get(past.id)?.payload_enc).not.toBeNull();
    expect(byId.get(future.id)).toMatchObject({ status: 'OPEN' });
    expect(byId.get(future.id)?.payload_enc).not.toBeNull();
    expect(byId.get(done.id)).toMatchObject({ status: 'COMPLETED' });

    const second = await sweepExpiredCheckouts(ctx, { trigger: 'http' });
    expect(second.expired).toBe(0);
    const runs = await tdb.db('job_runs').orderBy('id').select('job', 'trigger', 'outcome', 'summary', 'finished_at');
    expect(runs).toHaveLength(2);
    expect(runs[0]).toMatchObject({ job: 'sweep-checkouts', trigger: 'cli', outcome: 'ok', summary: { expired: 1, scrubbed: 0 } });
    expect(runs[1]).toMatchObject({ trigger: 'http', outcome: 'ok' });
    expect(runs[1].finished_at).not.toBeNull();
  });
  it('after days without a sweep, a session that expired before the redelivery window is expired and scrubbed in one pass; a recent one keeps its payload', async () => {
    const clock = new FixedClock(new Date('2026-11-22T01:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db);
    const longAgo = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, { expires_at: new Date('2026-11-18T01:00:00Z') });
    const recent = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, { expires_at: new Date('2026-11-21T12:00:00Z') });
    expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ expired: 2, scrubbed: 1 });

    const rows = new Map((await tdb.db('checkout_sessions').whereIn('id', [longAgo.id, recent.id])).map((r) => [r.id, r]));
    expect(rows.get(longAgo.id)).toMatchObject({ status: 'EXPIRED', payload_enc: null, scrubbed_at: clock.now() });
    expect(rows.get(recent.id)).toMatchObject({ status: 'EXPIRED', scrubbed_at: null });
    expect(rows.get(recent.id)?.payload_enc).not.toBeNull();
    // Both rows were last written by the same statement (the same transaction id): the old one was not written twice.
    const writtenBy = await tdb.db('checkout_sessions').whereIn('id', [longAgo.id, recent.id]).select(tdb.db.raw('xmin::text AS xid'));
    expect(new Set(writtenBy.map((row) => row.xid)).size).toBe(1);
    expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ expired: 0, scrubbed: 0 });
  });

  it('a checkout that never got its provider session (its request died while the provider opened it) is recorded unpaid at its expiry: no payment page was handed out, so the registration is not left "processing" for three days', async () => {
    const clock = new FixedClock(new Date('2026-11-22T01:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db);
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank' });
    const claimed = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, {
      registration_id: registration.id,
      payload_enc: null,
      provider_session_id: null,
      created_at: new Date('2026-11-22T00:28:00Z'),
      expires_at: new Date('2026-11-22T00:59:00Z'),
    });
    // Past its lease it was counted as no payment in flight already, though not yet as confirmed unpaid.
    expect(await cardPaymentStateOf(tdb.db, registration.id, clock.now())).toBe('none');

    expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ expired: 1, scrubbed: 1 });

    expect(await tdb.db('checkout_sessions').where({ id: claimed.id }).first()).toMatchObject({
      status: 'EXPIRED',
      scrubbed_at: clock.now(),
      unpaid_confirmed_at: clock.now(),
    });
    expect(await cardPaymentStateOf(tdb.db, registration.id, clock.now())).toBe('confirmed_unpaid');
  });
});

