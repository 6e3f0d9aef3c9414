import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import type { AppContext } from '../../src/context.js';
import { connectDb } from '../../src/db/connect.js';
import { AppError } from '../../src/errors.js';
import { loadPublicRegistration, payNowPageData } from '../../src/http/registration-view.js';
import { CardAmountTooSmallError } from '../../src/payments/card-minimum.js';
import { cardPaymentStateOf } from '../../src/payments/card-payment-state.js';
import { registrationUrl } from '../../src/payments/links.js';
import { NotPayableError, OPENING_LEASE_MS, payNowLines, startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import { priceRegistration, type AttendeeChoice } from '../../src/registrations/pricing.js';
import { insertRegistration } from '../../src/registrations/registrations.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer } from '../support/http.js';

const T0 = new Date('2026-11-22T00:00:00Z');
const AUTH_URL = 'https://events.example.org';
const EMAIL = 'bank.payer@example.org';
const PRICING: EventPricing = {
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000 },
  ],
};
const ATTENDEES: AttendeeChoice[] = [
  { name: 'Lee Payer', tier: 'adult' },
  { name: 'Ash Payer', tier: 'child' },
];

let tdb: TestDatabase;
let fake: FakeProvider;
let clock: FixedClock;
let ctx: AppContext;
beforeAll(async () => {
  tdb = await createTestDatabase();
  fake = await startFakeProvider({ webhookSecret: 'whsec_pay_now_test_secret' });
  clock = new FixedClock(T0);
  ctx = createTestContext({ db: tdb.db, clock, env: { ...fake.configEnv(), APP_CURRENCY: 'AUD', AUTH_URL } });
});
afterAll(async () => {
  expect(fake.refundCalls).toEqual([]);
  await fake.close();
  await tdb.drop();
});

/** A bank-transfer registration as the public page creates it (PENDING, priced without surcharge). */
async function bankRegistration(
  options: { event?: Record<string, unknown>; pricing?: EventPricing; status?: 'PENDING' | 'PAID' | 'CANCELLED' } = {},
): Promise<{ registrationId: string; eventId: string; slug: string; total: number }> {
  const pricing = options.pricing ?? PRICING;
  const event = await insertEvent(tdb.db, { online_payment: true, pricing: JSON.stringify(pricing), ...options.event });
  const priced = priceRegistration(pricing, { attendees: ATTENDEES, family: false });
  const { id } = await tdb.db.transaction((trx) =>
    insertRegistration(trx, ctx.cipher, {
      eventId: event.id,
      status: options.status ?? (priced.free ? 'PAID' : 'PENDING'),
      method: priced.free ? 'free' : 'bank',
      contact: { name: 'Lee Payer', email: EMAIL },
      attendees: ATTENDEES,
      family: false,
      priced,
      now: T0,
    }),
  );
  return { registrationId: id, eventId: event.id, slug: event.slug, total: priced.total };
}

function createCallsFor(registrationId: string) {
  return fake.sessionCreateCalls().filter((r) => (r.body.metadata as Record<string, string>).eventops_registration_id === registrationId);
}

async function notPayableReason(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(NotPayableError);
  expect((error as AppError).code).toBe('not_payable');
  return (error as NotPayableError).reason;
}

