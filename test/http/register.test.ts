import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registrationToken } from '../../src/payments/links.js';
import { setSetting } from '../../src/settings.js';
import { startCaptchaServer } from '../support/captcha-server.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { startFakeProvider } from '../support/fake-provider.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { testEnv } from '../support/env.js';

const AUTH_SECRET = testEnv().AUTH_SECRET as string;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
  const now = new Date('2026-11-22T00:00:00Z');
  await setSetting(tdb.db, 'bank.accountName', 'Grace Community Church', now);
  await setSetting(tdb.db, 'bank.bsb', '062-000', now);
  await setSetting(tdb.db, 'bank.accountNumber', '1234 5678', now);
});
afterAll(async () => {
  await tdb.drop();
});

const CARD_ENV = { PSP_SECRET_KEY: 'sk_test_local', PSP_WEBHOOK_SECRET: 'whsec_local' };
const PRICING = {
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000 },
  ],
  familyWaiver: { maxChargedTickets: 2 },
};

async function withServer<T>(env: Record<string, string | undefined>, run: (server: TestServer) => Promise<T>): Promise<T> {
  // Limits are counted in the database, shared by every server on it: each test starts with none counted.
  await tdb.db('rate_limits').delete();
  const server = await startTestServer(createTestContext({ db: tdb.db, env }));
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

/** Handlebars writes "=" in attribute values as &#x3D;, which browsers read as "=". */
const unescapeEquals = (html: string) => html.replaceAll('&#x3D;', '=');

type Fields = Record<string, string | string[]>;

function formBody(fields: Fields): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, v);
  }
  return params.toString();
}

function postForm(server: TestServer, slug: string, fields: Fields, headers: Record<string, string> = {}) {
  return fetch(`${server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: formBody(fields),
  });
}

function postJson(server: TestServer, slug: string, body: unknown) {
  return fetch(`${server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const valid = (overrides: Fields = {}): Fields => ({
  name: 'Jo Citizen',
  email: 'jo@example.org',
  mobile: '',
  payment: 'bank',
  attendee_name: ['Jo Citizen', 'Kim Citizen', '', '', '', ''],
  attendee_tier: ['adult', 'child', 'adult', 'adult', 'adult', 'adult'],
  ...overrides,
});

async function registrationsOf(eventId: string) {
  return tdb.db('registrations').where({ event_id: eventId }).orderBy('created_at').select();
}

describe('POST /events/:slug/register — free and bank transfer', () => {
  it('a free registration is PAID at 0 (method free) and answers 303 to its own page', async () => {
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify({ tiers: [{ id: 'guest', label: 'Guest', price: 0 }] }) });
    await withServer({}, async (server) => {
      const response = await postForm(server, event.slug, valid({ attendee_name: ['Jo'], attendee_tier: ['guest'], payment: 'card' }));
      expect(response.status).toBe(303);
      const [row] = await registrationsOf(event.id);
      expect(row).toMatchObject({ status: 'PAID', payment_method: 'free', total_minor: 0, attendee_count: 1, contact_name: 'Jo Citizen' });
      expect(row.paid_at).not.toBeNull();
      const location = response.headers.get('location') ?? '';
      expect(location).toBe(`/registrations/${row.id}?token=${registrationToken(AUTH_SECRET, row.id, 1)}`);
      const page = await fetch(`${server.url}${location}`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('Confirmed (free)');
      expect(html).not.toContain('id="bank-instructions"');
      expect(html).not.toContain('id="pay-now"');
    });
  });

  it('bank transfer creates a PENDING registration priced on the server, and its page shows the bank details and the pay-now link when card payment is possible', async () => {
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify(PRICING), online_payment: true });
    await withServer(CARD_ENV, async (server) => {
      // Submitted amounts are ignored: only the choices are priced.
      const response = await postForm(server, event.slug, valid({ total: '1', amount: '1', total_minor: '1' }));
      expect(response.status).toBe(303);
      const [row] = await registrationsOf(event.id);
      expect(row).toMatchObject({ status: 'PENDING', payment_method: 'bank', total_minor: 18000, surcharge_minor: 0, attendee_count: 2 });
      expect(row.attendees).toEqual([
        { name: 'Jo Citizen', tier: 'adult' },
        { name: 'Kim Citizen', tier: 'child' },
      ]);
      expect(await tdb.db('checkout_sessions').where({ event_id: event.id }).count({ n: '*' }).first()).toEqual({ n: 0 });

      const html = unescapeEquals(await (await fetch(`${server.url}${response.headers.get('location')}`)).text());
      expect(html).toContain('Awaiting payment');
      expect(html).toContain('062-000');
      expect(html).toContain('1234 5678');
      expect(html).toContain('$180.00');
      expect(html).toContain(`href="/registrations/${row.id}/pay?token=${registrationToken(AUTH_SECRET, row.id, 1)}"`);
    });
  });

  it('without PSP keys a card choice falls back to bank transfer (PENDING) and no pay-now link is offered', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    await withServer({}, async (server) => {
      const response = await postForm(server, event.slug, valid({ payment: 'card', attendee_name: ['Jo'], attendee_tier: ['adult'] }));
      expect(response.status).toBe(303);
      const [row] = await registrationsOf(event.id);
      expect(row).toMatchObject({ status: 'PENDING', payment_method: 'bank', total_minor: 12000 });
      const html = await (await fetch(`${server.url}${response.headers.get('location')}`)).text();
      expect(html).toContain('id="bank-instructions"');
      expect(html).not.toContain('id="pay-now"');
    });
  });

  it('the family waiver is applied on the server when the household box is ticked', async () => {
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify(PRICING) });
    await withServer({}, async (server) => {
      const response = await postForm(
        server,
        event.slug,
        valid({ family: 'on', attendee_name: ['A', 'B', 'C'], attendee_tier: ['adult', 'adult', 'child'] }),
      );
      expect(response.status).toBe(303);
      const [row] = await registrationsOf(event.id);
      expect(row).toMatchObject({ family: true, total_minor: 24000, attendee_count: 3 });
      expect(row.line_items).toContainEqual({ label: 'Child — C (family waiver)', amount: 0, kind: 'waived' });
    });
  });

  it('accepts the same registration as JSON with attendees [{name, tier}]', async () => {
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify(PRICING) });
    await withServer({}, async (server) => {
      const response = await postJson(server, event.slug, {
        name: 'Jo',
        email: 'jo@example.org',
        payment: 'bank',
        family: false,
        attendees: [{ name: 'Jo', tier: 'child' }],
      });
      expect(response.status).toBe(303);
      const body = (await response.json()) as { registrationId: string; status: string; location: string };
      expect(body).toMatchObject({ status: 'PENDING' });
      expect(response.headers.get('location')).toBe(body.location);
      const [row] = await registrationsOf(event.id);
      expect(row).toMatchObject({ id: body.registrationId, total_minor: 6000 });
    });
  });

  it('an unpublished, deleted or unknown event answers 404 and stores nothing', async () => {
    const draft = await insertEvent(tdb.db, { published: false });
    const gone = await insertEvent(tdb.db, { deleted_at: new Date('2026-11-01T00:00:00Z') });
    await withServer({}, async (server) => {
      for (const slug of [draft.slug, gone.slug, 'no-such-event']) {
        const response = await postForm(server, slug, valid({ attendee_name: ['Jo'], attendee_tier: ['adult'] }));
        expect(response.status).toBe(404);
        expect(response.headers.get('content-type')).toContain('text/html');
      }
    });
    expect(await tdb.db('registrations').whereIn('event_id', [draft.id, gone.id]).count({ n: '*' }).first()).toEqual({ n: 0 });
  });
});

