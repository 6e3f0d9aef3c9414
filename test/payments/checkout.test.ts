import { localDay } from '../../src/local-time.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import type { AppContext } from '../../src/context.js';
import { AppError } from '../../src/errors.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { priceRegistration } from '../../src/registrations/pricing.js';
import { PROVIDER_API_VERSION } from '../../src/payments/provider.js';
import { decryptStagedRegistration } from '../../src/payments/staging.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer } from '../support/http.js';

const T0 = new Date('2026-11-22T00:00:00Z');
const EXPIRES = new Date(T0.getTime() + 31 * 60_000);
const AUTH_URL = 'https://events.example.org';
const CONTACT = { name: 'Jo Payer', email: 'jo.payer@example.org', mobile: '0400 000 000' };
const TIERS: EventPricing['tiers'] = [
  { id: 'adult', label: 'Adult', price: 12000 },
  { id: 'child', label: 'Child', price: 6000 },
];
const FAMILY = [
  { name: 'Jo Payer', tier: 'adult' },
  { name: 'Sam Payer', tier: 'adult' },
  { name: 'Kim Payer', tier: 'child' },
];

let tdb: TestDatabase;
let fake: FakeProvider;
let ctx: AppContext;
beforeAll(async () => {
  tdb = await createTestDatabase();
  fake = await startFakeProvider({ webhookSecret: 'whsec_checkout_test_secret' });
  ctx = createTestContext({
    db: tdb.db,
    env: { ...fake.configEnv(), APP_CURRENCY: 'AUD', AUTH_URL, APP_URL: 'https://app.example.net' },
  });
});
afterAll(async () => {
  expect(fake.refundCalls).toEqual([]);
  await fake.close();
  await tdb.drop();
});

async function cardEvent(overrides: Record<string, unknown> = {}, pricing: EventPricing = { tiers: TIERS }): Promise<EventRecord> {
  const { slug } = await insertEvent(tdb.db, { online_payment: true, pricing: JSON.stringify(pricing), ...overrides });
  return (await getEventBySlug(tdb.db, slug)) as EventRecord;
}

interface LineItemParam {
  quantity: string;
  price_data: { currency: string; unit_amount: string; product_data: { name: string } };
}

function createCallFor(checkoutId: string) {
  const calls = fake.sessionCreateCalls().filter((r) => (r.body.metadata as Record<string, string>).eventops_checkout_id === checkoutId);
  expect(calls).toHaveLength(1);
  return calls[0] as NonNullable<(typeof calls)[number]>;
}

function lineItemsOf(body: Record<string, unknown>): Array<{ name: string; amount: number; quantity: number; currency: string }> {
  return (body.line_items as LineItemParam[]).map((item) => ({
    name: item.price_data.product_data.name,
    amount: Number(item.price_data.unit_amount),
    quantity: Number(item.quantity),
    currency: item.price_data.currency,
  }));
}

async function expectAppError(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
  return error as AppError;
}

