import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadChurchIdentity } from '../../src/mail/identity.js';
import { defineEmailTemplate, loadEmailBranding, renderEmail, type EmailBranding } from '../../src/mail/render.js';
import { setSetting } from '../../src/settings.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig } from '../support/env.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const branding: EmailBranding = {
  identity: { name: 'Grace & Truth Church', address: '1 Church St, Sydney NSW', website: 'https://grace.example.org' },
  theme: { primary: '#123456' },
  regional: { locale: 'en-AU', currency: 'AUD', timeZone: 'Australia/Sydney', fyStartMonth: 7 },
};

const reminder = defineEmailTemplate<{ name: string; event: string; startsAt: Date; amount: number; payUrl: string }>({
  subject: 'Reminder: {{event}}',
  html: '<p>Hi {{name}},</p><p>{{event}} starts {{dateTime startsAt}}. <a href="{{payUrl}}">Pay {{money amount}} now</a></p>',
  text: 'Hi {{name}},\n\n{{event}} starts {{dateTime startsAt}}. Pay {{money amount}} now: {{payUrl}}',
});

describe('email templates', () => {
  it('escapes injected HTML in the data of the HTML part', () => {
    const email = reminder(
      { name: '<script>alert(1)</script>', event: 'Picnic', startsAt: new Date('2026-12-05T23:00:00Z'), amount: 1250, payUrl: 'https://x.example/pay?a=1&b="2"' },
      branding,
    );
    expect(email.html).not.toContain('<script>');
    expect(email.html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(email.html).toContain('href="https://x.example/pay?a&#x3D;1&amp;b&#x3D;&quot;2&quot;"');
    // The plain-text part is not HTML: it carries the text as written.
    expect(email.text).toContain('Hi <script>alert(1)</script>,');
  });

  it('wraps both parts in the church layout with the theme colour, footer and regional formats', () => {
    const email = reminder(
      { name: 'Alice', event: 'Carols & Candles', startsAt: new Date('2026-12-05T23:00:00Z'), amount: 1250, payUrl: 'https://pay.example/r/1' },
      branding,
    );
    expect(email.subject).toBe('Reminder: Carols & Candles');
    expect(email.html).toContain('background:#123456');
    expect(email.html).toContain('Grace &amp; Truth Church');
    expect(email.html).toContain('1 Church St, Sydney NSW');
    expect(email.html).toContain('<h1 style="margin:0 0 16px;font-size:20px;">Reminder: Carols &amp; Candles</h1>');
    expect(email.html).toContain('$12.50');
    // 23:00 UTC on 5 December is 10:00 on Sunday 6 December in Sydney (daylight time).
    expect(email.html).toMatch(/Sunday,? 6 December 2026 at 10:00\s?am AEDT/i);
    expect(email.text).toMatch(/^Grace & Truth Church\n\nHi Alice,/);
    expect(email.text).toContain('Pay $12.50 now: https://pay.example/r/1');
    expect(email.text).toMatch(/--\nGrace & Truth Church\n1 Church St, Sydney NSW\nhttps:\/\/grace\.example\.org\n$/);
  });

  it('a time names its zone in the short form of APP_LOCALE, daylight saving or not, else as an offset', () => {
    const at = (iso: string, regional: Partial<EmailBranding['regional']>) =>
      renderEmail({ subject: '', html: '', text: '{{dateTime at}}' }, { at: new Date(iso) }, { ...branding, regional: { ...branding.regional, ...regional } }).text;
    expect(at('2026-12-05T23:00:00Z', {})).toMatch(/10:00\s?am AEDT\n/);
    expect(at('2026-06-05T23:00:00Z', {})).toMatch(/9:00\s?am AEST\n/);
    expect(at('2026-12-05T23:00:00Z', { locale: 'en-US', timeZone: 'America/New_York' })).toMatch(/Saturday, December 5, 2026 at 6:00\sPM EST\n/);
    expect(at('2026-12-05T23:00:00Z', { timeZone: 'Europe/Berlin' })).toMatch(/Sunday,? 6 December 2026 at 12:00\s?am GMT\+1\n/);
    expect(at('2026-12-05T23:00:00Z', { locale: 'de-DE', timeZone: 'Europe/Berlin' })).toMatch(/Sonntag, 6\. Dezember 2026 um 00:00 MEZ\n/);
  });

  it('an event that ends is shown from its start to its end, leaving out what the two share; one without an end, by its start', () => {
    const span = (start: string, end: string | null) =>
      renderEmail({ subject: '', html: '', text: '{{dateTimeSpan start end}}' }, { start: new Date(start), end: end && new Date(end) }, branding).text;
    expect(span('2027-03-12T07:00:00Z', '2027-03-12T09:30:00Z')).toMatch(/Friday,? 12 March 2027,? 6:00\s?–\s?8:30\spm AEDT\n/);
    expect(span('2027-03-12T07:00:00Z', '2027-03-14T04:00:00Z')).toMatch(/Friday,? 12 March 2027 at 6:00\spm AEDT\s?–\s?Sunday,? 14 March 2027 at 3:00\spm AEDT\n/);
    expect(span('2027-03-12T07:00:00Z', null)).toMatch(/Friday,? 12 March 2027 at 6:00\spm AEDT\n/);
  });

  it('a calendar date is shown as that date in any time zone', () => {
    const email = renderEmail(
      { subject: 'Happy birthday', html: '<p>{{date birthDate}}</p>', text: '{{date birthDate}}' },
      { birthDate: '1990-03-01' },
      { ...branding, regional: { ...branding.regional, timeZone: 'Pacific/Honolulu' } },
    );
    expect(email.text).toContain('1 March 1990');
  });

  it('subjects are a single line', () => {
    const email = renderEmail({ subject: 'Hello {{name}}', html: '', text: '' }, { name: 'A\r\nBcc: x@example.org' }, branding);
    expect(email.subject).toBe('Hello A Bcc: x@example.org');
  });
});

describe('church identity', () => {
  it('Settings override CHURCH_* variables, which fill the fields Settings leave unset', async () => {
    const config = testConfig({ CHURCH_NAME: 'From Env', CHURCH_ADDRESS: '2 Env Rd', CHURCH_WEBSITE: 'https://env.example.org' });
    expect(await loadChurchIdentity(tdb.db, config)).toEqual({
      name: 'From Env',
      address: '2 Env Rd',
      abn: undefined,
      website: 'https://env.example.org',
    });
    await setSetting(tdb.db, 'church.name', 'From Settings', new Date());
    await setSetting(tdb.db, 'church.abn', '12 345 678 901', new Date());
    const identity = await loadChurchIdentity(tdb.db, config);
    expect(identity).toEqual({ name: 'From Settings', address: '2 Env Rd', abn: '12 345 678 901', website: 'https://env.example.org' });
    const branding = await loadEmailBranding(tdb.db, config);
    const email = renderEmail({ subject: 'Hi', html: '<p>Hi</p>', text: 'Hi' }, {}, branding);
    expect(email.html).toContain('From Settings');
    expect(email.html).not.toContain('From Env');
    expect(email.text).toContain('ABN 12 345 678 901');
  });

  it('with neither Settings nor CHURCH_NAME, a neutral name', async () => {
    const empty = await createTestDatabase();
    try {
      const identity = await loadChurchIdentity(empty.db, testConfig({ CHURCH_NAME: undefined }));
      expect(identity.name).toBe('Our church');
    } finally {
      await empty.drop();
    }
  });
});