describe('POST /events/:slug/register — nothing to pay', () => {
  /** The form as a browser sends it from a page that offers no payment choice: no payment field at all. */
  const withoutPayment = (fields: Fields): Fields => {
    const { payment: _payment, ...rest } = fields;
    return rest;
  };

  it('an event whose every ticket is free asks nothing about payment, and a post without payment registers as free (PAID, method free), by form and by JSON', async () => {
    const event = await insertEvent(tdb.db, {
      online_payment: true,
      pricing: JSON.stringify({ tiers: [{ id: 'guest', label: 'Guest', price: 0 }, { id: 'helper', label: 'Helper', price: 0 }] }),
    });
    await withServer(CARD_ENV, async (server) => {
      const page = await fetch(`${server.url}/events/${event.slug}`);
      expect(page.status).toBe(200);
      const html = await page.text();
      expect(html).toContain('<p id="payment-free"><strong>Free:</strong> nothing to pay.</p>');
      expect(html).not.toContain('name="payment"');
      expect(html).not.toContain('Bank transfer');
      expect(html).not.toContain('bank details');

      const form = await postForm(server, event.slug, withoutPayment(valid({ attendee_name: ['Jo', 'Kim'], attendee_tier: ['guest', 'helper'] })));
      expect(form.status).toBe(303);
      const json = await postJson(server, event.slug, { name: 'Al', email: 'al@example.org', attendees: [{ name: 'Al', tier: 'guest' }] });
      expect(json.status).toBe(303);
    });
    const rows = await registrationsOf(event.id);
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row).toMatchObject({ status: 'PAID', payment_method: 'free', total_minor: 0 });
  });

  it('an event whose discount takes everything off asks nothing about payment either', async () => {
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify({ ...PRICING, discount: { percent: 100 } }) });
    await withServer({}, async (server) => {
      const html = await (await fetch(`${server.url}/events/${event.slug}`)).text();
      expect(html).toContain('<strong>Free:</strong> nothing to pay.');
      expect(html).not.toContain('name="payment"');
      expect((await postForm(server, event.slug, withoutPayment(valid()))).status).toBe(303);
    });
    expect(await registrationsOf(event.id)).toMatchObject([{ status: 'PAID', payment_method: 'free', total_minor: 0 }]);
  });

  it('an event with free and priced tickets keeps the choice: a post without payment registers free tickets as free, and is refused (400, "Payment: choose card or bank transfer", nothing stored) when there is something to pay', async () => {
    const event = await insertEvent(tdb.db, {
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 12000 }, { id: 'baby', label: 'Under 3', price: 0 }] }),
    });
    await withServer({}, async (server) => {
      const html = await (await fetch(`${server.url}/events/${event.slug}`)).text();
      expect(html).toContain('name="payment"');
      expect(html).not.toContain('nothing to pay');

      const priced = await postForm(server, event.slug, withoutPayment(valid({ attendee_name: ['Jo', 'Kim'], attendee_tier: ['adult', 'baby'] })));
      expect(priced.status).toBe(400);
      expect(await priced.text()).toContain('Payment: choose card or bank transfer');
      expect(await registrationsOf(event.id)).toEqual([]);

      const free = await postForm(server, event.slug, withoutPayment(valid({ attendee_name: ['Kim'], attendee_tier: ['baby'] })));
      expect(free.status).toBe(303);
    });
    expect(await registrationsOf(event.id)).toMatchObject([{ status: 'PAID', payment_method: 'free', total_minor: 0 }]);
  });
});