describe('startExistingRegistrationCheckout (pay-now)', () => {
  it('a PENDING non-free registration gets a provider session for what it owes, staged by registration id with no payload', async () => {
    const reg = await bankRegistration();
    const started = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    expect(started.reused).toBe(false);

    const calls = createCallsFor(reg.registrationId);
    expect(calls).toHaveLength(1);
    const call = calls[0] as NonNullable<(typeof calls)[number]>;
    const ours = { eventops_checkout_id: started.checkoutId, eventops_event_id: reg.eventId, eventops_registration_id: reg.registrationId };
    expect(call.body).toMatchObject({
      mode: 'payment',
      currency: 'aud',
      customer_email: EMAIL,
      client_reference_id: started.checkoutId,
      metadata: ours,
      payment_intent_data: { metadata: ours },
      success_url: `${AUTH_URL}/events/${reg.slug}/success?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: registrationUrl(ctx.config, reg.registrationId, 1),
      line_items: [
        { quantity: '1', price_data: { currency: 'aud', unit_amount: '12000', product_data: { name: 'Adult — Lee Payer' } } },
        { quantity: '1', price_data: { currency: 'aud', unit_amount: '6000', product_data: { name: 'Child — Ash Payer' } } },
      ],
    });
    expect(call.idempotencyKey).toBe(`paynow:${started.checkoutId}`);

    const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
    expect(row).toMatchObject({
      status: 'OPEN',
      registration_id: reg.registrationId,
      payload_enc: null,
      net_minor: 18000,
      surcharge_minor: 0,
      expires_at: new Date(T0.getTime() + 31 * 60_000),
      provider_url: started.redirectUrl,
    });
    expect(fake.sessions.get(row.provider_session_id)?.amount_total).toBe(18000);
    expect(await tdb.db('registrations').where({ id: reg.registrationId }).first()).toMatchObject({ status: 'PENDING' });
  });

  it('an event that passes the card fee on adds the fee at the current rate to what the registration owes, and snapshots it', async () => {
    const reg = await bankRegistration({ event: { pass_card_fee: true } });
    const started = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    const call = createCallsFor(reg.registrationId)[0];
    const names = (call?.body.line_items as Array<{ price_data: { product_data: { name: string }; unit_amount: string } }>).map((item) => [
      item.price_data.product_data.name,
      Number(item.price_data.unit_amount),
    ]);
    // Default rate 1.7% + 30: floor((18000 + 30) / 0.983) − 18000 = 341
    expect(names).toEqual([
      ['Adult — Lee Payer', 12000],
      ['Child — Ash Payer', 6000],
      ['Card processing fee', 341],
    ]);
    const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
    expect(row).toMatchObject({ net_minor: 18000, surcharge_minor: 341 });
    expect(fake.sessions.get(row.provider_session_id)?.amount_total).toBe(18341);
  });

  it('reads the card fee rate in its own transaction: with one pool connection per pay-now, it never waits for a second one', async () => {
    const reg = await bankRegistration({ event: { pass_card_fee: true } });
    // Every connection of the pool held by the transaction it opens, as when as many pay-nows arrive at once as the pool has.
    const onePerPayNow = connectDb({ url: tdb.url, poolMax: 1 });
    try {
      const started = await startExistingRegistrationCheckout({ ...ctx, db: onePerPayNow }, { registrationId: reg.registrationId });
      const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
      expect(row).toMatchObject({ status: 'OPEN', net_minor: 18000, surcharge_minor: 341 });
      expect(createCallsFor(reg.registrationId)).toHaveLength(1);
    } finally {
      await onePerPayNow.destroy();
    }
  }, 30_000);

  it('refuses PAID, CANCELLED, free and card-off registrations with not_payable and the reason, without calling the provider', async () => {
    const before = fake.requests.length;
    const paid = await bankRegistration({ status: 'PAID' });
    expect(await notPayableReason(startExistingRegistrationCheckout(ctx, { registrationId: paid.registrationId }))).toBe('paid');
    const cancelled = await bankRegistration({ status: 'CANCELLED' });
    expect(await notPayableReason(startExistingRegistrationCheckout(ctx, { registrationId: cancelled.registrationId }))).toBe('cancelled');
    const free = await bankRegistration({ pricing: { tiers: [{ id: 'adult', label: 'Guest', price: 0 }, { id: 'child', label: 'Child', price: 0 }] }, status: 'PENDING' });
    expect(await notPayableReason(startExistingRegistrationCheckout(ctx, { registrationId: free.registrationId }))).toBe('free');
    const cardOff = await bankRegistration({ event: { online_payment: false } });
    const error = startExistingRegistrationCheckout(ctx, { registrationId: cardOff.registrationId });
    expect(await notPayableReason(error)).toBe('card_unavailable');
    const noProvider = createTestContext({ db: tdb.db, env: { AUTH_URL } });
    const pending = await bankRegistration();
    expect(await notPayableReason(startExistingRegistrationCheckout(noProvider, { registrationId: pending.registrationId }))).toBe('card_unavailable');

    expect(fake.requests.length).toBe(before);
    const ids = [paid, cancelled, free, cardOff, pending].map((r) => r.registrationId);
    expect(await tdb.db('checkout_sessions').whereIn('registration_id', ids).first()).toBeUndefined();
  });

  it('the refusal message tells the registrant why', async () => {
    const paid = await bankRegistration({ status: 'PAID' });
    await expect(startExistingRegistrationCheckout(ctx, { registrationId: paid.registrationId })).rejects.toThrow('already paid');
  });

  it('opening pay-now again reuses the in-progress provider session instead of opening a second one', async () => {
    const reg = await bankRegistration();
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    const again = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    expect(again).toEqual({ checkoutId: first.checkoutId, redirectUrl: first.redirectUrl, reused: true });
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
    expect(await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId })).toHaveLength(1);
  });

  it('after an abandoned attempt expired, pay-now asks the provider before answering: the session is expired there, recorded unpaid, and a new one opened at once', async () => {
    const reg = await bankRegistration();
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    const firstSession = (await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).provider_session_id as string;
    const later = createTestContext({
      db: tdb.db,
      clock: new FixedClock(new Date(T0.getTime() + 32 * 60_000)),
      env: { ...fake.configEnv(), AUTH_URL },
    });

    const second = await startExistingRegistrationCheckout(later, { registrationId: reg.registrationId });

    expect(second.reused).toBe(false);
    expect(second.checkoutId).not.toBe(first.checkoutId);
    expect(fake.sessions.get(firstSession)?.status).toBe('expired');
    expect(createCallsFor(reg.registrationId)).toHaveLength(2);
    const rows = await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId }).orderBy('created_at');
    expect(rows.map((r: { status: string }) => r.status)).toEqual(['EXPIRED', 'OPEN']);
    expect(rows[0]).toMatchObject({ unpaid_confirmed_at: later.clock.now(), scrubbed_at: later.clock.now() });
  });

  it('an expired attempt the member did pay (its completion not yet delivered) is completed when pay-now asks: the registration is paid, and no second session is opened', async () => {
    const reg = await bankRegistration();
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    const firstSession = (await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).provider_session_id as string;
    fake.completeSession(firstSession, { amount_total: reg.total, amount_subtotal: reg.total });
    const later = createTestContext({ db: tdb.db, clock: new FixedClock(new Date(T0.getTime() + 32 * 60_000)), env: { ...fake.configEnv(), AUTH_URL } });

    expect(await notPayableReason(startExistingRegistrationCheckout(later, { registrationId: reg.registrationId }))).toBe('paid');
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
    expect(await tdb.db('registrations').where({ id: reg.registrationId }).first()).toMatchObject({ status: 'PAID', payment_method: 'card' });
  });

  it('with the provider out of reach an expired attempt stays uncertain: pay-now says a payment may be on its way and opens nothing', async () => {
    const reg = await bankRegistration();
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    const firstSession = (await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).provider_session_id as string;
    const later = createTestContext({ db: tdb.db, clock: new FixedClock(new Date(T0.getTime() + 32 * 60_000)), env: { ...fake.configEnv(), AUTH_URL } });
    fake.failPath(`/v1/checkout/sessions/${firstSession}`, 503);
    try {
      expect(await notPayableReason(startExistingRegistrationCheckout(later, { registrationId: reg.registrationId }))).toBe('processing');
    } finally {
      fake.failPath(`/v1/checkout/sessions/${firstSession}`, undefined);
    }
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
    expect(await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).toMatchObject({ status: 'OPEN', unpaid_confirmed_at: null });
    expect(fake.sessions.get(firstSession)?.status).toBe('open');
  });

  it('a live session that would now charge other than the pay-now page shows (the card fee rate was corrected meanwhile) is expired at the provider and a new one opened for what is shown', async () => {
    const reg = await bankRegistration({ event: { pass_card_fee: true } });
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    const firstSession = (await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).provider_session_id as string;
    expect(fake.sessions.get(firstSession)?.amount_total).toBe(18341);
    // The registrant came back from the provider's page without paying; the treasurer then sets the rate the provider
    // actually charges the church, 1.5% + 30, below the default the fee line was computed with.
    await setSetting(tdb.db, 'cardFee.percent', 1.5, T0);
    try {
      const registration = await loadPublicRegistration(tdb.db, reg.registrationId, T0);
      // floor((18000 + 30) / 0.985) − 18000 = 304
      const page = await payNowPageData(ctx, registration as NonNullable<typeof registration>, 'token');
      expect(page.lines.at(-1)).toEqual({ label: 'Card processing fee', amount: expect.stringContaining('3.04') });
      expect(page.total).toContain('183.04');

      const again = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });

      expect(again.reused).toBe(false);
      const rows = await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId }).orderBy('created_at');
      expect(rows).toHaveLength(2);
      expect(rows[0]).toMatchObject({ id: first.checkoutId, status: 'EXPIRED', payload_enc: null, unpaid_confirmed_at: T0 });
      expect(rows[1]).toMatchObject({ id: again.checkoutId, status: 'OPEN', net_minor: 18000, surcharge_minor: 304 });
      expect(fake.sessions.get(firstSession)?.status).toBe('expired');
      expect(fake.sessions.get(rows[1].provider_session_id)?.amount_total).toBe(18304);
      expect(fake.sessionExpireCalls().map((call) => call.path)).toContain(`/v1/checkout/sessions/${firstSession}/expire`);
    } finally {
      await tdb.db('app_settings').where({ key: 'cardFee.percent' }).delete();
    }
  });

  it('a live session with too little time left to pay in is not handed out again: it is expired at the provider and a new one opened, so the pages never say "processing" for a checkout that closed under the payer', async () => {
    const reg = await bankRegistration();
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    const firstSession = (await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).provider_session_id as string;
    const at = (minutes: number) => createTestContext({ db: tdb.db, clock: new FixedClock(new Date(T0.getTime() + minutes * 60_000)), env: { ...fake.configEnv(), AUTH_URL } });

    // Eleven minutes left: still handed out.
    expect(await startExistingRegistrationCheckout(at(20), { registrationId: reg.registrationId })).toMatchObject({ checkoutId: first.checkoutId, reused: true });

    // Two minutes left: closed at the provider and replaced by a session of its own 31 minutes.
    const late = at(29);
    const again = await startExistingRegistrationCheckout(late, { registrationId: reg.registrationId });

    expect(again.reused).toBe(false);
    expect(fake.sessions.get(firstSession)?.status).toBe('expired');
    const rows = await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId }).orderBy('created_at');
    expect(rows[0]).toMatchObject({ id: first.checkoutId, status: 'EXPIRED', unpaid_confirmed_at: late.clock.now() });
    expect(rows[1]).toMatchObject({ id: again.checkoutId, status: 'OPEN', expires_at: new Date(late.clock.now().getTime() + 31 * 60_000) });
    // Three minutes on, when the first session would have closed under the payer, the registration can still be paid.
    expect(await cardPaymentStateOf(tdb.db, reg.registrationId, new Date(T0.getTime() + 32 * 60_000))).toBe('resumable');
  });

  it('a live session the registrant paid meanwhile (its completion not yet delivered) is never replaced: the expiry is refused at the provider, and pay-now says processing', async () => {
    const reg = await bankRegistration({ event: { pass_card_fee: true } });
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    const firstSession = (await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).provider_session_id as string;
    fake.completeSession(firstSession);
    await setSetting(tdb.db, 'cardFee.percent', 1.5, T0);
    try {
      expect(await notPayableReason(startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId }))).toBe('processing');
      expect(createCallsFor(reg.registrationId)).toHaveLength(1);
      expect(await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).toMatchObject({ status: 'OPEN', unpaid_confirmed_at: null });
    } finally {
      await tdb.db('app_settings').where({ key: 'cardFee.percent' }).delete();
    }
  });

  it('a payment already in progress for the registration (PaymentIntent known, not settled) is not opened again', async () => {
    const reg = await bankRegistration();
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    await tdb.db('checkout_sessions').where({ id: first.checkoutId }).update({ payment_intent_id: 'pi_test_delayed' });
    expect(await notPayableReason(startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId }))).toBe('processing');
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
  });

  it('concurrent pay-now opens for one registration create exactly one provider session and one OPEN staging row', async () => {
    const reg = await bankRegistration();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId })),
    );
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
    expect(await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId, status: 'OPEN' })).toHaveLength(1);
    expect(results.filter((r) => !r.reused)).toHaveLength(1);
    expect(new Set(results.map((r) => r.redirectUrl)).size).toBe(1);
  });

  it('holds no database lock while the provider opens the session: the office can lock the registration meanwhile, and a second pay-now waits for the first session and reuses it', async () => {
    const reg = await bankRegistration();
    const slowProvider = fake.pauseNext('/v1/checkout/sessions');
    const first = startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    let second: Promise<unknown> = Promise.resolve();
    await slowProvider.reached;
    try {
      // The registration's row is not locked across the provider call (NOWAIT fails at once on a held lock).
      await tdb.db.transaction(async (trx) => {
        await trx.raw('SET LOCAL lock_timeout = 0');
        expect(await trx.raw('SELECT id FROM registrations WHERE id = ? FOR UPDATE NOWAIT', [reg.registrationId])).toMatchObject({ rowCount: 1 });
      });
      expect(await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId })).toEqual([
        expect.objectContaining({ status: 'OPEN', provider_session_id: null }),
      ]);
      // The row claimed for the session being opened says a payment may be on its way, so no bank details are shown.
      expect(await cardPaymentStateOf(tdb.db, reg.registrationId, T0)).toBe('in_flight');
    } finally {
      // A second pay-now meanwhile waits for that session rather than opening another.
      second = startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
      await new Promise((resolve) => setTimeout(resolve, 300));
      slowProvider.release();
    }
    const [opened, reused] = await Promise.all([first, second]);

    expect(opened.reused).toBe(false);
    expect(reused).toEqual({ checkoutId: opened.checkoutId, redirectUrl: opened.redirectUrl, reused: true });
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
    expect(await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId })).toEqual([
      expect.objectContaining({ id: opened.checkoutId, status: 'OPEN', provider_url: opened.redirectUrl }),
    ]);
  });

  it('a pay-now that dies while the provider opens its session never hands it out: after the 2-minute lease its claim is recorded unpaid and a new session opened; if it wakes up later it records nothing', async () => {
    const reg = await bankRegistration();
    const stuck = fake.pauseNext('/v1/checkout/sessions');
    const first = startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId }).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await stuck.reached;
    const [claim] = await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId });
    const later = createTestContext({ db: tdb.db, clock: new FixedClock(new Date(T0.getTime() + 3 * 60_000)), env: { ...fake.configEnv(), APP_CURRENCY: 'AUD', AUTH_URL } });

    const replaced = await startExistingRegistrationCheckout(later, { registrationId: reg.registrationId });
    stuck.release();
    const outcome = await first;

    expect(replaced.reused).toBe(false);
    expect(replaced.checkoutId).not.toBe(claim.id);
    expect(outcome).toEqual({ error: expect.objectContaining({ code: 'provider_unavailable' }) });
    const rows = await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId }).orderBy('created_at');
    expect(rows).toEqual([
      expect.objectContaining({ id: claim.id, status: 'EXPIRED', provider_session_id: null, unpaid_confirmed_at: later.clock.now() }),
      expect.objectContaining({ id: replaced.checkoutId, status: 'OPEN', provider_url: replaced.redirectUrl }),
    ]);
    expect(await startExistingRegistrationCheckout(later, { registrationId: reg.registrationId })).toMatchObject({ checkoutId: replaced.checkoutId, reused: true });
  });

  it('a claim that records its session at the last moment of its lease is not taken for abandoned by a click reading it just before: the click reuses that session', async () => {
    const reg = await bankRegistration();
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    const [row] = await tdb.db('checkout_sessions').where({ id: first.checkoutId });
    // As the first request left it just before recording: no session yet, its lease about to end.
    await tdb.db('checkout_sessions').where({ id: first.checkoutId }).update({ provider_session_id: null, provider_url: null });
    const later = createTestContext({ db: tdb.db, clock: new FixedClock(new Date(T0.getTime() + OPENING_LEASE_MS)), env: { ...fake.configEnv(), APP_CURRENCY: 'AUD', AUTH_URL } });
    // The first request records its session (row locked, not yet committed) while the second click decides.
    const recording = await tdb.db.transaction();
    await recording('checkout_sessions').where({ id: first.checkoutId }).update({ provider_session_id: row.provider_session_id, provider_url: row.provider_url });
    const second = startExistingRegistrationCheckout(later, { registrationId: reg.registrationId });
    // The click has read the row without a session and now waits on its lock.
    for (let waited = 0; ; waited += 20) {
      const blocked = await tdb.db.raw<{ rows: unknown[] }>(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE 'update "checkout_sessions"%'`);
      if (blocked.rows.length > 0) break;
      if (waited > 5_000) throw new Error('the second click never waited on the claim row');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await recording.commit();

    expect(await second).toEqual({ checkoutId: first.checkoutId, redirectUrl: first.redirectUrl, reused: true });
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
    expect(await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId })).toEqual([
      expect.objectContaining({ id: first.checkoutId, status: 'OPEN', provider_session_id: row.provider_session_id }),
    ]);
  });

  it('a pay-now whose provider call outlives its lease records nothing and hands nothing out even when no other request took over: past the lease its claim counts as abandoned', async () => {
    const reg = await bankRegistration();
    const slowClock = new FixedClock(T0);
    const slow = createTestContext({ db: tdb.db, clock: slowClock, env: { ...fake.configEnv(), APP_CURRENCY: 'AUD', AUTH_URL } });
    const stuck = fake.pauseNext('/v1/checkout/sessions');
    const first = startExistingRegistrationCheckout(slow, { registrationId: reg.registrationId }).then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );
    await stuck.reached;
    slowClock.advance(OPENING_LEASE_MS);
    stuck.release();

    expect(await first).toEqual({ error: expect.objectContaining({ code: 'provider_unavailable' }) });
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
    expect(await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId })).toEqual([
      expect.objectContaining({ status: 'OPEN', provider_session_id: null, provider_url: null }),
    ]);
    // The next click records the claim unpaid and opens a session of its own.
    const next = await startExistingRegistrationCheckout(slow, { registrationId: reg.registrationId });
    expect(next.reused).toBe(false);
    expect(createCallsFor(reg.registrationId)).toHaveLength(2);
  });

  it('a provider failure rolls the staging row back and leaves the registration PENDING', async () => {
    const reg = await bankRegistration();
    fake.failNext(1, 400);
    const error = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'provider_unavailable', httpStatus: 502 });
    expect(await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId }).first()).toBeUndefined();
    expect(await tdb.db('registrations').where({ id: reg.registrationId }).first()).toMatchObject({ status: 'PENDING' });
  });

  it('an unknown registration is not_found', async () => {
    await expect(startExistingRegistrationCheckout(ctx, { registrationId: '00000000-0000-4000-8000-000000000000' })).rejects.toMatchObject({
      code: 'not_found',
    });
  });
});

