import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { celebrationsUnsubscribePath, celebrationsUnsubscribeToken } from '../../src/office/people/unsubscribe-link.js';
import { FixedClock } from '../../src/clock.js';
import { sendCelebrations } from '../../src/jobs/send-celebrations.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertPerson } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

const T0 = new Date('2026-11-22T00:00:00Z');
let tdb: TestDatabase;
let server: TestServer;
const mail = useSinkAndMailer();

const context = () => createTestContext({ db: tdb.db, mailer: mail.mailer, clock: new FixedClock(T0) });

beforeAll(async () => {
  tdb = await createTestDatabase();
  server = await startTestServer(context());
});
afterAll(async () => {
  await server.close();
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db.raw('TRUNCATE people, celebration_claims, rate_limits, app_settings CASCADE');
});

async function person(first: string, fields: Record<string, unknown> & { email?: string } = {}): Promise<string> {
  return (await insertPerson(tdb.db, context().cipher, { first_name: first, last_name: 'Member', ...fields })).id;
}

const pathFor = (...ids: string[]) => celebrationsUnsubscribePath(celebrationsUnsubscribeToken(context().config.keyring, ids));
const flagOf = async (id: string) => tdb.db('people').where({ id }).first('celebrations_off_at', 'celebrations_off_by', 'celebrations_off_note');
const ON = { celebrations_off_at: null, celebrations_off_by: null, celebrations_off_note: null };
/** Handlebars writes "=" in attribute values as &#x3D;, which browsers read as "=". */
const unescapeEquals = (html: string) => html.replaceAll('&#x3D;', '=');

async function get(path: string) {
  const response = await fetch(`${server.url}${path}`, { redirect: 'manual', headers: { accept: 'text/html' } });
  return { status: response.status, headers: response.headers, html: unescapeEquals(await response.text()) };
}

async function post(path: string, body: string | FormData = 'List-Unsubscribe=One-Click') {
  const headers: Record<string, string> = typeof body === 'string' ? { 'content-type': 'application/x-www-form-urlencoded' } : {};
  const response = await fetch(`${server.url}${path}`, { method: 'POST', body, headers, redirect: 'manual' });
  return { status: response.status, headers: response.headers, html: unescapeEquals(await response.text()) };
}

describe('GET /celebrations/unsubscribe/:token', () => {
  it('asks to confirm with a button that posts to the same address, escaped in the usual layout with its CSP, and changes nothing', async () => {
    const ada = await person('Ada <b>&</b>', { email: 'ada@example.org' });
    const path = pathFor(ada);

    const page = await get(path);
    const again = await get(path);

    expect(page.status).toBe(200);
    expect(again.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('content-security-policy')).toMatch(/form-action 'self'/);
    expect(page.html).toContain('<h1>Stop birthday and anniversary emails?</h1>');
    expect(page.html).toContain('Grace Community Church will stop sending birthday and anniversary emails to <bdi>Ada &lt;b&gt;&amp;&lt;/b&gt;</bdi>.');
    expect(page.html).not.toContain('<b>&</b>');
    expect(page.html).toContain(`<form method="post" action="${path}">`);
    expect(page.html).toContain('<input type="hidden" name="List-Unsubscribe" value="One-Click">');
    expect(page.html).toMatch(/<style nonce="[0-9a-f]{32}">/);
    // Neither the address nor anything else about the person is on the page.
    expect(page.html).not.toContain('ada@example.org');
    expect(await flagOf(ada)).toEqual(ON);
  });

  it('for a person already off says so, without a button', async () => {
    const ada = await person('Ada');
    await tdb.db('people').where({ id: ada }).update({ celebrations_off_at: T0, celebrations_off_by: 'office', celebrations_off_note: 'asked by phone' });
    const page = await get(pathFor(ada));
    expect(page.status).toBe(200);
    expect(page.html).toContain('<h1>You are unsubscribed</h1>');
    expect(page.html).not.toContain('<form');
  });
});