describe('POST /events/:slug/register — bad input', () => {
  const cases: Array<{ rule: string; fields: Fields; named: string[] }> = [
    { rule: 'a missing name', fields: valid({ name: '' }), named: ['Your name'] },
    { rule: 'a bad email', fields: valid({ email: 'not-an-email' }), named: ['Email'] },
    { rule: 'a mobile with letters', fields: valid({ mobile: 'call me' }), named: ['Mobile'] },
    { rule: 'an unknown payment method', fields: valid({ payment: 'cash' }), named: ['Payment'] },
    { rule: 'no attendee at all', fields: valid({ attendee_name: ['', ''], attendee_tier: ['adult', 'adult'] }), named: ['Attendees'] },
    { rule: 'an unknown ticket tier', fields: valid({ attendee_name: ['Jo'], attendee_tier: ['vip'] }), named: ['Attendee 1 ticket'] },
    {
      rule: 'a huge number of attendee rows',
      fields: valid({ attendee_name: Array.from({ length: 500 }, () => 'X'), attendee_tier: Array.from({ length: 500 }, () => 'adult') }),
      named: ['Attendees'],
    },
    {
      rule: 'more attendees than one registration allows',
      fields: valid({ attendee_name: Array.from({ length: 51 }, () => 'X'), attendee_tier: Array.from({ length: 51 }, () => 'adult') }),
      named: ['Attendees'],
    },
    { rule: 'names and tiers that do not pair up', fields: valid({ attendee_name: ['Jo', 'Kim'], attendee_tier: ['adult'] }), named: ['Attendees'] },
    { rule: 'a repeated name field (wrong type)', fields: valid({ name: ['Jo', 'Kim'] }), named: ['Your name'] },
    { rule: 'a family field that is not the checkbox', fields: valid({ family: 'yes please' }), named: ['Household'] },
    { rule: 'everything missing', fields: {}, named: ['Your name', 'Email', 'Payment', 'Attendees'] },
  ];

  it.each(cases)('$rule → 400 page naming the field, nothing stored', async ({ fields, named }) => {
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify(PRICING) });
    await withServer({}, async (server) => {
      const response = await postForm(server, event.slug, fields);
      expect(response.status).toBe(400);
      expect(response.headers.get('content-type')).toContain('text/html');
      const html = await response.text();
      expect(html).toContain('Please check these fields');
      for (const label of named) expect(html).toContain(`${label}:`);
    });
    expect(await registrationsOf(event.id)).toEqual([]);
  });

  it('echoes submitted text escaped, never as markup', async () => {
    const event = await insertEvent(tdb.db);
    await withServer({}, async (server) => {
      const response = await postForm(
        server,
        event.slug,
        valid({ name: '<script>alert(1)</script>', email: '"><img src=x onerror=alert(1)>', attendee_name: ['<b>Bold</b>'], attendee_tier: ['adult'] }),
      );
      expect(response.status).toBe(400);
      const html = await response.text();
      expect(html).not.toContain('<script>alert(1)</script>');
      expect(html).not.toContain('<img src=x');
      expect(html).not.toContain('<b>Bold</b>');
      expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(html).toContain('&lt;b&gt;Bold&lt;/b&gt;');
    });
  });

  it('JSON with wrong types, negative or huge attendee lists answers 400 with the JSON error body naming the fields, never 500', async () => {
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify(PRICING) });
    const bodies: Array<{ body: unknown; fields: string[] }> = [
      { body: { name: 42, email: 'jo@example.org', payment: 'bank', attendees: [{ name: 'Jo', tier: 'adult' }] }, fields: ['name'] },
      { body: { name: 'Jo', email: ['jo@example.org'], payment: 'bank', attendees: [{ name: 'Jo', tier: 'adult' }] }, fields: ['email'] },
      { body: { name: 'Jo', email: 'jo@example.org', payment: 'bank', attendees: -3 }, fields: ['attendees'] },
      { body: { name: 'Jo', email: 'jo@example.org', payment: 'bank', attendees: 'lots' }, fields: ['attendees'] },
      {
        body: { name: 'Jo', email: 'jo@example.org', payment: 'bank', attendees: Array.from({ length: 1000 }, () => ({ name: 'X', tier: 'adult' })) },
        fields: ['attendees'],
      },
      { body: { name: 'Jo', email: 'jo@example.org', payment: 'bank', attendees: [null, 7] }, fields: ['attendees[0]', 'attendees[1]'] },
      { body: { name: 'Jo', email: 'jo@example.org', payment: 'bank', attendees: [{ name: '', tier: 'adult' }] }, fields: ['attendees[0].name'] },
      { body: { name: 'Jo', email: 'jo@example.org', payment: 'bank', family: 'maybe', attendees: [{ name: 'Jo', tier: 'adult' }] }, fields: ['family'] },
      { body: [1, 2, 3], fields: ['name', 'email', 'payment', 'attendees'] },
    ];
    await withServer({ TRUST_PROXY: 'true' }, async (server) => {
      for (const [index, { body, fields }] of bodies.entries()) {
        const response = await fetch(`${server.url}/events/${event.slug}/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `203.0.113.${index + 1}` },
          body: JSON.stringify(body),
        });
        expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
        const answer = (await response.json()) as { error: { code: string; message: string; fields: Array<{ field: string }> } };
        expect(answer.error.code).toBe('invalid_registration');
        expect(answer.error.fields.map((f) => f.field)).toEqual(fields);
      }
      const malformed = await fetch(`${server.url}/events/${event.slug}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.200' },
        body: '{"name": ',
      });
      expect(malformed.status).toBe(400);
    });
    expect(await registrationsOf(event.id)).toEqual([]);
  });
});