describe('pay-now below the card provider\'s minimum charge (AUD: $0.50)', () => {
  const CHEAP: EventPricing = {
    tiers: [
      { id: 'adult', label: 'Adult', price: 20 },
      { id: 'child', label: 'Child', price: 10 },
    ],
  };

  it('a balance whose card total is below the minimum is refused before a session is claimed or opened, saying the minimum and bank transfer', async () => {
    const reg = await bankRegistration({ pricing: CHEAP });
    const error = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CardAmountTooSmallError);
    expect(error).toMatchObject({
      code: 'card_amount_too_small',
      httpStatus: 409,
      amountMinor: 30,
      minimumMinor: 50,
      message: 'Card payment needs at least $0.50, and this registration comes to $0.30 by card. Please pay by bank transfer, using the details on your registration page.',
    });
    expect(createCallsFor(reg.registrationId)).toEqual([]);
    expect(await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId })).toEqual([]);
    expect(await tdb.db('registrations').where({ id: reg.registrationId }).first()).toMatchObject({ status: 'PENDING' });
  });

  it('the card fee counts: a balance of $0.20 that the default fee (1.7% + 30) brings to $0.50 opens its session', async () => {
    const reg = await bankRegistration({ pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 10 }, { id: 'child', label: 'Child', price: 10 }] }, event: { pass_card_fee: true } });
    const started = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
    expect(started.reused).toBe(false);
    expect(await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first('net_minor', 'surcharge_minor')).toEqual({ net_minor: 20, surcharge_minor: 30 });
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
  });

  it('the provider\'s own amount_too_small is the same refusal (no minimum named), never provider_unavailable, and its claimed row is removed', async () => {
    const reg = await bankRegistration();
    fake.setMinimumCharge(20_000);
    try {
      const error = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CardAmountTooSmallError);
      expect(error).toMatchObject({
        code: 'card_amount_too_small',
        httpStatus: 409,
        minimumMinor: undefined,
        message:
          'This registration comes to $180.00 by card, which is less than our card payment provider can charge in one payment. Please pay by bank transfer, using the details on your registration page.',
      });
    } finally {
      fake.setMinimumCharge(50);
    }
    expect(createCallsFor(reg.registrationId)).toHaveLength(1);
    expect(await tdb.db('checkout_sessions').where({ registration_id: reg.registrationId })).toEqual([]);
  });
});

