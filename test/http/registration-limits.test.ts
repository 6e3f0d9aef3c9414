import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent, getEventBySlug, updateEvent } from '../../src/office/events.js';
import { parseEventFile } from '../../src/office/event-file.js';
import { NO_CAPTCHA_WARNING } from '../../src/payments/captcha.js';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { startTestServer } from '../support/http.js';
import { captureLogger } from '../support/payments-harness.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const CARD_ENV = { PSP_SECRET_KEY: 'sk_test_local', PSP_WEBHOOK_SECRET: 'whsec_local' };
const PRODUCTION = {
  NODE_ENV: 'production',
  DATABASE_URL: 'postgres://u:p@127.0.0.1:1/none',
  AUTH_URL: 'https://events.example.org',
  SMTP_USER: 'office@example.org',
  SMTP_APP_PASSWORD: 'app-password',
  // Production wants shared secrets of 32 characters or more.
  CRON_SECRET: 'test-cron-secret-long-enough-for-production-use',
  // Behind the https proxy, as the set-up in docs/operations.md has it (without it config check warns of that too).
  TRUST_PROXY: 'true',
};
const CAPTCHA = { CAPTCHA_SECRET_KEY: 'captcha-secret', CAPTCHA_SITE_KEY: 'captcha-site' };

const attendees = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `Guest ${i + 1}`, tier: 'adult' }));