describe('page titles name the error', () => {
  const titleOf = async (response: Response) => /<title>([^<]*)<\/title>/.exec(await response.text())?.[1];

  it('the form given back says "Please check the form" or "Not registered" before the event\'s title; the event page and a missing page say what they are', async () => {
    const event = await insertEvent(tdb.db, { title: 'Family Camp', capacity: 1, pricing: JSON.stringify(PRICING) });
    await withServer({}, async (server) => {
      const normal = await fetch(`${server.url}/events/${event.slug}`);
      expect(normal.status).toBe(200);
      expect(await titleOf(normal)).toBe('Family Camp · Grace Community Church');

      const invalid = await postForm(server, event.slug, valid({ email: 'not-an-email', attendee_name: ['Jo'], attendee_tier: ['adult'] }));
      expect(invalid.status).toBe(400);
      expect(await titleOf(invalid)).toBe('Please check the form · Family Camp · Grace Community Church');

      const tooMany = await postForm(server, event.slug, valid());
      expect(tooMany.status).toBe(409);
      expect(await titleOf(tooMany)).toBe('Not registered · Family Camp · Grace Community Church');

      const missing = await fetch(`${server.url}/events/no-such-event`);
      expect(missing.status).toBe(404);
      expect(await titleOf(missing)).toBe('Not found · Grace Community Church');
    });
    expect(await registrationsOf(event.id)).toEqual([]);
  });
});

describe('POST /events/:slug/register — the most one registration may cost', () => {
  it('a total above what one charge can take answers 400 naming the attendees, by bank and by card, never 500, and stores nothing', async () => {
    // Each ticket alone is allowed; three of them are not (nor could the amount be stored).
    const event = await insertEvent(tdb.db, { online_payment: true, pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 40_000_000 }] }) });
    const fake = await startFakeProvider({ webhookSecret: 'whsec_register_test' });
    try {
      await withServer(fake.configEnv(), async (server) => {
        for (const payment of ['bank', 'card']) {
          const response = await postJson(server, event.slug, {
            name: 'Jo Citizen',
            email: 'jo@example.org',
            payment,
            attendees: [{ name: 'A', tier: 'adult' }, { name: 'B', tier: 'adult' }, { name: 'C', tier: 'adult' }],
          });
          expect(response.status, payment).toBe(400);
          const answer = (await response.json()) as { error: { code: string; fields: Array<{ field: string }> } };
          expect(answer.error.code).toBe('invalid_registration');
          expect(answer.error.fields.map((f) => f.field)).toEqual(['attendees']);
        }
        const two = await postJson(server, event.slug, { name: 'Jo Citizen', email: 'jo@example.org', payment: 'bank', attendees: [{ name: 'A', tier: 'adult' }, { name: 'B', tier: 'adult' }] });
        expect(two.status).toBe(303);
      });
      expect(fake.sessionCreateCalls()).toEqual([]);
      expect(await tdb.db('checkout_sessions').where({ event_id: event.id })).toEqual([]);
      expect((await registrationsOf(event.id)).map((r) => r.total_minor)).toEqual([80_000_000]);
    } finally {
      await fake.close();
    }
  });
});

describe('POST /events/:slug/register — capacity', () => {
  it('a registration that does not fit answers 409 with the form again: the reason at the top, everything typed back, the places left now', async () => {
    const event = await insertEvent(tdb.db, { capacity: 2, pricing: JSON.stringify(PRICING) });
    await insertRegistration(tdb.db, createTestContext({ db: tdb.db }).cipher, event.id, { status: 'PENDING' });
    await withServer({}, async (server) => {
      const response = await postForm(
        server,
        event.slug,
        valid({ mobile: '0400 000 000', family: 'on', attendee_name: ['Ana Lee', 'Ben Lee', ''], attendee_tier: ['adult', 'child', 'adult'] }),
      );
      expect(response.status).toBe(409);
      const html = unescapeEquals(await response.text());
      expect(html).toMatch(/<h2>Register<\/h2>\s*<p class="error" role="alert" id="form-error" tabindex="-1" autofocus>Sorry, only 1 place is left for this event\.<\/p>/);
      expect(html).toContain('id="name" name="name" value="Jo Citizen"');
      expect(html).toContain('id="email" name="email" type="email" value="jo@example.org"');
      expect(html).toContain('value="0400 000 000"');
      expect(html).toMatch(/id="family" name="family" type="checkbox" value="on" checked/);
      expect(html).toMatch(/id="payment-bank" name="payment" type="radio" value="bank" checked/);
      expect(html).toContain('id="attendee-name-1" name="attendee_name" value="Ana Lee"');
      expect(html).toContain('id="attendee-name-2" name="attendee_name" value="Ben Lee"');
      expect(html).toMatch(/id="attendee-tier-2"[^>]*>\s*<option value="adult">[^<]*<\/option><option value="child" selected>/);
      // Both named rows come back, though only one place is left; the blank one does not.
      expect(html).not.toContain('id="attendee-name-3"');
      expect(html).toContain('Only 1 place is left, so this registration can name 1 person.');
      expect(html).toContain('<strong>Only 1 place left</strong>');
    });
    expect(await registrationsOf(event.id)).toHaveLength(1);
  });

  it('a registration refused because the last place went answers 409 with the sold-out page saying why', async () => {
    const event = await insertEvent(tdb.db, { capacity: 1 });
    await insertRegistration(tdb.db, createTestContext({ db: tdb.db }).cipher, event.id, { status: 'PENDING' });
    await withServer({}, async (server) => {
      const response = await postForm(server, event.slug, valid({ attendee_name: ['Ana Lee'], attendee_tier: ['adult'] }));
      expect(response.status).toBe(409);
      const html = await response.text();
      expect(html).toMatch(/<h2>Sold out<\/h2>\s*<p class="error" role="alert">Sorry, this event is sold out\.<\/p>/);
      expect(html).not.toContain('<form method="post"');
    });
    expect(await registrationsOf(event.id)).toHaveLength(1);
  });

  it('concurrent registrations never exceed capacity: the event row is locked while seats are counted', async () => {
    const event = await insertEvent(tdb.db, { capacity: 3 });
    await withServer({ TRUST_PROXY: 'true' }, async (server) => {
      const responses = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          postForm(server, event.slug, valid({ email: `p${i}@example.org`, attendee_name: [`P${i}`], attendee_tier: ['adult'] }), {
            'x-forwarded-for': `198.51.100.${i + 1}`,
          }),
        ),
      );
      expect(responses.map((r) => r.status).sort()).toEqual([303, 303, 303, 409, 409, 409, 409, 409]);
    });
    const rows = await registrationsOf(event.id);
    expect(rows.reduce((seats, row) => seats + Number(row.attendee_count), 0)).toBe(3);
  });
});