describe('pay-now end to end with the local provider', () => {
  it('paying on the hosted page turns the PENDING registration PAID through our webhook, with the PaymentIntent recorded', async () => {
    const server = await startTestServer(ctx);
    try {
      fake.setWebhookUrl(`${server.url}/api/stripe/webhook`);
      const reg = await bankRegistration();
      const started = await startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId });
      const pay = await fetch(started.redirectUrl, { method: 'POST', redirect: 'manual' });
      expect(pay.status).toBe(303);
      expect(fake.deliveries.at(-1)).toMatchObject({ type: 'checkout.session.completed', status: 200 });
      const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
      const paymentIntent = fake.sessions.get(row.provider_session_id)?.payment_intent;
      expect(row).toMatchObject({ status: 'COMPLETED', payment_intent_id: paymentIntent });
      expect(await tdb.db('registrations').where({ id: reg.registrationId }).first()).toMatchObject({
        status: 'PAID',
        payment_intent_id: paymentIntent,
      });
      expect(await notPayableReason(startExistingRegistrationCheckout(ctx, { registrationId: reg.registrationId }))).toBe('paid');
    } finally {
      await server.close();
    }
  });
});

describe('payNowLines', () => {
  it('keeps the stored lines when they add up to what is owed, dropping an old fee line and adding the current one', () => {
    const stored = [
      { label: 'Adult — A', amount: 100, kind: 'ticket' },
      { label: 'Card processing fee', amount: 9, kind: 'fee' },
    ];
    expect(payNowLines(stored, 100, 5)).toEqual([
      { label: 'Adult — A', amount: 100, kind: 'ticket' },
      { label: 'Card processing fee', amount: 5, kind: 'fee' },
    ]);
  });

  it('collapses lines that do not add up to what is owed into one "Registration" line', () => {
    expect(payNowLines([{ label: 'Adult', amount: 12000 }], 11000, 0)).toEqual([{ label: 'Registration', amount: 11000, kind: 'registration' }]);
  });
});
