import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { NON_ASCII_LOCAL_PART_MESSAGE } from '../../src/contact-rules.js';
import { connectDb } from '../../src/db/connect.js';
import { RECORDED_FAILURE_MESSAGE, UNRECORDED_FAILURE_MESSAGE } from '../../src/http/errors.js';
import { KEEP_PAGE_NOTE } from '../../src/http/registration-view.js';
import { buildServer } from '../../src/http/server.js';
import { CONFIRMATIONS_PER_ADDRESS_PER_HOUR } from '../../src/signup/confirmations.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';
import { startTestServer } from '../support/http.js';
import { queuedMessages } from '../support/webhook-events.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
  await setSetting(tdb.db, 'bank.accountName', 'Grace Community Church', new Date());
  await setSetting(tdb.db, 'bank.bsb', '062-000', new Date());
  await setSetting(tdb.db, 'bank.accountNumber', '1234 5678', new Date());
});
afterAll(async () => {
  await tdb.drop();
});

const form = (fields: Array<[string, string]>) => new URLSearchParams(fields).toString();
const registration = (name: string, email: string, attendee = 'Guest'): Array<[string, string]> => [
  ['name', name],
  ['email', email],
  ['payment', 'bank'],
  ['attendee_name', attendee],
  ['attendee_tier', 'adult'],
];

async function post(url: string, body: string, contentType = 'application/x-www-form-urlencoded', forwardedFor?: string) {
  return fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': contentType, ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}) },
    body,
  });
}

const namedFields = (html: string) => [...html.matchAll(/data-field="([^"]*)"/g)].map((m) => m[1]);

/** Posts one registration as a form and as JSON, each from its own address: both are refused with 400 naming `fields`. */
async function expectRefusedBothWays(url: string, name: string, attendee: string, fields: string[], addresses: [string, string]) {
  const asForm = await post(url, form(registration(name, 'jo@example.org', attendee)), undefined, addresses[0]);
  expect(asForm.status).toBe(400);
  expect(namedFields(await asForm.text())).toEqual(fields);
  const asJson = await post(
    url,
    JSON.stringify({ name, email: 'jo@example.org', payment: 'bank', attendees: [{ name: attendee, tier: 'adult' }] }),
    'application/json',
    addresses[1],
  );
  expect(asJson.status).toBe(400);
  const body = (await asJson.json()) as { error: { fields: Array<{ field: string; message: string }> } };
  expect(body.error.fields.map((f) => f.field)).toEqual(fields);
  return body.error.fields;
}

describe('names on the public form', () => {
  it('are at most 80 characters and carry no web or email address: refused with 400 naming the field, as the form and as JSON', async () => {
    const event = await insertEvent(tdb.db);
    const server = await startTestServer(createTestContext({ db: tdb.db, env: { TRUST_PROXY: 'true' } }));
    try {
      const url = `${server.url}/events/${event.slug}/register`;
      const cases: Array<[string, string, string]> = [
        ['x'.repeat(81), 'Guest', 'name'],
        ['Jo Citizen', 'Cheap deals at https://spam.example.com/offer', 'attendees[0].name'],
        ['Visit www.example-pills.com', 'Guest', 'name'],
        ['Jo Citizen', 'write to deals@spam.example.com', 'attendees[0].name'],
        ['Jo Citizen', 'bit.ly/win', 'attendees[0].name'],
        // Newer top-level domains, which mail clients link as readily as .com.
        ['Prizes at winbig.click', 'Guest', 'name'],
        ['Jo Citizen', 'cheap-meds.online today', 'attendees[0].name'],
      ];
      let client = 0;
      for (const [name, attendee, field] of cases) {
        await expectRefusedBothWays(url, name, attendee, [field], [`198.51.100.${++client}`, `198.51.100.${++client}`]);
      }
      const fine = await post(url, form(registration('x'.repeat(80), 'jo@example.org', 'J. R. Smith-Jones')), undefined, '198.51.100.200');
      expect(fine.status).toBe(303);
      expect(await tdb.db('registrations').where({ event_id: event.id }).pluck('attendees')).toEqual([[{ name: 'J. R. Smith-Jones', tier: 'adult' }]]);
    } finally {
      await server.close();
    }
  });
});