describe('startEventCheckout', () => {
  it('opens one provider session whose line items are the priced lines, in APP_CURRENCY, for 31 minutes, with our ids in both metadata', async () => {
    const event = await cardEvent();
    const priced = priceRegistration(event.pricing, { attendees: FAMILY, family: false });

    const started = await startEventCheckout(ctx, { event, contact: CONTACT, attendees: FAMILY, family: false });

    const call = createCallFor(started.checkoutId);
    expect(lineItemsOf(call.body)).toEqual(
      priced.lines.map((line) => ({ name: line.label, amount: line.amount, quantity: 1, currency: 'aud' })),
    );
    expect(lineItemsOf(call.body).map((l) => l.name)).toEqual(['Adult — Jo Payer', 'Adult — Sam Payer', 'Child — Kim Payer']);
    const ours = { eventops_checkout_id: started.checkoutId, eventops_event_id: event.id };
    expect(call.body).toMatchObject({
      mode: 'payment',
      currency: 'aud',
      expires_at: String(EXPIRES.getTime() / 1000),
      customer_email: CONTACT.email,
      client_reference_id: started.checkoutId,
      metadata: ours,
      payment_intent_data: { metadata: ours },
    });
    expect(call.idempotencyKey).toBe(`checkout:${started.checkoutId}`);
    expect(call.apiVersion).toBe(PROVIDER_API_VERSION);

    const session = fake.sessions.get(started.redirectUrl.split('/').at(-1) as string);
    expect(session).toMatchObject({ amount_total: 30000, url: started.redirectUrl });
    expect(session?.amount_total).toBe(priced.net + priced.surcharge);
  });

  it('builds the success and cancel URLs from AUTH_URL even when APP_URL differs, and from APP_URL when AUTH_URL is unset', async () => {
    const event = await cardEvent();
    const started = await startEventCheckout(ctx, { event, contact: CONTACT, attendees: FAMILY.slice(0, 1), family: false });
    expect(createCallFor(started.checkoutId).body).toMatchObject({
      success_url: `${AUTH_URL}/events/${event.slug}/success?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `${AUTH_URL}/events/${event.slug}?checkout=cancelled&ref=${started.checkoutId}`,
    });

    const appUrlOnly = createTestContext({
      db: tdb.db,
      env: { ...fake.configEnv(), AUTH_URL: undefined, APP_URL: 'https://app.example.net' },
    });
    const other = await startEventCheckout(appUrlOnly, { event, contact: CONTACT, attendees: FAMILY.slice(0, 1), family: false });
    expect(createCallFor(other.checkoutId).body).toMatchObject({
      success_url: `https://app.example.net/events/${event.slug}/success?session_id={CHECKOUT_SESSION_ID}`,
      cancel_url: `https://app.example.net/events/${event.slug}?checkout=cancelled&ref=${other.checkoutId}`,
    });
  });

  it('stages an OPEN row with the encrypted priced payload (no plaintext email), the provider session, and the net and surcharge snapshotted', async () => {
    const event = await cardEvent();
    const started = await startEventCheckout(ctx, { event, contact: CONTACT, attendees: FAMILY, family: false });

    const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
    const sessionId = started.redirectUrl.split('/').at(-1);
    expect(row).toMatchObject({
      event_id: event.id,
      status: 'OPEN',
      expires_at: EXPIRES,
      registration_id: null,
      net_minor: 30000,
      surcharge_minor: 0,
      provider_session_id: sessionId,
      provider_url: started.redirectUrl,
    });
    expect(row.payload_enc).not.toContain(CONTACT.email);
    expect(row.payload_enc).not.toContain('Kim Payer');
    const staged = decryptStagedRegistration(ctx.cipher, row.payload_enc);
    expect(staged).toEqual({
      version: 1,
      contact: CONTACT,
      attendees: FAMILY,
      family: false,
      priced: priceRegistration(event.pricing, { attendees: FAMILY, family: false }),
      // The day its price was fixed on: the church-local day the checkout was created.
      pricedOn: localDay(ctx.clock.now(), ctx.config.regional.timeZone),
    });
    expect(await tdb.db('registrations').where({ event_id: event.id }).first()).toBeUndefined();
  });

  it('with a discount the order is one "Registration" line at the discounted net total', async () => {
    const event = await cardEvent({}, { tiers: TIERS, discount: { percent: 10 } });
    const started = await startEventCheckout(ctx, { event, contact: CONTACT, attendees: FAMILY, family: false });
    expect(lineItemsOf(createCallFor(started.checkoutId).body)).toEqual([
      { name: 'Registration', amount: 27000, quantity: 1, currency: 'aud' },
    ]);
    expect(await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first()).toMatchObject({ net_minor: 27000, surcharge_minor: 0 });
  });

  it('family waiver lines stay in the order at 0 so the payer sees what was waived', async () => {
    const event = await cardEvent({}, { tiers: TIERS, familyWaiver: { maxChargedTickets: 2 } });
    const started = await startEventCheckout(ctx, { event, contact: CONTACT, attendees: FAMILY, family: true });
    expect(lineItemsOf(createCallFor(started.checkoutId).body).map((l) => [l.name, l.amount])).toEqual([
      ['Adult — Jo Payer', 12000],
      ['Adult — Sam Payer', 12000],
      ['Child — Kim Payer (family waiver)', 0],
    ]);
  });

  it('when the event passes the card fee on, a "Card processing fee" line at the current Settings rate is charged and its surcharge snapshotted', async () => {
    await setSetting(tdb.db, 'cardFee.percent', 2, T0);
    await setSetting(tdb.db, 'cardFee.fixed', 25, T0);
    try {
      const event = await cardEvent({ pass_card_fee: true });
      const started = await startEventCheckout(ctx, { event, contact: CONTACT, attendees: FAMILY.slice(0, 1), family: false });
      // floor((12000 + 25) / 0.98) − 12000 = 270
      expect(lineItemsOf(createCallFor(started.checkoutId).body)).toEqual([
        { name: 'Adult — Jo Payer', amount: 12000, quantity: 1, currency: 'aud' },
        { name: 'Card processing fee', amount: 270, quantity: 1, currency: 'aud' },
      ]);
      const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
      expect(row).toMatchObject({ net_minor: 12000, surcharge_minor: 270 });
      const session = fake.sessions.get(row.provider_session_id);
      expect(session?.amount_total).toBe(row.net_minor + row.surcharge_minor);
    } finally {
      await tdb.db('app_settings').whereIn('key', ['cardFee.percent', 'cardFee.fixed']).delete();
    }
  });

  it('refuses with payment_unavailable, and calls no provider, when the event takes no card payment or no provider is configured', async () => {
    const before = fake.requests.length;
    const offline = await cardEvent({ online_payment: false });
    await expectAppError(startEventCheckout(ctx, { event: offline, contact: CONTACT, attendees: FAMILY, family: false }), 'payment_unavailable');

    const event = await cardEvent();
    const noProvider = createTestContext({ db: tdb.db, env: { AUTH_URL } });
    await expectAppError(startEventCheckout(noProvider, { event, contact: CONTACT, attendees: FAMILY, family: false }), 'payment_unavailable');

    expect(fake.requests.length).toBe(before);
    expect(await tdb.db('checkout_sessions').whereIn('event_id', [offline.id, event.id]).count({ n: '*' })).toEqual([{ n: 0 }]);
  });

  it('a free registration never goes to checkout', async () => {
    const event = await cardEvent({}, { tiers: [{ id: 'free', label: 'Guest', price: 0 }] });
    const before = fake.requests.length;
    await expectAppError(
      startEventCheckout(ctx, { event, contact: CONTACT, attendees: [{ name: 'Jo', tier: 'free' }], family: false }),
      'free_registration',
    );
    expect(fake.requests.length).toBe(before);
    expect(await tdb.db('checkout_sessions').where({ event_id: event.id }).first()).toBeUndefined();
  });

  it('a sold-out event is refused before anything is staged', async () => {
    const event = await cardEvent({ capacity: 2 });
    await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING' });
    const before = fake.requests.length;
    const error = await expectAppError(
      startEventCheckout(ctx, { event, contact: CONTACT, attendees: FAMILY.slice(0, 2), family: false }),
      'sold_out',
    );
    expect(error.message).toContain('only 1 place is left');
    expect(fake.requests.length).toBe(before);
    expect(await tdb.db('checkout_sessions').where({ event_id: event.id }).first()).toBeUndefined();
  });

  it('a provider error answer leaves no OPEN staging row and is provider_unavailable (502) with its payload scrubbed', async () => {
    const event = await cardEvent();
    fake.failNext(1, 400);
    const error = await expectAppError(startEventCheckout(ctx, { event, contact: CONTACT, attendees: FAMILY, family: false }), 'provider_unavailable');
    expect(error.httpStatus).toBe(502);
    const rows = await tdb.db('checkout_sessions').where({ event_id: event.id });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 'EXPIRED', payload_enc: null, provider_session_id: null });
  });

  it('a provider that cannot be reached leaves no OPEN staging row and is provider_unavailable', async () => {
    const down = await startFakeProvider({ webhookSecret: 'whsec_down' });
    await down.close();
    const downCtx = createTestContext({ db: tdb.db, env: { ...down.configEnv(), AUTH_URL } });
    const event = await cardEvent();
    const error = await expectAppError(
      startEventCheckout(downCtx, { event, contact: CONTACT, attendees: FAMILY, family: false }),
      'provider_unavailable',
    );
    expect(error.httpStatus).toBe(502);
    expect(await tdb.db('checkout_sessions').where({ event_id: event.id, status: 'OPEN' }).first()).toBeUndefined();
  });
});

