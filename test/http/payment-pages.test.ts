import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registrationToken } from '../../src/payments/links.js';
import { connectDb } from '../../src/db/connect.js';
import { PROCESSING_REFRESH_SECONDS } from '../../src/http/public-pages.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { PAYMENTS_ENV } from '../support/webhook-events.js';

// The pages never mislead: "nothing was charged" only once the provider confirmed it, no pay-now
// while a card payment for the registration may still be confirmed, and refunds shown as such.

const AUTH_SECRET = testEnv().AUTH_SECRET as string;
const T0 = new Date('2026-11-22T00:00:00Z');
const PROCESSING = 'We will email you as soon as your card payment is confirmed; if you were charged you do not need to pay again.';

let tdb: TestDatabase;
let server: TestServer;
beforeAll(async () => {
  tdb = await createTestDatabase();
  await setSetting(tdb.db, 'bank.accountName', 'Grace Community Church', T0);
  await setSetting(tdb.db, 'bank.bsb', '062-000', T0);
  await setSetting(tdb.db, 'bank.accountNumber', '1234 5678', T0);
  server = await startTestServer(createTestContext({ db: tdb.db, env: PAYMENTS_ENV }));
});
afterAll(async () => {
  await server.close();
  await tdb.drop();
});

const cipher = () => createTestContext({ db: tdb.db }).cipher;
const unescape = (html: string) => html.replaceAll('&#x3D;', '=').replaceAll('&#x27;', "'");

async function getPage(path: string) {
  const response = await fetch(`${server.url}${path}`, { redirect: 'manual' });
  return { status: response.status, html: unescape(await response.text()) };
}

const registrationPage = (id: string) => getPage(`/registrations/${id}?token=${registrationToken(AUTH_SECRET, id, 1)}`);
const successPage = (slug: string, sessionId: string) => getPage(`/events/${slug}/success?session_id=${sessionId}`);

async function pendingWithPayNow(checkout: Record<string, unknown>) {
  const event = await insertEvent(tdb.db, { online_payment: true });
  const registration = await insertRegistration(tdb.db, cipher(), event.id, { status: 'PENDING', payment_method: 'bank' });
  const sessionId = `cs_test_${Math.random().toString(36).slice(2, 12)}`;
  await insertCheckoutSession(tdb.db, cipher(), event.id, { payload_enc: null, registration_id: registration.id, provider_session_id: sessionId, ...checkout });
  return { event, registration, sessionId };
}

describe('while a pay-now card payment may still be confirmed', () => {
  for (const [state, checkout] of [
    ['OPEN', { status: 'OPEN' }],
    ['EXPIRED with its payload kept', { status: 'EXPIRED' }],
  ] as const) {
    it(`${state}: both pages say processing, neither offers pay-now nor bank details, and pay-now is refused`, async () => {
      const { event, registration, sessionId } = await pendingWithPayNow(checkout);

      const page = await registrationPage(registration.id);
      expect(page.html).toContain('Payment processing');
      expect(page.html).toContain(PROCESSING);
      expect(page.html).not.toContain('id="pay-now"');
      expect(page.html).not.toContain('id="bank-instructions"');

      const success = await successPage(event.slug, sessionId);
      expect(success.html).toContain('Processing your payment');
      expect(success.html).toContain(PROCESSING);
      expect(success.html).not.toContain('nothing was charged');
      expect(success.html).not.toContain('id="pay-now"');

      const pay = await getPage(`/registrations/${registration.id}/pay?token=${registrationToken(AUTH_SECRET, registration.id, 1)}`);
      expect(pay.status).toBe(409);
      expect(pay.html).toContain(PROCESSING);
    });
  }
});