describe('names need a visible letter or digit', () => {
  it('a name of only invisible characters (zero-width and format characters, Hangul and braille fillers) is refused with 400 naming the field; names in any script pass', async () => {
    const event = await insertEvent(tdb.db, { capacity: null });
    const server = await startTestServer(createTestContext({ db: tdb.db, env: { TRUST_PROXY: 'true' } }));
    try {
      const url = `${server.url}/events/${event.slug}/register`;
      const cases: Array<[string, string, string[]]> = [
        ['\u200b', '\u3164', ['name', 'attendees[0].name']],
        ['\u200d\u2060\ufeff', 'Guest', ['name']],
        ['Jo Citizen', '\uffa0\u115f\u1160', ['attendees[0].name']],
        ['\u2800 \u200b', 'Guest', ['name']],
        ['Jo Citizen', '\u200e\u061c', ['attendees[0].name']],
      ];
      let client = 0;
      for (const [name, attendee, fields] of cases) {
        const refused = await expectRefusedBothWays(url, name, attendee, fields, [`198.51.100.${++client}`, `198.51.100.${++client}`]);
        expect(refused[0]?.message).toContain('at least one visible letter or digit');
      }
      expect(await tdb.db('registrations').where({ event_id: event.id }).count({ n: '*' }).first()).toEqual({ n: 0 });

      const names = ['José Núñez', 'Nguyễn Văn An', '李小龍', "O'Brien-Smith", 'محمد علي', '김민준', 'Ωmega 3'];
      for (const name of names) {
        const answer = await post(url, form(registration(name, 'jo@example.org', name)), undefined, `198.51.100.${++client}`);
        expect(answer.status, name).toBe(303);
      }
      const stored = await tdb.db('registrations').where({ event_id: event.id }).orderBy('created_at').pluck('attendees');
      expect(stored.map((attendees: Array<{ name: string }>) => attendees[0]?.name).sort()).toEqual([...names].sort());
    } finally {
      await server.close();
    }
  });
});