describe('POST /events/:slug/register — rate limit', () => {
  it('the 11th registration in a minute from one IP gets 429 with Retry-After, as a page to the form and as the JSON body to a JSON post; another client IP (TRUST_PROXY) is unaffected', async () => {
    const event = await insertEvent(tdb.db, { capacity: null });
    await withServer({ TRUST_PROXY: 'true' }, async (server) => {
      const from = (ip: string) => postForm(server, event.slug, valid({ attendee_name: ['Jo'], attendee_tier: ['adult'] }), { 'x-forwarded-for': ip });
      const statuses: number[] = [];
      for (let i = 0; i < 10; i++) statuses.push((await from('192.0.2.10')).status);
      expect(statuses).toEqual(Array.from({ length: 10 }, () => 303));
      const limited = await from('192.0.2.10');
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(limited.headers.get('content-type')).toContain('text/html');
      const page = await limited.text();
      expect(page).toContain('Too many tries');
      expect(page).toMatch(/<p role="alert">Too many requests; try again in \d+ seconds\.<\/p>/);

      const asJson = await fetch(`${server.url}/events/${event.slug}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.10' },
        body: JSON.stringify({ name: 'Jo Citizen', email: 'jo@example.org', payment: 'bank', attendees: [{ name: 'Jo', tier: 'adult' }] }),
      });
      expect(asJson.status).toBe(429);
      expect(Number(asJson.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await asJson.json()).toEqual({ error: { code: 'rate_limited', message: expect.stringMatching(/^Too many requests; try again in \d+ seconds\.$/) } });
      expect((await from('192.0.2.11')).status).toBe(303);
    });
    expect(await registrationsOf(event.id)).toHaveLength(11);
  });

  it('without TRUST_PROXY a spoofed X-Forwarded-For does not get around the limit', async () => {
    const event = await insertEvent(tdb.db, { capacity: null });
    await withServer({ TRUST_PROXY: undefined }, async (server) => {
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) {
        const response = await postForm(server, event.slug, valid({ attendee_name: ['Jo'], attendee_tier: ['adult'] }), {
          'x-forwarded-for': `10.0.0.${i + 1}`,
        });
        statuses.push(response.status);
      }
      expect(statuses.slice(0, 10).every((s) => s === 303)).toBe(true);
      expect(statuses[10]).toBe(429);
    });
  });

  it('behind TRUST_PROXY a client is counted by its address without the port a proxy may append; unreadable addresses share one count', async () => {
    const event = await insertEvent(tdb.db);
    await withServer({ TRUST_PROXY: 'true' }, async (server) => {
      const eleventhFrom = async (forwardedFor: (i: number) => string) => {
        const statuses: number[] = [];
        for (let i = 0; i < 11; i++) statuses.push((await postForm(server, event.slug, { name: '' }, { 'x-forwarded-for': forwardedFor(i) })).status);
        expect(statuses.slice(0, 10), forwardedFor(0)).toEqual(Array.from({ length: 10 }, () => 400));
        return statuses[10];
      };
      expect(await eleventhFrom((i) => `203.0.113.5:${40000 + i}`)).toBe(429);
      expect(await eleventhFrom((i) => `[2001:db8::${i + 1}]:${443 + i}`)).toBe(429);
      expect(await eleventhFrom((i) => `not-an-address-${i}`)).toBe(429);
      expect((await postForm(server, event.slug, { name: '' }, { 'x-forwarded-for': '203.0.113.6:40000' })).status).toBe(400);
    });
  });

  it('bad input counts against the limit too, so guessing is throttled', async () => {
    const event = await insertEvent(tdb.db);
    await withServer({}, async (server) => {
      const statuses: number[] = [];
      for (let i = 0; i < 11; i++) statuses.push((await postForm(server, event.slug, { name: '' })).status);
      expect(statuses.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => 400));
      expect(statuses[10]).toBe(429);
    });
  });
});

describe('POST /events/:slug/register — captcha', () => {
  const fieldsWithoutPayment = (fields: Record<string, string | string[]>) => Object.fromEntries(Object.entries(fields).filter(([key]) => key !== 'payment'));

  it('with captcha configured, a missing or wrong token is refused with 400 and a valid one is verified server-side', async () => {
    const captcha = await startCaptchaServer({ secret: 'captcha-secret', validTokens: ['good-token'] });
    const event = await insertEvent(tdb.db);
    const env = { CAPTCHA_SECRET_KEY: 'captcha-secret', CAPTCHA_SITE_KEY: 'site-key-123', CAPTCHA_VERIFY_URL: captcha.verifyUrl };
    try {
      await withServer(env, async (server) => {
        const fields = valid({ attendee_name: ['Jo'], attendee_tier: ['adult'] });
        const missing = await postForm(server, event.slug, fields);
        expect(missing.status).toBe(400);
        expect(await missing.text()).toContain('The bot check did not pass');
        expect(captcha.checks).toHaveLength(0);

        const wrong = await postForm(server, event.slug, { ...fields, 'cf-turnstile-response': 'forged' });
        expect(wrong.status).toBe(400);
        expect(await registrationsOf(event.id)).toEqual([]);

        const good = await postForm(server, event.slug, { ...fields, 'cf-turnstile-response': 'good-token' });
        expect(good.status).toBe(303);
        expect(captcha.checks.at(-1)).toEqual({ secret: 'captcha-secret', response: 'good-token', remoteip: '127.0.0.1' });
        expect(await registrationsOf(event.id)).toHaveLength(1);

        // A token passes once.
        const replay = await postForm(server, event.slug, { ...fields, 'cf-turnstile-response': 'good-token' });
        expect(replay.status).toBe(400);
        const json = await postJson(server, event.slug, { name: 'Jo', email: 'jo@example.org', payment: 'bank', attendees: [{ name: 'Jo', tier: 'adult' }] });
        expect(json.status).toBe(400);
        expect(((await json.json()) as { error: { code: string } }).error.code).toBe('captcha_failed');
      });
    } finally {
      await captcha.close();
    }
    expect(await registrationsOf(event.id)).toHaveLength(1);
  });

  it('a free event priced by the office while a registration waits for its bot check: refused (400) with the form as the event is now, its payment choice there to make', async () => {
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 0 }] }) });
    const captcha = await startCaptchaServer({
      secret: 'captcha-secret',
      validTokens: ['good-token'],
      beforeAnswer: async () => {
        await tdb.db('events').where({ id: event.id }).update({ pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 2500 }] }) });
      },
    });
    const env = { CAPTCHA_SECRET_KEY: 'captcha-secret', CAPTCHA_SITE_KEY: 'site-key-123', CAPTCHA_VERIFY_URL: captcha.verifyUrl };
    try {
      await withServer(env, async (server) => {
        const answer = await postForm(server, event.slug, { ...fieldsWithoutPayment(valid({ attendee_name: ['Jo'], attendee_tier: ['adult'] })), 'cf-turnstile-response': 'good-token' });
        expect(answer.status).toBe(400);
        const html = await answer.text();
        expect(html).toContain('choose card or bank transfer');
        expect(html).toContain('name="payment"');
        expect(html).not.toContain('nothing to pay');
      });
    } finally {
      await captcha.close();
    }
    expect(await registrationsOf(event.id)).toEqual([]);
  });

  it('a captcha secret the verifier refuses is the church’s problem, not the registrant’s: 503 and an error-log row, never "did not pass"', async () => {
    const captcha = await startCaptchaServer({ secret: 'the-right-secret', validTokens: ['good-token'] });
    const event = await insertEvent(tdb.db);
    const env = { CAPTCHA_SECRET_KEY: 'a-stale-secret', CAPTCHA_SITE_KEY: 'site-key-123', CAPTCHA_VERIFY_URL: captcha.verifyUrl };
    const before = Number((await tdb.db('error_logs').where({ source: 'http:register' }).count<Array<{ n: string }>>('* as n'))[0]?.n);
    try {
      await withServer(env, async (server) => {
        const response = await postForm(server, event.slug, {
          ...valid({ attendee_name: ['Jo'], attendee_tier: ['adult'] }),
          'cf-turnstile-response': 'good-token',
        });
        expect(response.status).toBe(503);
        expect(await response.text()).not.toContain('did not pass');
      });
    } finally {
      await captcha.close();
    }
    const logged = await tdb.db('error_logs').where({ source: 'http:register' }).orderBy('id').pluck('message');
    expect(logged).toHaveLength(before + 1);
    expect(logged.at(-1)).toContain('CAPTCHA_SECRET_KEY');
    expect(await registrationsOf(event.id)).toEqual([]);
  });

  it('a captcha verifier that does not answer in time refuses the registration (503) instead of letting it through', async () => {
    const captcha = await startCaptchaServer({ secret: 'captcha-secret', validTokens: ['good-token'] });
    captcha.delayResponses(8_000);
    const event = await insertEvent(tdb.db);
    const env = { CAPTCHA_SECRET_KEY: 'captcha-secret', CAPTCHA_SITE_KEY: 'site-key-123', CAPTCHA_VERIFY_URL: captcha.verifyUrl };
    try {
      await withServer(env, async (server) => {
        const started = Date.now();
        const response = await postForm(server, event.slug, {
          ...valid({ attendee_name: ['Jo'], attendee_tier: ['adult'] }),
          'cf-turnstile-response': 'good-token',
        });
        expect(response.status).toBe(503);
        expect(Date.now() - started).toBeLessThan(7_500);
      });
    } finally {
      await captcha.close();
    }
    expect(await registrationsOf(event.id)).toEqual([]);
  });
});

describe('POST /events/:slug/register — card', () => {
  it('card answers 303 to the provider page with an OPEN staging row priced on the server, and no registration yet', async () => {
    const fake = await startFakeProvider({ webhookSecret: 'whsec_register_test' });
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify(PRICING), online_payment: true });
    try {
      await withServer(fake.configEnv(), async (server) => {
        const response = await postForm(server, event.slug, valid({ payment: 'card', amount: '1' }));
        expect(response.status).toBe(303);
        const location = response.headers.get('location') ?? '';
        expect(location.startsWith(`${fake.apiBase}/pay/cs_`)).toBe(true);
        const [create] = fake.sessionCreateCalls();
        expect(create?.body.success_url).toBe(`${testEnv().AUTH_URL}/events/${event.slug}/success?session_id={CHECKOUT_SESSION_ID}`);

        fake.failNext(3, 500);
        const unavailable = await postForm(server, event.slug, valid({ payment: 'card' }));
        expect(unavailable.status).toBe(502);
        // The form again, as typed, to try once more or choose bank transfer.
        const html = unescapeEquals(await unavailable.text());
        expect(html).toContain('id="form-error" tabindex="-1" autofocus>The card payment provider could not be reached; no payment was taken.</p>');
        expect(html).toContain('id="attendee-name-2" name="attendee_name" value="Kim Citizen"');
        expect(html).toMatch(/id="payment-card" name="payment" type="radio" value="card" checked/);
      });
      const rows = await tdb.db('checkout_sessions').where({ event_id: event.id }).orderBy('created_at').select('status', 'net_minor', 'provider_url');
      expect(rows[0]).toMatchObject({ status: 'OPEN', net_minor: 18000 });
      expect(rows[1]).toMatchObject({ status: 'EXPIRED' });
      expect(await registrationsOf(event.id)).toEqual([]);
      expect(fake.refundCalls).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});

describe('POST /events/:slug/register — below the card provider\'s minimum charge', () => {
  // APP_CURRENCY is AUD in these tests: the provider's minimum is $0.50 (50).
  const cheap = (price: number, extra: Record<string, unknown> = {}) =>
    insertEvent(tdb.db, { online_payment: true, pricing: JSON.stringify({ tiers: [{ id: 'candle', label: 'Candle', price }] }), ...extra });
  const oneCandle = (payment: string) => valid({ payment, attendee_name: ['Ana Lee'], attendee_tier: ['candle'] });

  it('a card total below the minimum is refused before any provider call: 409, the form again saying the minimum with bank transfer chosen, nothing staged or registered; bank transfer then registers it', async () => {
    const event = await cheap(40);
    const fake = await startFakeProvider({ webhookSecret: 'whsec_register_test' });
    try {
      await withServer(fake.configEnv(), async (server) => {
        const response = await postForm(server, event.slug, oneCandle('card'));
        expect(response.status).toBe(409);
        const html = unescapeEquals(await response.text());
        expect(html).toContain(
          'id="form-error" tabindex="-1" autofocus>Card payment needs at least $0.50, and this registration comes to $0.40 by card. Please choose bank transfer instead.</p>',
        );
        expect(html).not.toContain('could not be reached');
        // Everything typed comes back, with bank transfer chosen: one more submit registers.
        expect(html).toContain('id="attendee-name-1" name="attendee_name" value="Ana Lee"');
        expect(html).toMatch(/id="payment-bank" name="payment" type="radio" value="bank" checked/);
        expect(html).not.toMatch(/id="payment-card" name="payment" type="radio" value="card" checked/);

        const json = await postJson(server, event.slug, { name: 'Jo Citizen', email: 'jo@example.org', payment: 'card', attendees: [{ name: 'A', tier: 'candle' }] });
        expect(json.status).toBe(409);
        expect(((await json.json()) as { error: { code: string; message: string } }).error).toMatchObject({
          code: 'card_amount_too_small',
          message: 'Card payment needs at least $0.50, and this registration comes to $0.40 by card. Please choose bank transfer instead.',
        });

        expect(fake.requests).toEqual([]);
        expect(await tdb.db('checkout_sessions').where({ event_id: event.id })).toEqual([]);
        expect(await registrationsOf(event.id)).toEqual([]);

        const bank = await postForm(server, event.slug, oneCandle('bank'));
        expect(bank.status).toBe(303);
      });
      expect((await registrationsOf(event.id)).map((r) => [r.status, r.payment_method, r.total_minor])).toEqual([['PENDING', 'bank', 40]]);
    } finally {
      await fake.close();
    }
  });

  it('the event page says beside the card choice that card payment needs at least $0.50, only when a ticket bought alone would be below it', async () => {
    const hint = 'Card payment needs at least $0.50 in total; for less, please choose bank transfer.';
    const cheapEvent = await cheap(40);
    const feeBringsItUp = await cheap(20, { pass_card_fee: true });
    await withServer(CARD_ENV, async (server) => {
      expect(await (await fetch(`${server.url}/events/${cheapEvent.slug}`)).text()).toContain(hint);
      expect(await (await fetch(`${server.url}/events/${feeBringsItUp.slug}`)).text()).not.toContain(hint);
    });
  });

  it('at the minimum the checkout opens, the card fee counted: $0.50 alone, and $0.20 whose fee brings it to $0.50', async () => {
    const atMinimum = await cheap(50);
    const withFee = await cheap(20, { pass_card_fee: true });
    const fake = await startFakeProvider({ webhookSecret: 'whsec_register_test' });
    try {
      await withServer(fake.configEnv(), async (server) => {
        for (const event of [atMinimum, withFee]) {
          const response = await postForm(server, event.slug, oneCandle('card'));
          expect(response.status, event.slug).toBe(303);
          expect(response.headers.get('location')?.startsWith(`${fake.apiBase}/pay/cs_`)).toBe(true);
        }
      });
      expect(fake.sessionCreateCalls()).toHaveLength(2);
      const staged = await tdb.db('checkout_sessions').where({ event_id: withFee.id }).first('status', 'net_minor', 'surcharge_minor');
      expect(staged).toEqual({ status: 'OPEN', net_minor: 20, surcharge_minor: 30 });
    } finally {
      await fake.close();
    }
  });

  it('the provider\'s own amount_too_small (its minimum above our table\'s) is the same refusal, never "provider unavailable", and is not retried', async () => {
    const event = await cheap(60);
    const fake = await startFakeProvider({ webhookSecret: 'whsec_register_test', minimumCharge: 100 });
    try {
      await withServer(fake.configEnv(), async (server) => {
        const response = await postForm(server, event.slug, oneCandle('card'));
        expect(response.status).toBe(409);
        const html = unescapeEquals(await response.text());
        expect(html).toContain(
          'id="form-error" tabindex="-1" autofocus>This registration comes to $0.60 by card, which is less than our card payment provider can charge in one payment. Please choose bank transfer instead.</p>',
        );
        expect(html).toMatch(/id="payment-bank" name="payment" type="radio" value="bank" checked/);
      });
      expect(fake.sessionCreateCalls()).toHaveLength(1);
      // The staging row is closed as for any session the payer never saw.
      expect(await tdb.db('checkout_sessions').where({ event_id: event.id }).select('status')).toEqual([{ status: 'EXPIRED' }]);
      expect(await registrationsOf(event.id)).toEqual([]);
    } finally {
      await fake.close();
    }
  });
});

describe('POST /events/:slug/register — once the event has started', () => {
  // The test server's clock is 2026-11-22T00:00Z.
  const started = new Date('2026-11-21T23:00:00Z');

  it('the public form is closed: the page says so instead of showing the form, and a post answers 409 and stores nothing, by bank or by card', async () => {
    const fake = await startFakeProvider({ webhookSecret: 'whsec_register_test' });
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify(PRICING), online_payment: true, starts_at: started });
    try {
      await withServer(fake.configEnv(), async (server) => {
        const page = await fetch(`${server.url}/events/${event.slug}`);
        const html = await page.text();
        expect(html).toContain('Registration closed');
        expect(html).not.toContain('<form method="post"');

        const byBank = await postForm(server, event.slug, valid());
        expect(byBank.status).toBe(409);
        expect(await byBank.text()).toContain('Registration for this event closed when it started.');
        const byCard = await postJson(server, event.slug, {
          name: 'Jo Citizen',
          email: 'jo@example.org',
          payment: 'card',
          attendees: [{ name: 'Jo Citizen', tier: 'adult' }],
        });
        expect(byCard.status).toBe(409);
        expect(await byCard.json()).toMatchObject({ error: { code: 'registration_closed' } });
      });
      expect(await registrationsOf(event.id)).toEqual([]);
      expect(await tdb.db('checkout_sessions').where({ event_id: event.id })).toEqual([]);
      expect(fake.sessionCreateCalls()).toEqual([]);
    } finally {
      await fake.close();
    }
  });

  it('the closed page no longer counts the places left (nor says sold out), on the page and on a refused post', async () => {
    const event = await insertEvent(tdb.db, { capacity: 50, starts_at: started });
    const full = await insertEvent(tdb.db, { capacity: 1, starts_at: started });
    await insertRegistration(tdb.db, createTestContext({ db: tdb.db }).cipher, full.id, { attendee_count: 1 });
    await withServer({}, async (server) => {
      for (const slug of [event.slug, full.slug]) {
        const page = await fetch(`${server.url}/events/${slug}`);
        expect(page.status).toBe(200);
        const html = await page.text();
        expect(html).toContain('<h2>Registration closed</h2>');
        expect(html).not.toMatch(/places? left|Sold out/);
      }
      const refused = await postForm(server, event.slug, valid({ attendee_name: ['Jo'], attendee_tier: ['adult'] }));
      expect(refused.status).toBe(409);
      const html = await refused.text();
      expect(html).toContain('Registration for this event closed when it started.');
      expect(html).not.toContain('places left');
    });
  });

  it('an event that has not started yet still takes registrations up to its start', async () => {
    const event = await insertEvent(tdb.db, { pricing: JSON.stringify(PRICING), starts_at: new Date('2026-11-22T00:01:00Z') });
    await withServer({}, async (server) => {
      expect((await postForm(server, event.slug, valid())).status).toBe(303);
    });
    expect(await registrationsOf(event.id)).toHaveLength(1);
  });
});