describe('a pay-now session left unfinished (the registrant came back from the provider)', () => {
  const LIVE = { status: 'OPEN', provider_url: 'https://checkout.example/c/pay/cs_live', expires_at: new Date(T0.getTime() + 20 * 60_000) };

  it('reopening the pay-now link offers the same session again: the pages offer pay-now, never "processing" or "nothing was charged"', async () => {
    const { registration } = await pendingWithPayNow(LIVE);
    const token = registrationToken(AUTH_SECRET, registration.id, 1);

    const page = await registrationPage(registration.id);
    expect(page.html).toContain('Awaiting payment');
    expect(page.html).toContain('started but not finished');
    expect(page.html).not.toContain('Payment processing');
    expect(page.html).not.toContain('nothing was charged');
    expect(page.html).toContain('id="pay-now"');
    // A bank transfer now could pay twice if the card session is finished after all.
    expect(page.html).not.toContain('id="bank-instructions"');

    const pay = await getPage(`/registrations/${registration.id}/pay?token=${token}`);
    expect(pay.status).toBe(200);
    const post = await fetch(`${server.url}/registrations/${registration.id}/pay`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    expect(post.status).toBe(303);
    expect(post.headers.get('location')).toBe(LIVE.provider_url);
    expect(await tdb.db('checkout_sessions').where({ registration_id: registration.id }).pluck('provider_url')).toEqual([LIVE.provider_url]);
  });

  for (const [state, checkout] of [
    ['past its expiry', { ...LIVE, expires_at: new Date(T0.getTime() - 60_000) }],
    ['with a PaymentIntent (a payment under way)', { ...LIVE, payment_intent_id: 'pi_under_way' }],
    ['without a provider address', { ...LIVE, provider_url: null }],
  ] as const) {
    it(`${state}: still processing, no pay-now`, async () => {
      const { registration } = await pendingWithPayNow(checkout);
      const page = await registrationPage(registration.id);
      expect(page.html).toContain('Payment processing');
      expect(page.html).not.toContain('id="pay-now"');
      const pay = await getPage(`/registrations/${registration.id}/pay?token=${registrationToken(AUTH_SECRET, registration.id, 1)}`);
      expect(pay.status).toBe(409);
    });
  }
});

describe('a balance below the card provider\'s minimum charge (AUD: $0.50)', () => {
  it('the registration page offers bank transfer and no pay-now; the pay page, GET and POST, says card payment needs at least $0.50 instead of an error, and nothing is staged', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, pricing: JSON.stringify({ tiers: [{ id: 'candle', label: 'Candle', price: 40 }] }) });
    const registration = await insertRegistration(tdb.db, cipher(), event.id, {
      status: 'PENDING',
      payment_method: 'bank',
      line_items: JSON.stringify([{ label: 'Candle — Sam Member', amount: 40, kind: 'ticket' }]),
      total_minor: 40,
    });
    const message = 'Card payment needs at least $0.50, and this registration comes to $0.40 by card. Please pay by bank transfer, using the details on your registration page.';

    const page = await registrationPage(registration.id);
    expect(page.html).toContain('id="bank-instructions"');
    expect(page.html).not.toContain('id="pay-now"');

    const token = registrationToken(AUTH_SECRET, registration.id, 1);
    const pay = await getPage(`/registrations/${registration.id}/pay?token=${token}`);
    expect(pay.status).toBe(409);
    expect(pay.html).toContain(message);
    // There is something to pay, just not by card: the title says so.
    expect(pay.html).toMatch(/<title>Card payment not possible[^<]*<\/title>/);
    expect(pay.html).not.toContain('id="pay"');

    const post = await fetch(`${server.url}/registrations/${registration.id}/pay`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
    });
    expect(post.status).toBe(409);
    const html = unescape(await post.text());
    expect(html).toContain(message);
    expect(html).not.toContain('Card payment is unavailable right now');
    expect(await tdb.db('checkout_sessions').where({ registration_id: registration.id })).toEqual([]);
  });
});

