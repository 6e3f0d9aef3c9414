import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderEmail, type EmailBranding } from '../../src/mail/render.js';
import { registrationToken } from '../../src/payments/links.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig, testEnv } from '../support/env.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { startTestServer } from '../support/http.js';

// A member reads the event's time on the pages and in the emails: both write it the same way, zone named.

const AUTH_SECRET = testEnv().AUTH_SECRET as string;

let tdb: TestDatabase;
let fake: FakeProvider;
beforeAll(async () => {
  tdb = await createTestDatabase();
  fake = await startFakeProvider({ webhookSecret: 'whsec_page_times_test' });
});
afterAll(async () => {
  await fake.close();
  await tdb.drop();
});

/** The three pages that show the event's time, each answered by the real server. */
async function pageTimes(env: Record<string, string | undefined>, startsAt: Date) {
  const ctx = createTestContext({ db: tdb.db, env: { ...fake.configEnv(), ...env } });
  const event = await insertEvent(tdb.db, { online_payment: true, starts_at: startsAt });
  const pending = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING' });
  const token = registrationToken(AUTH_SECRET, pending.id, 1);
  const server = await startTestServer(ctx);
  try {
    const get = async (path: string) => {
      const response = await fetch(`${server.url}${path}`);
      expect(response.status, path).toBe(200);
      return response.text();
    };
    const eventHtml = await get(`/events/${event.slug}`);
    const registrationHtml = await get(`/registrations/${pending.id}?token=${token}`);
    const payNowHtml = await get(`/registrations/${pending.id}/pay?token=${token}`);
    return {
      event: /<p><strong>When:<\/strong> ([^<]*)<\/p>/.exec(eventHtml)?.[1],
      registration: /Family Camp<\/bdi><\/a><br><span class="muted">([^<]*)<\/span>/.exec(registrationHtml)?.[1],
      payNow: /Family Camp<\/bdi><br><span class="muted">([^<]*)<\/span>/.exec(payNowHtml)?.[1],
    };
  } finally {
    await server.close();
  }
}

/** How every email writes the same instant: the templates' `dateTime` helper. */
function emailTime(env: Record<string, string | undefined>, at: Date): string {
  const config = testConfig(env);
  const branding: EmailBranding = { identity: { name: 'Grace Community Church' }, theme: config.theme, regional: config.regional };
  return /\[(.*)\]/.exec(renderEmail({ subject: '', html: '', text: '[{{dateTime at}}]' }, { at }, branding).text)?.[1] ?? '';
}

describe('times on the public pages', () => {
  it('the event, registration and pay-now pages name the zone ("7:00 pm AEDT"), written exactly as the emails write it', async () => {
    // 2026-12-05T08:00Z is 7:00 pm on Saturday in Sydney, in daylight time (AEDT, UTC+11).
    const summer = new Date('2026-12-05T08:00:00Z');
    const times = await pageTimes({}, summer);
    const email = emailTime({}, summer);
    expect(email).toMatch(/^Saturday,? 5 December 2026 at 7:00\spm AEDT$/);
    expect(times).toEqual({ event: email, registration: email, payNow: email });

    // Standard time in winter: the short name follows the date, not the season the page was made in.
    const winter = new Date('2027-06-05T09:00:00Z');
    const winterTimes = await pageTimes({}, winter);
    expect(winterTimes.event).toMatch(/^Saturday,? 5 June 2027 at 7:00\spm AEST$/);
    expect(winterTimes).toEqual({ event: emailTime({}, winter), registration: emailTime({}, winter), payNow: emailTime({}, winter) });
  });

  it('in another APP_LOCALE and APP_TIMEZONE too, the locale places the zone and the pages follow the emails', async () => {
    const at = new Date('2026-12-05T08:00:00Z');
    for (const env of [
      { APP_LOCALE: 'en-GB', APP_TIMEZONE: 'Europe/London', APP_CURRENCY: 'GBP' },
      { APP_LOCALE: 'de-DE', APP_TIMEZONE: 'Europe/Berlin', APP_CURRENCY: 'EUR' },
      { APP_LOCALE: 'en-US', APP_TIMEZONE: 'America/New_York', APP_CURRENCY: 'USD' },
    ]) {
      const email = emailTime(env, at);
      expect(await pageTimes(env, at), env.APP_LOCALE).toEqual({ event: email, registration: email, payNow: email });
    }
    expect(emailTime({ APP_LOCALE: 'de-DE', APP_TIMEZONE: 'Europe/Berlin' }, at)).toBe('Samstag, 5. Dezember 2026 um 09:00 MEZ');
    expect(emailTime({ APP_LOCALE: 'en-US', APP_TIMEZONE: 'America/New_York' }, at)).toMatch(/^Saturday, December 5, 2026 at 3:00\sAM EST$/);
  });
});
