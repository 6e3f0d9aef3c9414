import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEvent, getEventBySlug, updateEvent } from '../../src/admin/events.js';
import { parseEventFile } from '../../src/admin/event-file.js';
import { NO_CAPTCHA_WARNING } from '../../src/payments/captcha.js';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertEvent } from '../support/factories.js';
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
      expect(page).toContain('at most 3');
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