describe('a registration for a deleted event', () => {
  it('asks for no money: no bank details, no pay-now, and says the event was cancelled', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, deleted_at: T0 });
    const registration = await insertRegistration(tdb.db, cipher(), event.id, { status: 'PENDING', payment_method: 'bank' });
    const page = await registrationPage(registration.id);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Event cancelled');
    expect(page.html).toContain('This event has been cancelled, so payment is closed. The church will contact you.');
    expect(page.html).not.toContain('Your places are held');
    expect(page.html).not.toContain('id="bank-instructions"');
    expect(page.html).not.toContain('id="pay-now"');
  });

  it('a paid registration for it no longer says "see you there"', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, deleted_at: T0 });
    const registration = await insertRegistration(tdb.db, cipher(), event.id, { status: 'PAID', payment_method: 'card' });
    const page = await registrationPage(registration.id);
    expect(page.html).toContain('This event has been cancelled');
    expect(page.html).not.toContain('See you there');
  });

  it('the success page of a payment for it says the event was cancelled, not that the place is confirmed', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, deleted_at: T0 });
    const registration = await insertRegistration(tdb.db, cipher(), event.id, { status: 'PAID', payment_method: 'card' });
    await insertCheckoutSession(tdb.db, cipher(), event.id, {
      status: 'COMPLETED',
      payload_enc: null,
      registration_id: registration.id,
      provider_session_id: 'cs_test_paid_then_deleted',
    });
    const success = await successPage(event.slug, 'cs_test_paid_then_deleted');
    expect(success.html).toContain('This event has since been cancelled; the church will contact you.');
    expect(success.html).not.toContain('is confirmed');
  });
});