describe('card checkout end to end with the local provider', () => {
  it('paying on the hosted page sends the signed completion to our webhook, which records the registration as PAID, then returns to the success page', async () => {
    const server = await startTestServer(ctx);
    try {
      fake.setWebhookUrl(`${server.url}/api/stripe/webhook`);
      const event = await cardEvent();
      const started = await startEventCheckout(ctx, { event, contact: CONTACT, attendees: FAMILY, family: false });

      const pay = await fetch(started.redirectUrl, { method: 'POST', redirect: 'manual' });
      const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
      expect(pay.status).toBe(303);
      expect(pay.headers.get('location')).toBe(`${AUTH_URL}/events/${event.slug}/success?session_id=${row.provider_session_id}`);
      expect(fake.deliveries.at(-1)).toMatchObject({ type: 'checkout.session.completed', status: 200 });
      const paymentIntent = fake.sessions.get(row.provider_session_id)?.payment_intent;
      expect(row).toMatchObject({ status: 'COMPLETED', payment_intent_id: paymentIntent });
      expect(await tdb.db('registrations').where({ event_id: event.id })).toMatchObject([
        { status: 'PAID', payment_method: 'card', total_minor: 30000, surcharge_minor: 0, payment_intent_id: paymentIntent, attendee_count: 3 },
      ]);
    } finally {
      await server.close();
    }
  });
});