describe('confirmation emails', () => {
  it(`go to one address at most ${CONFIRMATIONS_PER_ADDRESS_PER_HOUR} times an hour; later registrations are still made and shown`, async () => {
    const event = await insertEvent(tdb.db, { capacity: null });
    const clock = new FixedClock(new Date('2026-11-22T01:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock, env: { TRUST_PROXY: 'true' } });
    const server = await startTestServer(ctx);
    try {
      const url = `${server.url}/events/${event.slug}/register`;
      const pages: number[] = [];
      // The address in different spellings is still one recipient.
      for (const [n, email] of ['ruth@example.org', 'Ruth@Example.org', 'ruth@example.org', 'RUTH@example.org', 'ruth@example.org'].entries()) {
        const answer = await post(url, form(registration(`Ruth ${n}`, email)), undefined, `203.0.113.${n + 1}`);
        expect(answer.status).toBe(303);
        pages.push((await fetch(`${server.url}${answer.headers.get('location')}`)).status);
      }
      expect(pages).toEqual([200, 200, 200, 200, 200]);
      expect(await tdb.db('registrations').where({ event_id: event.id }).count({ n: '*' }).first()).toEqual({ n: 5 });
      const toRuth = async () =>
        (await queuedMessages(ctx, 'registration-confirmation')).filter((m) => m.to.some((to) => to.toLowerCase() === 'ruth@example.org'));
      expect((await toRuth()).map((m) => m.text.match(/Ruth \d/)?.[0])).toEqual(['Ruth 0', 'Ruth 1', 'Ruth 2']);

      // Another address is not affected, and an hour later the first gets confirmations again.
      await post(url, form(registration('Sam', 'sam@example.org')), undefined, '203.0.113.50');
      clock.set(new Date('2026-11-22T02:00:01Z'));
      await post(url, form(registration('Ruth again', 'ruth@example.org')), undefined, '203.0.113.51');
      expect((await toRuth()).map((m) => m.text.match(/Ruth (\d|again)/)?.[0])).toEqual(['Ruth 0', 'Ruth 1', 'Ruth 2', 'Ruth again']);
      expect((await queuedMessages(ctx, 'registration-confirmation')).filter((m) => m.to.includes('sam@example.org'))).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});

describe('email addresses beyond ASCII', () => {
  it('a domain with accents (jo@münchen.de) is registered under its ASCII form, confirmed to it and matched with it; accents before the @ are refused with 400 saying why', async () => {
    const event = await insertEvent(tdb.db, { capacity: null });
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date('2026-11-22T01:00:00Z')), env: { TRUST_PROXY: 'true' } });
    const server = await startTestServer(ctx);
    try {
      const url = `${server.url}/events/${event.slug}/register`;
      const accepted = await post(url, form(registration('Jo Müller', 'jo@münchen.de')), undefined, '198.51.100.1');
      expect(accepted.status).toBe(303);
      const again = await post(url, form(registration('Jo Müller', 'jo@xn--mnchen-3ya.de')), undefined, '198.51.100.2');
      expect(again.status).toBe(303);
      const rows = await tdb.db('registrations').where({ event_id: event.id }).select('contact_email_enc', 'contact_email_hash');
      expect(rows.map((r: { contact_email_enc: string }) => ctx.cipher.decrypt(r.contact_email_enc))).toEqual(['jo@xn--mnchen-3ya.de', 'jo@xn--mnchen-3ya.de']);
      expect(new Set(rows.map((r: { contact_email_hash: string }) => r.contact_email_hash)).size).toBe(1);
      const confirmations = await queuedMessages(ctx, 'registration-confirmation');
      expect(confirmations.filter((m) => m.to.includes('jo@xn--mnchen-3ya.de'))).toHaveLength(2);

      const refused = await post(
        url,
        JSON.stringify({ name: 'José', email: 'josé@example.org', payment: 'bank', attendees: [{ name: 'José', tier: 'adult' }] }),
        'application/json',
        '198.51.100.3',
      );
      expect(refused.status).toBe(400);
      const body = (await refused.json()) as { error: { fields: Array<{ field: string; message: string }> } };
      expect(body.error.fields).toEqual([{ field: 'email', message: `Email: ${NON_ASCII_LOCAL_PART_MESSAGE}` }]);
      expect(await tdb.db('registrations').where({ event_id: event.id }).count({ n: '*' }).first()).toEqual({ n: 2 });
    } finally {
      await server.close();
    }
  });
});

describe('errors on pages', () => {
  it('a browser gets an error as a page with the same status and message as the JSON body (too large, unreadable, unknown address, unexpected failure with its error id); /api/, JSON posts and JSON Accept keep the JSON body', async () => {
    await tdb.db('rate_limits').delete();
    const event = await insertEvent(tdb.db);
    const ctx = createTestContext({ db: tdb.db });
    const built = await buildServer(ctx, { packageVersion: '0.0.0-test' });
    built.app.get('/failing-page', async () => {
      throw new Error('the page broke');
    });
    const base = await built.app.listen({ port: 0, host: '127.0.0.1' });
    const asJson = { accept: 'application/json' };
    const answers = async (path: string, init: RequestInit & { headers?: Record<string, string> } = {}) => {
      const page = await fetch(`${base}${path}`, init);
      const json = await fetch(`${base}${path}`, { ...init, headers: { ...init.headers, ...asJson } });
      expect(page.headers.get('content-type'), path).toContain('text/html');
      expect(page.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(json.headers.get('content-type'), path).toContain('application/json');
      const html = await page.text();
      const body = (await json.json()) as { error: { code: string; message: string; id?: number } };
      expect(html, path).toContain(`<p role="alert">${body.error.message}</p>`);
      return { status: [page.status, json.status], html, error: body.error };
    };
    try {
      const register = `/events/${event.slug}/register`;
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const tooLarge = await answers(register, { method: 'POST', headers: form, body: `name=${'x'.repeat(300 * 1024)}` });
      expect(tooLarge.status).toEqual([413, 413]);
      expect(tooLarge.html).toContain('Too much was sent');
      const unreadable = await answers(register, { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<name>x</name>' });
      expect(unreadable.status).toEqual([415, 415]);
      expect(unreadable.html).toContain('Not a form we can read');
      const unknown = await answers('/no-such-page');
      expect(unknown.status).toEqual([404, 404]);
      expect(unknown.error.code).toBe('not_found');

      const failed = await answers('/failing-page');
      expect(failed.status).toEqual([500, 500]);
      expect(failed.error.message).toBe(RECORDED_FAILURE_MESSAGE);
      const pageId = Number(/Error reference: (\d+)/.exec(failed.html)?.[1]);
      const rows = await tdb.db('error_logs').whereIn('id', [pageId, failed.error.id as number]).pluck('message');
      expect(rows).toEqual(['the page broke', 'the page broke']);

      // What only programs call answers JSON whatever it accepts.
      for (const [path, init, status] of [
        ['/api/no-such-endpoint', {}, 404],
        // A cron endpoint takes no payload, so whatever body comes is dropped and the missing bearer answers.
        ['/api/cron/sweep-checkouts', { method: 'POST', headers: { 'content-type': 'application/xml' }, body: '<x/>' }, 401],
        ['/api/stripe/webhook', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(1024 * 1024 + 1) }, 413],
        [register, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{not json' }, 400],
      ] as Array<[string, RequestInit, number]>) {
        const response = await fetch(`${base}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), accept: 'text/html' } });
        expect(response.status, path).toBe(status);
        expect(response.headers.get('content-type'), path).toContain('application/json');
      }
    } finally {
      await built.app.close();
    }
  });
});

describe('the registration page is where an unpaid registration is found again', () => {
  it('awaiting payment, it says to keep its address, also when the confirmation email was held back by the hourly limit, and never claims an email was sent; once paid it does not', async () => {
    const event = await insertEvent(tdb.db, { capacity: null });
    const free = await insertEvent(tdb.db, { capacity: null, pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 0 }] }) });
    const ctx = createTestContext({ db: tdb.db, env: { TRUST_PROXY: 'true' } });
    const server = await startTestServer(ctx);
    try {
      const register = async (slug: string, n: number, email = 'naomi@example.org') => {
        const answer = await post(`${server.url}/events/${slug}/register`, form(registration(`Naomi ${n}`, email)), undefined, `198.51.100.${n}`);
        expect(answer.status).toBe(303);
        const id = /\/registrations\/([^?]+)/.exec(answer.headers.get('location') ?? '')?.[1] as string;
        const page = await fetch(`${server.url}${answer.headers.get('location')}`);
        expect(page.status).toBe(200);
        return { id, html: await page.text() };
      };
      for (let n = 1; n <= CONFIRMATIONS_PER_ADDRESS_PER_HOUR; n += 1) await register(event.slug, n);
      const heldBack = await register(event.slug, CONFIRMATIONS_PER_ADDRESS_PER_HOUR + 1);
      const toNaomi = await queuedMessages(ctx, 'registration-confirmation');
      expect(toNaomi.filter((m) => m.text.includes(`Naomi ${CONFIRMATIONS_PER_ADDRESS_PER_HOUR + 1}`))).toEqual([]);

      expect(heldBack.html).toContain('Awaiting payment');
      expect(heldBack.html).toContain(paymentReference(heldBack.id));
      expect(heldBack.html).toContain(`<p id="keep-this-page"><strong>${KEEP_PAGE_NOTE.replace("'", '&#x27;')}</strong></p>`);
      expect(heldBack.html).not.toMatch(/(sent|emailed) you|email (is|was) (on its way|sent)|check your (email|inbox)/i);

      // Emailed (another mailbox): nothing to keep the page for.
      const paid = await register(free.slug, 50, 'naomi.free@example.org');
      expect(paid.html).toContain('Confirmed (free)');
      expect(paid.html).not.toContain('keep-this-page');
    } finally {
      await server.close();
    }
  });
});

describe('an unexpected failure whose error-log row cannot be written', () => {
  it('says to try again in a few minutes, never "the error has been recorded" nor an error reference, as a page and as JSON', async () => {
    // Nothing listens on port 9: every query fails at once, the error log's insert too, as while PostgreSQL is down.
    const down = connectDb({ url: 'postgres://eventops:x@127.0.0.1:9/eventops', poolMax: 1 });
    const server = await startTestServer(createTestContext({ db: down }));
    try {
      const page = await fetch(`${server.url}/events/family-camp`);
      expect(page.status).toBe(500);
      const html = await page.text();
      expect(html).toContain(`<p role="alert">${UNRECORDED_FAILURE_MESSAGE}</p>`);
      expect(html).toMatch(/<title>Something went wrong · [^<]+<\/title>/);
      expect(html).not.toContain('recorded');
      expect(html).not.toContain('Error reference');
      const json = await fetch(`${server.url}/events/family-camp`, { headers: { accept: 'application/json' } });
      expect(json.status).toBe(500);
      expect(await json.json()).toEqual({ error: { code: 'internal_error', message: UNRECORDED_FAILURE_MESSAGE } });
    } finally {
      await server.close();
      await down.destroy();
    }
  });

  it('a registration form post keeps what was typed: the page sends it again with one button (never cached), and once the database is back that registers it', async () => {
    await tdb.db('rate_limits').delete();
    const event = await insertEvent(tdb.db, { slug: 'resend-after-outage' });
    const typed: Array<[string, string]> = [
      ['name', 'Jo "the organiser" Citizen'],
      ['email', 'jo.resend@example.org'],
      ['mobile', '0400 000 000'],
      ['payment', 'bank'],
      ['attendee_name', 'Jo Citizen'],
      ['attendee_tier', 'adult'],
      ['attendee_name', 'Kim Citizen'],
      ['attendee_tier', 'adult'],
      ['cf-turnstile-response', 'single-use-answer'],
    ];
    const down = connectDb({ url: 'postgres://eventops:x@127.0.0.1:9/eventops', poolMax: 1 });
    const unreachable = await startTestServer(createTestContext({ db: down }));
    let html: string;
    try {
      const failed = await post(`${unreachable.url}/events/${event.slug}/register`, form(typed));
      expect(failed.status).toBe(500);
      expect(failed.headers.get('cache-control')).toBe('no-store');
      html = (await failed.text()).replaceAll('&#x3D;', '=');
      expect(html).toContain(UNRECORDED_FAILURE_MESSAGE);
      expect(html).toContain(`<form method="post" action="/events/${event.slug}/register" id="resend">`);
      expect(html).toContain('<input type="hidden" name="name" value="Jo &quot;the organiser&quot; Citizen">');
      expect(html).toContain('<input type="hidden" name="attendee_name" value="Kim Citizen">');
      expect(html).toContain('Send again');
      expect(html).toContain('"Send again" sends it once more.');
      expect(html).not.toContain('single-use-answer');
    } finally {
      await unreachable.close();
      await down.destroy();
    }
    // With a bot check configured its answer cannot be sent again: the page says the form will ask for it.
    const downAgain = connectDb({ url: 'postgres://eventops:x@127.0.0.1:9/eventops', poolMax: 1 });
    const withBotCheck = await startTestServer(
      createTestContext({ db: downAgain, env: { CAPTCHA_SECRET_KEY: 'captcha-secret', CAPTCHA_SITE_KEY: 'site-key', CAPTCHA_VERIFY_URL: 'http://127.0.0.1:9/siteverify' } }),
    );
    try {
      const failed = await post(`${withBotCheck.url}/events/${event.slug}/register`, form(typed));
      expect(failed.status).toBe(500);
      expect(await failed.text()).toContain('"Send again" puts it back on the form; complete the bot check there and register.');
    } finally {
      await withBotCheck.close();
      await downAgain.destroy();
    }

    // The browser posts the hidden fields as they are: decoded here as it would.
    const resent = [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
      ([, name, value]) => [name, (value ?? '').replaceAll('&quot;', '"')] as [string, string],
    );
    expect(resent).toEqual(typed.filter(([name]) => name !== 'cf-turnstile-response').sort((a, b) => order(a[0]) - order(b[0])));
    const server = await startTestServer(createTestContext({ db: tdb.db }));
    try {
      const registered = await post(`${server.url}/events/${event.slug}/register`, form(resent));
      expect(registered.status).toBe(303);
    } finally {
      await server.close();
    }
    expect(await tdb.db('registrations').where({ event_id: event.id }).select('contact_name', 'attendee_count')).toEqual([
      { contact_name: 'Jo "the organiser" Citizen', attendee_count: 2 },
    ]);
  });
});

/** The order the page writes the fields in: each field's values together, in the form's order. */
const order = (name: string) => ['name', 'email', 'mobile', 'family', 'payment', 'attendee_name', 'attendee_tier'].indexOf(name);

describe('the error log', () => {
  it('keeps no submitted value when a request with a form body fails unexpectedly', async () => {
    const ctx = createTestContext({ db: tdb.db });
    const built = await buildServer(ctx, { packageVersion: '0.0.0-test' });
    // A route whose failure message echoes what was typed, as a driver or library error may.
    built.app.post('/echoing-failure', async (request) => {
      const body = request.body as Record<string, string>;
      throw new Error(`could not store "${body.name}" <${body.email}> for ${body.payment}`);
    });
    const address = await built.app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const answer = await fetch(`${address}/echoing-failure`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form([['name', 'Private Person'], ['email', 'private.person@example.org'], ['payment', 'bank']]),
      });
      expect(answer.status).toBe(500);
      const { error } = (await answer.json()) as { error: { id: number } };
      const row = await tdb.db('error_logs').where({ id: error.id }).first<{ message: string; stack: string }>();
      expect(row.message).toBe('could not store "<submitted value>" <<submitted value>> for <submitted value>');
      expect(row.stack).not.toContain('Private Person');
      expect(row.stack).not.toContain('private.person@example.org');
    } finally {
      await built.app.close();
    }
  });
});