describe('once the provider confirmed the payment unpaid', () => {
  it('the success page says nothing was charged and offers pay-now; the registration page too', async () => {
    const { event, registration, sessionId } = await pendingWithPayNow({ status: 'EXPIRED', scrubbed_at: T0, unpaid_confirmed_at: T0 });

    const success = await successPage(event.slug, sessionId);
    expect(success.html).toContain('Payment not completed');
    expect(success.html).toContain('nothing was charged');
    expect(success.html).toContain('id="pay-now"');

    const page = await registrationPage(registration.id);
    expect(page.html).toContain('Your last card payment was not completed, and nothing was charged.');
    expect(page.html).toContain('id="pay-now"');
  });

  const registrations = () => tdb.db('registrations');
  type Ids = { registration: string; event: string };
  for (const [since, change] of [
    ['paid by bank transfer', (ids: Ids) => registrations().where({ id: ids.registration }).update({ status: 'PAID' })],
    ['cancelled by the office', (ids: Ids) => registrations().where({ id: ids.registration }).update({ status: 'CANCELLED', cancel_reason: 'office', cancelled_at: T0 })],
    ['no longer payable by card', (ids: Ids) => tdb.db('events').where({ id: ids.event }).update({ online_payment: false })],
  ] as const) {
    it(`a pay-now checkout not completed for a registration since ${since} links to the registration, never "register again"`, async () => {
      const { event, registration, sessionId } = await pendingWithPayNow({ status: 'EXPIRED', scrubbed_at: T0, unpaid_confirmed_at: T0 });
      await change({ registration: registration.id, event: event.id });

      const success = await successPage(event.slug, sessionId);

      expect(success.status).toBe(200);
      expect(success.html).toContain('Payment not completed');
      expect(success.html).toContain(`<a class="action" href="/registrations/${registration.id}?token=${registrationToken(AUTH_SECRET, registration.id, 1)}">See your registration</a>`);
      expect(success.html).not.toContain('register again');
      expect(success.html).not.toContain('id="pay-now"');
    });
  }

  it('a pay-now checkout not completed for a registration since part-paid to the office offers pay-now again, whose page asks for the balance only', async () => {
    const { event, registration, sessionId } = await pendingWithPayNow({ status: 'EXPIRED', scrubbed_at: T0, unpaid_confirmed_at: T0 });
    await tdb.db('registration_payments').insert({ registration_id: registration.id, amount_minor: 5000, method: 'cash', recorded_by: 'office', recorded_at: T0 });

    const success = await successPage(event.slug, sessionId);
    expect(success.status).toBe(200);
    expect(success.html).toContain('Payment not completed');
    expect(success.html).not.toContain('register again');
    const href = /id="pay-now" href="([^"]+)"|href="([^"]+)"[^>]*id="pay-now"/.exec(success.html);
    expect(href).not.toBeNull();
    const payPage = await (await fetch(`${server.url}${(href?.[1] ?? href?.[2] ?? '').replace(/&amp;/g, '&')}`)).text();
    const total = (await registrations().where({ id: registration.id }).first<{ total_minor: number }>()).total_minor;
    expect(payPage).toContain(`id="amount">${new Intl.NumberFormat('en-AU', { style: 'currency', currency: 'AUD' }).format((total - 5000) / 100)}<`);
  });

  it('a new-registration checkout not completed still points back to the event to register again', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'EXPIRED', payload_enc: null, scrubbed_at: T0, unpaid_confirmed_at: T0, provider_session_id: 'cs_test_not_completed_new_1' });

    const success = await successPage(event.slug, 'cs_test_not_completed_new_1');

    expect(success.html).toContain('Payment not completed');
    expect(success.html).toContain(`To register again: <a class="action" href="/events/${event.slug}">Back to the event</a>`);
    expect(success.html).not.toContain('See your registration');
  });

  it('links only to an event page that still shows the event: none for a deleted or unpublished one, and "register again" only while registration is open', async () => {
    const cases = [
      ['deleted', { deleted_at: T0 }],
      ['unpublished', { published: false }],
      ['started', { starts_at: new Date(T0.getTime() - 86_400_000) }],
    ] as const;
    for (const [state, overrides] of cases) {
      const event = await insertEvent(tdb.db, { online_payment: true, ...overrides });
      const sessionId = `cs_test_gone_${state}`;
      await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'EXPIRED', payload_enc: null, scrubbed_at: T0, unpaid_confirmed_at: T0, provider_session_id: sessionId });

      const success = await successPage(event.slug, sessionId);

      expect(success.html, state).toContain('Payment not completed');
      expect(success.html, state).not.toContain('register again');
      if (state !== 'started') expect(success.html, state).not.toContain(`href="/events/${event.slug}"`);
      else expect(success.html, state).toContain('Registration for this event is closed.');
    }
  });

  it('a checkout scrubbed without any confirmation never says nothing was charged', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'EXPIRED', payload_enc: null, scrubbed_at: T0, provider_session_id: 'cs_test_unconfirmed_1' });

    const success = await successPage(event.slug, 'cs_test_unconfirmed_1');

    expect(success.html).toContain('We have no confirmation of this payment');
    expect(success.html).toContain('please do not pay again');
    expect(success.html).not.toContain('nothing was charged');
  });

  it('a new-registration checkout still kept after expiry shows processing, not "not completed"', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'EXPIRED', provider_session_id: 'cs_test_kept_1' });

    const success = await successPage(event.slug, 'cs_test_kept_1');

    expect(success.html).toContain('Processing your payment');
    expect(success.html).not.toContain('nothing was charged');
  });
});

describe('a payment kept without completing a registration (UNFULFILLED)', () => {
  it('a second pay-now payment of a registration already paid says so, never that the places were taken', async () => {
    const { event, sessionId } = await pendingWithPayNow({ status: 'UNFULFILLED', unfulfilled_reason: 'paid_twice' });
    await tdb.db('registrations').where({ event_id: event.id }).update({ status: 'PAID' });
    const success = await successPage(event.slug, sessionId);
    expect(success.html).toContain('Payment received: we will follow up');
    expect(success.html).toContain('was already paid, so this payment was a second one');
    expect(success.html).not.toContain('the last places were taken');
  });

  it('one that could not register the payer keeps the general explanation', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'UNFULFILLED', unfulfilled_reason: 'sold_out', provider_session_id: 'cs_test_sold_out_1' });
    const success = await successPage(event.slug, 'cs_test_sold_out_1');
    expect(success.html).toContain('the last places were taken while you were paying');
    expect(success.html).not.toContain('a second one');
  });
});

