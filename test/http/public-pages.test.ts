import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registrationToken } from '../../src/payments/links.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer, type TestServer } from '../support/http.js';

const AUTH_SECRET = testEnv().AUTH_SECRET as string;
const T0 = new Date('2026-11-22T00:00:00Z');

let tdb: TestDatabase;
let fake: FakeProvider;
let cardEnv: Record<string, string>;
beforeAll(async () => {
  tdb = await createTestDatabase();
  fake = await startFakeProvider({ webhookSecret: 'whsec_public_pages_test' });
  cardEnv = fake.configEnv();
  await setSetting(tdb.db, 'bank.accountName', 'Grace Community Church', T0);
  await setSetting(tdb.db, 'bank.bsb', '062-000', T0);
  await setSetting(tdb.db, 'bank.accountNumber', '1234 5678', T0);
});
afterAll(async () => {
  expect(fake.refundCalls).toEqual([]);
  await fake.close();
  await tdb.drop();
});

const cipher = () => createTestContext({ db: tdb.db }).cipher;
/** Handlebars writes "=" in attribute values as &#x3D;, which browsers read as "=". */
const unescapeEquals = (html: string) => html.replaceAll('&#x3D;', '=');

async function withServer<T>(env: Record<string, string | undefined>, run: (server: TestServer) => Promise<T>): Promise<T> {
  const server = await startTestServer(createTestContext({ db: tdb.db, env }));
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

async function errorLogCount(): Promise<number> {
  const row = await tdb.db('error_logs').count<{ n: string }>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

async function getPage(server: TestServer, path: string) {
  const response = await fetch(`${server.url}${path}`, { redirect: 'manual' });
  return { status: response.status, headers: response.headers, html: unescapeEquals(await response.text()) };
}

describe('GET /events/:slug', () => {
  it('shows the event: title, time in APP_TIMEZONE, place, description, tiers with prices, seats left, family waiver and discount, and a labelled form', async () => {
    const event = await insertEvent(tdb.db, {
      title: 'Family Camp',
      description: 'Three days at the lake.\nBring a torch.',
      location: 'Lake Macquarie Camp',
      capacity: 40,
      pricing: JSON.stringify({
        tiers: [
          { id: 'adult', label: 'Adult', price: 12000 },
          { id: 'child', label: 'Child', price: 6000 },
          { id: 'baby', label: 'Under 3', price: 0 },
        ],
        familyWaiver: { maxChargedTickets: 3 },
        discount: { percent: 10 },
      }),
    });
    await insertRegistration(tdb.db, cipher(), event.id, { status: 'PAID', attendee_count: 2 });
    await insertRegistration(tdb.db, cipher(), event.id, { status: 'CANCELLED', attendee_count: 5 });
    await withServer({}, async (server) => {
      const { status, html, headers } = await getPage(server, `/events/${event.slug}`);
      expect(status).toBe(200);
      expect(headers.get('content-type')).toContain('text/html');
      expect(html).toContain('<h1><bdi>Family Camp</bdi></h1>');
      // 2026-12-05T08:00Z is 7:00 pm on Saturday in Sydney (AEDT, UTC+11).
      expect(html).toMatch(/Saturday,? 5 December 2026 at 7:00\spm AEDT/);
      expect(html).toContain('Lake Macquarie Camp');
      expect(html).toContain('Three days at the lake.\nBring a torch.');
      expect(html).toContain('<span>Adult</span><span>$120.00</span>');
      expect(html).toContain('<span>Child</span><span>$60.00</span>');
      expect(html).toContain('<span>Under 3</span><span>Free</span>');
      expect(html).toContain('38 places left');
      expect(html).toContain('You pay for the 3 most expensive tickets; the rest of the household comes free.');
      expect(html).toContain('10% off');
      for (const [id, label] of [
        ['name', 'Your name'],
        ['email', 'Email'],
        ['mobile', 'Mobile'],
        ['attendee-name-1', 'Attendee 1 name'],
        ['attendee-tier-6', 'Attendee 6 ticket'],
        ['payment-bank', ''],
        ['family', ''],
      ]) {
        expect(html).toMatch(new RegExp(`<label (class="choice[^"]*" )?for="${id}"`));
        expect(html).toContain(`id="${id}"`);
        if (label) expect(html).toContain(label);
      }
      // Every row one registration may name (10 by default), for a member without script.
      expect(html.match(/name="attendee_name"/g)).toHaveLength(10);
      expect(html).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
      expect(html).not.toContain('cf-turnstile');
    });
    // HEAD (uptime monitors, link checkers) is not a view.
    await withServer({}, async (server) => {
      expect((await fetch(`${server.url}/events/${event.slug}`, { method: 'HEAD' })).status).toBe(200);
    });
    // One counter per path template and UTC day, never a row per view.
    expect(await tdb.db('route_view_days').where({ path: '/events/:slug' }).select('day', 'views')).toEqual([{ day: '2026-11-22', views: 1 }]);
  });

  it('formats the time in another APP_TIMEZONE and money in APP_CURRENCY', async () => {
    const event = await insertEvent(tdb.db);
    await withServer({ APP_TIMEZONE: 'Europe/London', APP_LOCALE: 'en-GB', APP_CURRENCY: 'GBP' }, async (server) => {
      const { html } = await getPage(server, `/events/${event.slug}`);
      expect(html).toMatch(/Saturday,? 5 December 2026 at 08:00 GMT/);
      expect(html).toContain('£120.00');
    });
  });

  it('the discount and the card fee rate are written in APP_LOCALE like the prices beside them', async () => {
    await setSetting(tdb.db, 'cardFee.percent', 1.7555, new Date('2026-11-22T00:00:00Z'));
    try {
      const event = await insertEvent(tdb.db, {
        online_payment: true,
        pass_card_fee: true,
        pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 12000 }], discount: { percent: 12.5 } }),
      });
      await withServer({ ...cardEnv, APP_LOCALE: 'de-DE', APP_CURRENCY: 'EUR' }, async (server) => {
        const { html } = await getPage(server, `/events/${event.slug}`);
        expect(html).toContain('<span>Adult</span><span>120,00\u00a0€</span>');
        expect(html).toContain('Every registration gets 12,5\u00a0% off the total.');
        expect(html).toContain('card processing fee (about 1,7555\u00a0% + 0,30\u00a0€)');
      });
      await withServer(cardEnv, async (server) => {
        const { html } = await getPage(server, `/events/${event.slug}`);
        expect(html).toContain('12.5% off');
        expect(html).toContain('card processing fee (about 1.7555% + $0.30)');
      });
    } finally {
      await tdb.db('app_settings').where({ key: 'cardFee.percent' }).delete();
    }
  });

  it('escapes an event title and description that contain HTML', async () => {
    const event = await insertEvent(tdb.db, { title: '<script>alert("x")</script> Night', description: '<img src=x onerror=alert(1)>' });
    await withServer({}, async (server) => {
      const { html } = await getPage(server, `/events/${event.slug}`);
      expect(html).not.toContain('<script>alert');
      expect(html).not.toContain('<img src=x');
      expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Night');
      expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    });
  });

  it('offers card payment only when the event has online payment on and both PSP keys are set', async () => {
    const online = await insertEvent(tdb.db, { online_payment: true });
    const offline = await insertEvent(tdb.db, { online_payment: false });
    const hasCard = async (env: Record<string, string | undefined>, slug: string) =>
      withServer(env, async (server) => (await getPage(server, `/events/${slug}`)).html.includes('id="payment-card"'));
    expect(await hasCard(cardEnv, online.slug)).toBe(true);
    expect(await hasCard(cardEnv, offline.slug)).toBe(false);
    expect(await hasCard({}, online.slug)).toBe(false);
    // Bank transfer is always there.
    await withServer({}, async (server) => {
      const { html } = await getPage(server, `/events/${offline.slug}`);
      expect(html).toContain('id="payment-bank"');
      expect(html).toMatch(/id="payment-bank" name="payment" type="radio" value="bank" checked/);
    });
  });

  it('explains the card fee when the event passes it on', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, pass_card_fee: true });
    await withServer(cardEnv, async (server) => {
      const { html } = await getPage(server, `/events/${event.slug}`);
      expect(html).toContain('card processing fee (about 1.7% + $0.30)');
    });
  });

  it('renders the captcha widget with the site key when captcha is configured', async () => {
    const event = await insertEvent(tdb.db);
    await withServer({ CAPTCHA_SECRET_KEY: 'secret', CAPTCHA_SITE_KEY: 'site-key-abc' }, async (server) => {
      const { html } = await getPage(server, `/events/${event.slug}`);
      expect(html).toContain('<div class="cf-turnstile" data-sitekey="site-key-abc"></div>');
      expect(html).toContain('https://challenges.cloudflare.com/turnstile/v0/api.js');
    });
  });

  it('says the card payment was not finished when the payer comes back with ?checkout=cancelled naming no checkout: the query string alone never says nothing was charged', async () => {
    const event = await insertEvent(tdb.db);
    await withServer({}, async (server) => {
      expect((await getPage(server, `/events/${event.slug}`)).html).not.toContain('payment was');
      const cancelled = (await getPage(server, `/events/${event.slug}?checkout=cancelled`)).html;
      expect(cancelled).toContain('Your card payment was not finished.');
      expect(cancelled).not.toContain('nothing was charged');
    });
  });

  it('shows "sold out" and no form when every place is taken', async () => {
    const event = await insertEvent(tdb.db, { capacity: 1 });
    await insertRegistration(tdb.db, cipher(), event.id, { status: 'PENDING' });
    await withServer({}, async (server) => {
      const { status, html } = await getPage(server, `/events/${event.slug}`);
      expect(status).toBe(200);
      expect(html).toContain('Sold out');
      expect(html).not.toContain('<form');
    });
  });

  it('answers a 404 page for an unpublished, deleted or unknown event', async () => {
    const draft = await insertEvent(tdb.db, { published: false });
    const gone = await insertEvent(tdb.db, { deleted_at: T0 });
    await withServer({}, async (server) => {
      for (const slug of [draft.slug, gone.slug, 'no-such-event']) {
        const { status, html, headers } = await getPage(server, `/events/${slug}`);
        expect(status).toBe(404);
        expect(headers.get('content-type')).toContain('text/html');
        expect(html).toContain('Not found');
      }
    });
  });

  it('an address whose slug or session id holds a control character (PostgreSQL refuses NUL) is unknown: 404, no error logged', async () => {
    const event = await insertEvent(tdb.db);
    const errorsBefore = await errorLogCount();
    await withServer({}, async (server) => {
      for (const path of ['/events/%00', '/events/a%01b', `/events/${event.slug}/success?session_id=%00`, `/events/${event.slug}/success?session_id=cs_%1F`]) {
        const { status, html } = await getPage(server, path);
        expect(status, path).toBe(404);
        expect(html, path).toContain('Not found');
      }
      const post = await fetch(`${server.url}/events/%00/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=x',
      });
      expect(post.status).toBe(404);
      expect(await post.text()).toContain('Not found');
    });
    expect(await errorLogCount()).toBe(errorsBefore);
  });
});

describe('an event that ends', () => {
  it('the event page and the registration page say from when to when, as the reminder does', async () => {
    // Saturday 19:00 to Monday 15:00 in Sydney.
    const event = await insertEvent(tdb.db, { title: 'Family Camp', ends_at: new Date('2026-12-07T04:00:00Z') });
    const mine = await insertRegistration(tdb.db, cipher(), event.id);
    const span = /Saturday,? 5 December 2026 at 7:00\spm AEDT\s?–\s?Monday,? 7 December 2026 at 3:00\spm AEDT/;
    await withServer({}, async (server) => {
      expect((await getPage(server, `/events/${event.slug}`)).html).toMatch(span);
      expect((await getPage(server, `/registrations/${mine.id}?token=${registrationToken(AUTH_SECRET, mine.id, 1)}`)).html).toMatch(span);
    });
  });
});

describe('GET /registrations/:id', () => {
  it('needs the right token: wrong, missing, another registration\'s token or a malformed id all answer 404', async () => {
    const event = await insertEvent(tdb.db);
    const mine = await insertRegistration(tdb.db, cipher(), event.id);
    const other = await insertRegistration(tdb.db, cipher(), event.id);
    await withServer({}, async (server) => {
      expect((await getPage(server, `/registrations/${mine.id}?token=${registrationToken(AUTH_SECRET, mine.id, 1)}`)).status).toBe(200);
      for (const path of [
        `/registrations/${mine.id}`,
        `/registrations/${mine.id}?token=`,
        `/registrations/${mine.id}?token=${'0'.repeat(64)}`,
        `/registrations/${mine.id}?token=${registrationToken(AUTH_SECRET, other.id, 1)}`,
        `/registrations/${mine.id}?token=${registrationToken('another-secret-of-at-least-32-bytes!!', mine.id, 1)}`,
        `/registrations/not-a-uuid?token=${registrationToken(AUTH_SECRET, 'not-a-uuid', 1)}`,
        `/registrations/00000000-0000-0000-0000-000000000000?token=${registrationToken(AUTH_SECRET, '00000000-0000-0000-0000-000000000000', 1)}`,
      ]) {
        const { status, html } = await getPage(server, path);
        expect(status, path).toBe(404);
        expect(html).toContain('Not found');
      }
    });
  });

  it('shows status, line items and amount; bank details and the pay-now button only for a PENDING bank registration with card possible', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const pending = await insertRegistration(tdb.db, cipher(), event.id, {
      status: 'PENDING',
      line_items: JSON.stringify([{ label: 'Adult — Sam Member', amount: 12000, kind: 'ticket' }]),
    });
    const paid = await insertRegistration(tdb.db, cipher(), event.id, { status: 'PAID', payment_method: 'card' });
    const pagePath = (id: string) => `/registrations/${id}?token=${registrationToken(AUTH_SECRET, id, 1)}`;
    await withServer(cardEnv, async (server) => {
      const { html, headers } = await getPage(server, pagePath(pending.id));
      expect(headers.get('cache-control')).toBe('no-store');
      expect(headers.get('referrer-policy')).toBe('no-referrer');
      expect(html).toContain('Awaiting payment');
      expect(html).toContain('<span>Adult — <bdi>Sam Member</bdi></span><span>$120.00</span>');
      expect(html).toContain('<dt>BSB</dt><dd>062-000</dd>');
      expect(html).toContain(`<dt>Reference</dt><dd><strong>${pending.id.replace(/-/g, '').slice(0, 8).toUpperCase()}</strong></dd>`);
      expect(html).toContain(`href="/registrations/${pending.id}/pay?token=${registrationToken(AUTH_SECRET, pending.id, 1)}"`);

      const paidPage = await getPage(server, pagePath(paid.id));
      expect(paidPage.html).toContain('<span id="status">Paid</span>');
      expect(paidPage.html).not.toContain('id="bank-instructions"');
      expect(paidPage.html).not.toContain('id="pay-now"');
    });
    await withServer({}, async (server) => {
      const { html } = await getPage(server, pagePath(pending.id));
      expect(html).toContain('id="bank-instructions"');
      expect(html).not.toContain('id="pay-now"');
    });
  });
});

describe('pay-now /registrations/:id/pay', () => {
  it('GET shows the amount (with the card fee when passed on) and a Pay form, and creates no provider session', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, pass_card_fee: true });
    const pending = await insertRegistration(tdb.db, cipher(), event.id, {
      status: 'PENDING',
      line_items: JSON.stringify([{ label: 'Adult — Sam Member', amount: 12000, kind: 'ticket' }]),
    });
    const token = registrationToken(AUTH_SECRET, pending.id, 1);
    const before = fake.requests.length;
    await withServer(cardEnv, async (server) => {
      for (let i = 0; i < 3; i++) {
        const { status, html } = await getPage(server, `/registrations/${pending.id}/pay?token=${token}`);
        expect(status).toBe(200);
        // floor((12000 + 30) / 0.983) − 12000 = 238
        expect(html).toContain('<span>Card processing fee</span><span>$2.38</span>');
        expect(html).toContain('<span id="amount">$122.38</span>');
        expect(html).toContain(`<form method="post" action="/registrations/${pending.id}/pay">`);
        expect(html).toContain(`<input type="hidden" name="token" value="${token}">`);
      }
      expect((await getPage(server, `/registrations/${pending.id}/pay?token=wrong`)).status).toBe(404);
    });
    expect(fake.requests.length).toBe(before);
    expect(await tdb.db('checkout_sessions').where({ registration_id: pending.id }).count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('POST starts the checkout and answers 303 to the provider page; a second POST reuses the in-progress session', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const pending = await insertRegistration(tdb.db, cipher(), event.id, {
      status: 'PENDING',
      line_items: JSON.stringify([{ label: 'Adult — Sam Member', amount: 12000, kind: 'ticket' }]),
    });
    const token = registrationToken(AUTH_SECRET, pending.id, 1);
    await withServer(cardEnv, async (server) => {
      const pay = () =>
        fetch(`${server.url}/registrations/${pending.id}/pay`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
        });
      const first = await pay();
      expect(first.status).toBe(303);
      const location = first.headers.get('location') ?? '';
      expect(location.startsWith(`${cardEnv.PSP_API_BASE}/pay/cs_`)).toBe(true);
      const second = await pay();
      expect(second.status).toBe(303);
      expect(second.headers.get('location')).toBe(location);

      const forged = await fetch(`${server.url}/registrations/${pending.id}/pay`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: 'f'.repeat(64) }).toString(),
      });
      expect(forged.status).toBe(404);
    });
    const rows = await tdb.db('checkout_sessions').where({ registration_id: pending.id }).select('status', 'net_minor');
    expect(rows).toEqual([{ status: 'OPEN', net_minor: 12000 }]);
  });

  it('a registration that cannot be paid by card gets a 409 page saying why, on GET and POST, and no provider call', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const offline = await insertEvent(tdb.db, { online_payment: false });
    const cases = [
      { id: (await insertRegistration(tdb.db, cipher(), event.id, { status: 'PAID' })).id, why: 'already paid' },
      { id: (await insertRegistration(tdb.db, cipher(), event.id, { status: 'CANCELLED' })).id, why: 'was cancelled' },
      {
        id: (await insertRegistration(tdb.db, cipher(), event.id, { status: 'PAID', payment_method: 'free', total_minor: 0 })).id,
        why: 'already paid',
      },
      { id: (await insertRegistration(tdb.db, cipher(), event.id, { status: 'PENDING', total_minor: 0, payment_method: 'free' })).id, why: 'is free' },
      { id: (await insertRegistration(tdb.db, cipher(), offline.id, { status: 'PENDING' })).id, why: 'Card payments are not available' },
    ];
    const before = fake.requests.length;
    await withServer(cardEnv, async (server) => {
      for (const { id, why } of cases) {
        const token = registrationToken(AUTH_SECRET, id, 1);
        const get = await getPage(server, `/registrations/${id}/pay?token=${token}`);
        expect(get.status).toBe(409);
        expect(get.html).toContain(why);
        const post = await fetch(`${server.url}/registrations/${id}/pay`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token }).toString(),
        });
        expect(post.status).toBe(409);
        expect(await post.text()).toContain(why);
      }
    });
    await withServer({}, async (server) => {
      const pending = await insertRegistration(tdb.db, cipher(), event.id, { status: 'PENDING' });
      const get = await getPage(server, `/registrations/${pending.id}/pay?token=${registrationToken(AUTH_SECRET, pending.id, 1)}`);
      expect(get.status).toBe(409);
      expect(get.html).toContain('Card payments are not available');
    });
    expect(fake.requests.length).toBe(before);
  });
});

describe('GET /events/:slug/success', () => {
  it('shows each state from our database: COMPLETED paid, OPEN processing (refreshing), UNFULFILLED follow-up, EXPIRED and confirmed unpaid not completed', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const registration = await insertRegistration(tdb.db, cipher(), event.id, {
      status: 'PAID',
      payment_method: 'card',
      payment_intent_id: 'pi_success_page_1',
      line_items: JSON.stringify([{ label: 'Adult — Sam Member', amount: 12000, kind: 'ticket' }]),
    });
    const completed = await insertCheckoutSession(tdb.db, cipher(), event.id, {
      status: 'COMPLETED',
      payload_enc: null,
      payment_intent_id: 'pi_success_page_1',
      provider_session_id: 'cs_test_completed_1',
    });
    await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'OPEN', provider_session_id: 'cs_test_open_1' });
    await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'UNFULFILLED', provider_session_id: 'cs_test_unfulfilled_1' });
    await insertCheckoutSession(tdb.db, cipher(), event.id, {
      status: 'EXPIRED',
      payload_enc: null,
      scrubbed_at: T0,
      unpaid_confirmed_at: T0,
      provider_session_id: 'cs_test_expired_1',
    });
    expect(completed.id).toBeTruthy();

    await withServer({}, async (server) => {
      const paid = await getPage(server, `/events/${event.slug}/success?session_id=cs_test_completed_1`);
      expect(paid.status).toBe(200);
      expect(paid.html).toContain('Payment received, you are registered');
      expect(paid.html).toContain('<span>Adult — <bdi>Sam Member</bdi></span><span>$120.00</span>');
      expect(paid.html).toContain(`href="/registrations/${registration.id}?token=${registrationToken(AUTH_SECRET, registration.id, 1)}"`);
      expect(paid.html).not.toContain('http-equiv="refresh"');

      const open = await getPage(server, `/events/${event.slug}/success?session_id=cs_test_open_1`);
      expect(open.status).toBe(200);
      expect(open.html).toContain('Processing your payment');
      expect(open.html).toContain('<meta http-equiv="refresh" content="3">');

      const unfulfilled = await getPage(server, `/events/${event.slug}/success?session_id=cs_test_unfulfilled_1`);
      expect(unfulfilled.html).toContain('Payment received: we will follow up');
      expect(unfulfilled.html).not.toContain('http-equiv="refresh"');

      const expired = await getPage(server, `/events/${event.slug}/success?session_id=cs_test_expired_1`);
      expect(expired.html).toContain('Payment not completed');
      expect(expired.html).toContain(`<a class="action" href="/events/${event.slug}">Back to the event</a>`);
      expect(expired.html).not.toContain('id="pay-now"');
    });
  });

  it('offers the pay-now button when the provider confirmed a pay-now checkout unpaid and the registration is still PENDING', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const pending = await insertRegistration(tdb.db, cipher(), event.id, { status: 'PENDING' });
    await insertCheckoutSession(tdb.db, cipher(), event.id, {
      status: 'EXPIRED',
      payload_enc: null,
      scrubbed_at: T0,
      unpaid_confirmed_at: T0,
      registration_id: pending.id,
      provider_session_id: 'cs_test_paynow_expired_1',
    });
    await withServer(cardEnv, async (server) => {
      const { html } = await getPage(server, `/events/${event.slug}/success?session_id=cs_test_paynow_expired_1`);
      expect(html).toContain('Payment not completed');
      expect(html).toContain(`id="pay-now" href="/registrations/${pending.id}/pay?token=${registrationToken(AUTH_SECRET, pending.id, 1)}"`);
    });
  });

  it('answers 404 for an unknown or missing session id, or one of another event', async () => {
    const event = await insertEvent(tdb.db);
    const other = await insertEvent(tdb.db);
    await insertCheckoutSession(tdb.db, cipher(), other.id, { provider_session_id: 'cs_test_other_event_1' });
    await withServer({}, async (server) => {
      for (const path of [
        `/events/${event.slug}/success?session_id=cs_test_unknown`,
        `/events/${event.slug}/success`,
        `/events/${event.slug}/success?session_id=cs_test_other_event_1`,
      ]) {
        expect((await getPage(server, path)).status, path).toBe(404);
      }
    });
  });
});

describe('names and titles typed in any script are isolated (<bdi>) from the words around them', () => {
  it('attendee names in the lines, the contact name and the event title, on the event, registration, pay-now and success pages', async () => {
    const title = 'مخيم العائلة 2026';
    const event = await insertEvent(tdb.db, { title, online_payment: true });
    const attendees = [
      { name: 'فاطمة 2', tier: 'adult' },
      { name: '2 فاطمة', tier: 'adult' },
    ];
    const lines = [
      { label: 'Adult — فاطمة 2', amount: 12000, kind: 'ticket' },
      { label: 'Adult — 2 فاطمة (family waiver)', amount: 0, kind: 'waived' },
    ];
    const registration = (overrides: Record<string, unknown>) =>
      insertRegistration(tdb.db, cipher(), event.id, {
        contact_name: 'فاطمة الزهراء',
        attendees: JSON.stringify(attendees),
        attendee_count: 2,
        line_items: JSON.stringify(lines),
        ...overrides,
      });
    const pending = await registration({ status: 'PENDING' });
    await registration({ status: 'PAID', payment_method: 'card', payment_intent_id: 'pi_bidi_1' });
    await insertCheckoutSession(tdb.db, cipher(), event.id, { status: 'COMPLETED', payload_enc: null, payment_intent_id: 'pi_bidi_1', provider_session_id: 'cs_test_bidi_1' });
    const token = registrationToken(AUTH_SECRET, pending.id, 1);
    const isolatedLines = [
      '<span>Adult — <bdi>فاطمة 2</bdi></span><span>$120.00</span>',
      '<span>Adult — <bdi>2 فاطمة</bdi> (family waiver)</span><span>$0.00</span>',
    ];
    await withServer(cardEnv, async (server) => {
      const eventPage = await getPage(server, `/events/${event.slug}`);
      expect(eventPage.status).toBe(200);
      expect(eventPage.html).toContain(`<h1><bdi>${title}</bdi></h1>`);

      const page = await getPage(server, `/registrations/${pending.id}?token=${token}`);
      expect(page.status).toBe(200);
      expect(page.html).toContain(`<bdi>${title}</bdi></a>`);
      expect(page.html).toContain('<p><strong>Registered by:</strong> <bdi>فاطمة الزهراء</bdi></p>');
      for (const line of isolatedLines) expect(page.html).toContain(line);

      const payNow = await getPage(server, `/registrations/${pending.id}/pay?token=${token}`);
      expect(payNow.status).toBe(200);
      expect(payNow.html).toContain(`<p><bdi>${title}</bdi><br>`);
      // Pay-now charges the whole as one line when the lines do not add up to what is owed; these do.
      for (const line of isolatedLines) expect(payNow.html).toContain(line);

      const success = await getPage(server, `/events/${event.slug}/success?session_id=cs_test_bidi_1`);
      expect(success.status).toBe(200);
      expect(success.html).toContain(`Your place at <bdi>${title}</bdi> is confirmed`);
      for (const line of isolatedLines) expect(success.html).toContain(line);
    });
  });

  it('a line that names no attendee (a discounted registration, the card fee) is shown as it is', async () => {
    const event = await insertEvent(tdb.db);
    const pending = await insertRegistration(tdb.db, cipher(), event.id, {
      status: 'PENDING',
      line_items: JSON.stringify([{ label: 'Registration', amount: 10800, kind: 'registration' }]),
      total_minor: 10800,
    });
    await withServer({}, async (server) => {
      const { html } = await getPage(server, `/registrations/${pending.id}?token=${registrationToken(AUTH_SECRET, pending.id, 1)}`);
      expect(html).toContain('<span>Registration</span><span>$108.00</span>');
    });
  });
});