describe('POST /celebrations/unsubscribe/:token', () => {
  it('the button turns the emails off, by unsubscribe, and says so; posting again changes nothing more', async () => {
    const ada = await person('Ada');
    const other = await person('Ben');

    const done = await post(pathFor(ada));

    expect(done.status).toBe(200);
    expect(done.headers.get('cache-control')).toBe('no-store');
    expect(done.html).toContain('<h1>You are unsubscribed</h1>');
    expect(done.html).toContain('<bdi>Ada</bdi> will not receive birthday or anniversary emails from Grace Community Church any more.');
    const off = await flagOf(ada);
    expect(off).toMatchObject({ celebrations_off_by: 'unsubscribe', celebrations_off_note: null });
    expect(off.celebrations_off_at).toBeInstanceOf(Date);
    expect(await flagOf(other)).toEqual(ON);

    expect((await post(pathFor(ada))).status).toBe(200);
    expect(await flagOf(ada)).toEqual(off);
  });

  it('the one-click POST a mail client makes (RFC 8058), form-encoded or multipart, turns them off', async () => {
    const ada = await person('Ada');
    const ben = await person('Ben');
    const multipart = new FormData();
    multipart.set('List-Unsubscribe', 'One-Click');

    expect((await post(pathFor(ada), 'List-Unsubscribe=One-Click')).status).toBe(200);
    expect((await post(pathFor(ben), multipart)).status).toBe(200);

    expect(await flagOf(ada)).toMatchObject({ celebrations_off_by: 'unsubscribe' });
    expect(await flagOf(ben)).toMatchObject({ celebrations_off_by: 'unsubscribe' });
  });

  it('a couple’s link turns off both spouses; one the office had turned off keeps the office’s record', async () => {
    const tom = await person('Tom');
    const lan = await person('Lan');
    const office = { celebrations_off_at: new Date('2026-10-01T00:00:00Z'), celebrations_off_by: 'office', celebrations_off_note: 'moved away' };
    await tdb.db('people').where({ id: lan }).update(office);

    const done = await post(pathFor(tom, lan));

    expect(done.status).toBe(200);
    expect(done.html).toMatch(/(<bdi>Tom<\/bdi> and <bdi>Lan<\/bdi>|<bdi>Lan<\/bdi> and <bdi>Tom<\/bdi>) will not receive/);
    expect(await flagOf(tom)).toMatchObject({ celebrations_off_by: 'unsubscribe' });
    expect(await flagOf(lan)).toEqual(office);
  });

  it('a tampered or made-up token, or one naming nobody on record, is a 404 page for GET and POST, and changes nothing', async () => {
    const ada = await person('Ada');
    // The link as made opens the page; anything else does not.
    expect((await get(pathFor(ada))).status).toBe(200);
    const token = (ids: string[]) => celebrationsUnsubscribeToken(context().config.keyring, ids);
    const [payload = '', signature = ''] = token([ada]).split('.');
    const [otherPayload = ''] = token(['00000000-0000-4000-8000-000000000009']).split('.');
    const [couplePayload = ''] = token([ada, '00000000-0000-4000-8000-000000000009']).split('.');
    for (const forged of [
      `${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`,
      `${otherPayload}.${signature}`,
      `${couplePayload}.${signature}`,
      payload,
      'x'.repeat(90),
      // A real token, for someone no longer on record.
      `${otherPayload}.${token(['00000000-0000-4000-8000-000000000009']).split('.')[1]}`,
    ]) {
      const path = `/celebrations/unsubscribe/${encodeURIComponent(forged)}`;
      const shown = await get(path);
      expect(shown.status, forged).toBe(404);
      expect(shown.html).toContain('We could not find that link.');
      expect((await post(path)).status, forged).toBe(404);
    }
    expect(await flagOf(ada)).toEqual(ON);
  });

  it('posts are limited as the public form is: 10 a minute per address, then 429', async () => {
    const ada = await person('Ada');
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await post(pathFor(ada))).status);
    expect(statuses).toEqual([...Array.from({ length: 10 }, () => 200), 429]);
  });
});

describe('the link in a celebration email', () => {
  it('opened shows the page, confirmed stops the emails: the next year’s run sends that person nothing', async () => {
    await setSetting(tdb.db, 'celebrations.birthdays', true, T0);
    const ada = await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
    const at = (iso: string) => createTestContext({ db: tdb.db, mailer: mail.mailer, clock: new FixedClock(new Date(iso)) });

    expect(await sendCelebrations(at('2026-11-21T22:00:00Z'), { trigger: 'cli' })).toMatchObject({ birthdays: 1 });
    const link = /http:\/\/127\.0\.0\.1:3000(\/celebrations\/unsubscribe\/\S+)/.exec(mail.sink.messages[0]?.text ?? '')?.[1] ?? '';
    expect((await get(link)).status).toBe(200);
    expect(await flagOf(ada)).toEqual(ON);
    expect((await post(link)).status).toBe(200);

    mail.sink.clear();
    expect(await sendCelebrations(at('2027-11-21T22:00:00Z'), { trigger: 'cli' })).toMatchObject({ outcome: 'ok', birthdays: 0 });
    expect(mail.sink.messages).toHaveLength(0);
  });
});