describe('after a full refund or a dispute', () => {
  for (const reason of ['refund', 'dispute'] as const) {
    it(`${reason}: the success page and the registration page show the registration cancelled, not registered`, async () => {
      const event = await insertEvent(tdb.db, { online_payment: true });
      const paymentIntentId = `pi_test_${reason}_${Math.random().toString(36).slice(2, 10)}`;
      const registration = await insertRegistration(tdb.db, cipher(), event.id, {
        status: 'CANCELLED',
        payment_method: 'card',
        payment_intent_id: paymentIntentId,
        cancel_reason: reason,
        cancelled_at: T0,
      });
      const sessionId = `cs_test_${reason}_${Math.random().toString(36).slice(2, 10)}`;
      await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'COMPLETED', payload_enc: null, payment_intent_id: paymentIntentId, provider_session_id: sessionId });

      const success = await successPage(event.slug, sessionId);
      expect(success.html).toContain('Payment refunded: registration cancelled');
      expect(success.html).not.toContain('you are registered');

      const page = await registrationPage(registration.id);
      expect(page.html).toContain(reason === 'refund' ? 'Your card payment was refunded' : 'Your card payment was disputed with your bank');
      expect(page.html).not.toContain('id="pay-now"');
    });
  }

  it('office: a card-paid registration the office cancelled says cancelled on both pages, never refunded or disputed (nothing was)', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const paymentIntentId = `pi_test_office_${Math.random().toString(36).slice(2, 10)}`;
    const registration = await insertRegistration(tdb.db, cipher(), event.id, {
      status: 'CANCELLED',
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
      cancel_reason: 'office',
      cancelled_at: T0,
    });
    const sessionId = `cs_test_office_${Math.random().toString(36).slice(2, 10)}`;
    await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'COMPLETED', payload_enc: null, payment_intent_id: paymentIntentId, provider_session_id: sessionId });

    const success = await successPage(event.slug, sessionId);
    expect(success.status).toBe(200);
    expect(success.html).toContain('Registration cancelled');
    expect(success.html).toContain('was cancelled and its places released. If you have any questions, please contact the church.');
    expect(success.html).not.toContain('refunded');
    expect(success.html).not.toContain('disputed');
    expect(success.html).not.toContain('you are registered');

    const page = await registrationPage(registration.id);
    expect(page.html).toContain('This registration was cancelled and its places released.');
    expect(page.html).not.toContain('refunded');
    expect(page.html).not.toContain('id="pay-now"');
  });
});

describe('the database unreachable when the provider sends the payer back', () => {
  it('the success page says the payment is being confirmed, not to pay again, and reloads itself; never a bare error', async () => {
    // Nothing listens on port 9: every query fails at once, as while PostgreSQL is down.
    const down = connectDb({ url: 'postgres://eventops:x@127.0.0.1:9/eventops', poolMax: 1 });
    const unreachable = await startTestServer(createTestContext({ db: down, env: PAYMENTS_ENV }));
    try {
      const response = await fetch(`${unreachable.url}/events/family-camp/success?session_id=cs_test_outage`, { redirect: 'manual' });
      const html = unescape(await response.text());
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe(String(PROCESSING_REFRESH_SECONDS));
      expect(html).toContain('if you were charged you do not need to pay again');
      expect(html).toContain(`http-equiv="refresh" content="${PROCESSING_REFRESH_SECONDS}"`);
      expect(html).not.toContain('Something went wrong');
    } finally {
      await unreachable.close();
      await down.destroy();
    }
  });
});