describe('maxAttendeesPerRegistration: the cap on one registration', () => {
  it('defaults to 10; the page offers no more rows than the cap; the server answers 400 naming the field, for bank and card alike', async () => {
    const capped = await insertEvent(tdb.db, { capacity: 20, online_payment: true, max_attendees_per_registration: 3 });
    const standard = await insertEvent(tdb.db, { capacity: 20 });
    expect((await getEventBySlug(tdb.db, standard.slug))?.maxAttendeesPerRegistration).toBe(10);
    const server = await startTestServer(createTestContext({ db: tdb.db, env: CARD_ENV }));
    try {
      const page = await (await fetch(`${server.url}/events/${capped.slug}`)).text();
      expect(page.match(/name="attendee_name"/g)).toHaveLength(3);
      expect(page).toContain('At most 3 people.');
      expect(page).toContain('data-max="3"');

      // One post with 20 attendees would have held every seat of a 20-seat event.
      const flood = await fetch(`${server.url}/events/${standard.slug}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Bot', email: 'bot@example.org', payment: 'bank', attendees: attendees(20) }),
      });
      expect(flood.status).toBe(400);
      const body = (await flood.json()) as { error: { code: string; fields: Array<{ field: string; message: string }> } };
      expect(body.error.code).toBe('invalid_registration');
      expect(body.error.fields).toEqual([{ field: 'attendees', message: 'Attendees: at most 10 attendees per registration' }]);

      for (const payment of ['bank', 'card']) {
        const over = await fetch(`${server.url}/events/${capped.slug}/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Big Family', email: 'big@example.org', payment, attendees: attendees(4) }),
        });
        expect(over.status).toBe(400);
        expect(((await over.json()) as { error: { fields: Array<{ field: string }> } }).error.fields[0]?.field).toBe('attendees');
      }
      const form = new URLSearchParams({ name: 'Form Family', email: 'form@example.org', payment: 'bank' });
      for (const guest of attendees(4)) {
        form.append('attendee_name', guest.name);
        form.append('attendee_tier', guest.tier);
      }
      const formPost = await fetch(`${server.url}/events/${capped.slug}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      expect(formPost.status).toBe(400);
      expect(await formPost.text()).toContain('at most 3 attendees per registration');

      const within = await fetch(`${server.url}/events/${capped.slug}/register`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Small Family', email: 'small@example.org', payment: 'bank', attendees: attendees(3) }),
      });
      expect(within.status).toBe(303);
      expect(await tdb.db('registrations').where({ event_id: capped.id }).sum({ seats: 'attendee_count' }).first()).toEqual({ seats: 3 });
    } finally {
      await server.close();
    }
  });

  it('the event file sets both settings; an update without them keeps them; null clears the hold', async () => {
    const ctx = createTestContext({ db: tdb.db });
    const file = {
      slug: 'limits-camp',
      title: 'Limits Camp',
      startsAt: '2027-03-12T18:00:00+11:00',
      capacity: 40,
      maxAttendeesPerRegistration: 6,
      unpaidHoldDays: 7,
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 1000 }] },
    };
    const created = await createEvent(ctx, parseEventFile(file));
    expect(created.event).toMatchObject({ maxAttendeesPerRegistration: 6, unpaidHoldDays: 7 });
    const { maxAttendeesPerRegistration: _cap, unpaidHoldDays: _hold, ...without } = file;
    expect((await updateEvent(ctx, parseEventFile({ ...without, title: 'Limits Camp 2' }))).event).toMatchObject({ maxAttendeesPerRegistration: 6, unpaidHoldDays: 7 });
    expect((await updateEvent(ctx, parseEventFile({ ...file, unpaidHoldDays: null }))).event.unpaidHoldDays).toBeNull();
    expect(() => parseEventFile({ ...file, maxAttendeesPerRegistration: 0 })).toThrow(/maxAttendeesPerRegistration: at least 1/);
    expect(() => parseEventFile({ ...file, unpaidHoldDays: 1.5 })).toThrow(/unpaidHoldDays/);
  });

  it('unpaidAlertShare: 0.4 when created without it, kept by an update without it, null for no alert; anything but a share from above 0 to 1 is refused by name', async () => {
    const ctx = createTestContext({ db: tdb.db });
    const file = { slug: 'share-camp', title: 'Share Camp', startsAt: '2027-03-12T18:00:00+11:00', capacity: 40, pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 1000 }] } };
    expect((await createEvent(ctx, parseEventFile(file))).event.unpaidAlertShare).toBe(0.4);
    expect((await updateEvent(ctx, parseEventFile({ ...file, unpaidAlertShare: 0.25 }))).event.unpaidAlertShare).toBe(0.25);
    expect((await updateEvent(ctx, parseEventFile({ ...file, title: 'Share Camp 2' }))).event.unpaidAlertShare).toBe(0.25);
    expect((await updateEvent(ctx, parseEventFile({ ...file, unpaidAlertShare: null }))).event.unpaidAlertShare).toBeNull();
    expect(() => parseEventFile({ ...file, unpaidAlertShare: 0 })).toThrow(/unpaidAlertShare: more than 0 \(null for no alert\)/);
    expect(() => parseEventFile({ ...file, unpaidAlertShare: 1.5 })).toThrow(/unpaidAlertShare: at most 1 \(the whole capacity\)/);
    expect(() => parseEventFile({ ...file, unpaidAlertShare: '40%' })).toThrow(/unpaidAlertShare: a share of the capacity as a number from 0 to 1, e.g. 0.4 for 40%/);
    expect(() => parseEventFile({ ...file, unpaidAlertShares: 0.4 })).toThrow(/unknown key "unpaidAlertShares"/);
  });
});

describe('the places left cap the rows the form offers', () => {
  const rowsOf = (html: string) => html.match(/name="attendee_name"/g)?.length ?? 0;
  const namesOf = (html: string) => [...html.matchAll(/name="attendee_name" value="([^"]*)"/g)].map((m) => m[1]);
  const cipher = () => createTestContext({ db: tdb.db }).cipher;
  /** An event with this many places left of its capacity (null: no limit), taken by one registration. */
  const eventWithPlacesLeft = async (left: number, extra: Record<string, unknown> = {}) => {
    const event = await insertEvent(tdb.db, { capacity: 12, ...extra });
    if (12 - left > 0) await insertRegistration(tdb.db, cipher(), event.id, { status: 'PENDING', attendee_count: 12 - left });
    return event;
  };

  it('offers no more rows than places left, with and without script (data-max), and says how many are left beside them', async () => {
    const three = await eventWithPlacesLeft(3);
    const one = await eventWithPlacesLeft(1);
    const eight = await eventWithPlacesLeft(8);
    const plenty = await eventWithPlacesLeft(12);
    const capped = await eventWithPlacesLeft(4, { max_attendees_per_registration: 2 });
    const unlimited = await insertEvent(tdb.db, { capacity: null });
    const server = await startTestServer(createTestContext({ db: tdb.db }));
    try {
      const page = async (slug: string) => (await fetch(`${server.url}/events/${slug}`)).text();

      const threeLeft = await page(three.slug);
      expect(rowsOf(threeLeft)).toBe(3);
      expect(threeLeft).toContain('data-max="3"');
      // Inside the form's "Who is coming" group, before the rows, said once (not again as "At most 3 people").
      expect(threeLeft).toMatch(
        /<legend>Who is coming<\/legend>\s*<p id="attendee-limit"><strong>Only 3 places are left, so this registration can name at most 3 people\.<\/strong><\/p>/,
      );
      expect(threeLeft).not.toContain('At most 3 people');
      expect(threeLeft).toContain('<strong>Only 3 places left</strong>');

      const oneLeft = await page(one.slug);
      expect(rowsOf(oneLeft)).toBe(1);
      expect(oneLeft).toContain('data-max="1"');
      expect(oneLeft).toContain('Only 1 place is left, so this registration can name 1 person.');

      // More places left than the rows the script keeps at first, fewer than one registration may name: eight rows
      // (the script keeps one and adds up to eight).
      const eightLeft = await page(eight.slug);
      expect(rowsOf(eightLeft)).toBe(8);
      expect(eightLeft).toContain('data-max="8"');
      expect(eightLeft).toContain('data-initial="1"');
      expect(eightLeft).toContain('Only 8 places are left, so this registration can name at most 8 people.');

      for (const [slug, rows, max] of [
        [plenty.slug, 10, 10],
        [unlimited.slug, 10, 10],
        [capped.slug, 2, 2],
      ] as const) {
        const html = await page(slug);
        expect(rowsOf(html), slug).toBe(rows);
        expect(html, slug).toContain(`data-max="${max}"`);
        expect(html, slug).not.toContain('<p id="attendee-limit"><strong>');
      }
    } finally {
      await server.close();
    }
  });

  it('a refused form keeps every named row, even past the places left, and offers its blank rows only up to them', async () => {
    const event = await eventWithPlacesLeft(3);
    const server = await startTestServer(createTestContext({ db: tdb.db }));
    const post = async (names: string[]) => {
      const form = new URLSearchParams({ name: 'Jo Citizen', email: 'not an address', payment: 'bank' });
      for (const name of names) {
        form.append('attendee_name', name);
        form.append('attendee_tier', 'adult');
      }
      const response = await fetch(`${server.url}/events/${event.slug}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      expect(response.status).toBe(400);
      return response.text();
    };
    try {
      // Six rows posted from a page made when more places were left, two of them named.
      const two = await post(['Jo Citizen', 'Kim Citizen', '', '', '', '']);
      expect(namesOf(two)).toEqual(['Jo Citizen', 'Kim Citizen', '']);
      expect(two).toContain('data-max="3"');
      const four = await post(['A One', '', 'C Three', 'D Four', '', '']);
      expect(namesOf(four)).toEqual(['A One', '', 'C Three', 'D Four']);
      expect(four).toContain('Only 3 places are left');
    } finally {
      await server.close();
    }
  });

  it('the server keeps the final word: more people than places left is refused, by form and JSON alike, and nothing is stored', async () => {
    const event = await eventWithPlacesLeft(3);
    const server = await startTestServer(createTestContext({ db: tdb.db }));
    try {
      const form = new URLSearchParams({ name: 'Big Family', email: 'big@example.org', payment: 'bank' });
      for (const guest of attendees(4)) {
        form.append('attendee_name', guest.name);
        form.append('attendee_tier', guest.tier);
      }
      const byForm = await fetch(`${server.url}/events/${event.slug}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form.toString(),
      });
      expect(byForm.status).toBe(409);
      expect(await byForm.text()).toContain('Sorry, only 3 places are left for this event.');
      const byJson = await fetch(`${server.url}/events/${event.slug}/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Big Family', email: 'big@example.org', payment: 'bank', attendees: attendees(4) }),
      });
      expect(byJson.status).toBe(409);
      expect(((await byJson.json()) as { error: { code: string } }).error.code).toBe('sold_out');
      expect(await tdb.db('registrations').where({ event_id: event.id }).sum({ seats: 'attendee_count' }).first()).toEqual({ seats: 9 });
    } finally {
      await server.close();
    }
  });
});

describe('no captcha in production', () => {
  it('serve warns (and still starts) when public registration is open without a captcha; not with one, nor outside production', async () => {
    await insertEvent(tdb.db, { starts_at: new Date(Date.now() + 86_400_000), published: true });
    const logsFor = async (env: Record<string, string>) => {
      const { logger, logs } = captureLogger('warn');
      const server = await startTestServer(createTestContext({ db: tdb.db, env, logger }));
      await server.close();
      return logs.lines.map((line) => JSON.parse(line) as { msg: string; openEvents?: number });
    };
    const warned = (await logsFor(PRODUCTION)).find((line) => line.msg === NO_CAPTCHA_WARNING);
    expect(warned?.openEvents).toBeGreaterThanOrEqual(1);
    expect((await logsFor({ ...PRODUCTION, ...CAPTCHA })).some((line) => line.msg === NO_CAPTCHA_WARNING)).toBe(false);
    expect((await logsFor({})).some((line) => line.msg === NO_CAPTCHA_WARNING)).toBe(false);
  });

  it('config check warns but exits 0', async () => {
    const without = await runCli(['config', 'check', '--json'], { env: testEnv(PRODUCTION) });
    expect(without.code).toBe(0);
    expect(JSON.parse(without.stdout).warnings).toEqual([NO_CAPTCHA_WARNING]);
    const human = await runCli(['config', 'check'], { env: testEnv(PRODUCTION) });
    expect(human.stdout).toContain(`warning: ${NO_CAPTCHA_WARNING}`);
    const withCaptcha = await runCli(['config', 'check', '--json'], { env: testEnv({ ...PRODUCTION, ...CAPTCHA }) });
    expect(JSON.parse(withCaptcha.stdout).warnings).toEqual([]);
  });
});
