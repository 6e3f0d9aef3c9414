import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { canonicalMailbox } from '../../src/canonical-mailbox.js';
import { FixedClock } from '../../src/clock.js';
import { CONFIRMATION_HELD_NOTE } from '../../src/http/registration-view.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { CONFIRMATIONS_PER_ADDRESS_PER_HOUR } from '../../src/signup/confirmations.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';
import { startTestServer } from '../support/http.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

const T0 = new Date('2026-11-22T01:00:00Z');
const mail = useSinkAndMailer();
let tdb: TestDatabase;

beforeAll(async () => {
  tdb = await createTestDatabase();
  await setSetting(tdb.db, 'bank.accountName', 'Grace Community Church', T0);
  await setSetting(tdb.db, 'bank.bsb', '062-000', T0);
  await setSetting(tdb.db, 'bank.accountNumber', '1234 5678', T0);
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db('rate_limits').delete();
});

/** A server behind TRUST_PROXY (loopback), so each post names its client in X-Forwarded-For. */
async function withServer<T>(env: Record<string, string>, run: (post: Poster, ctx: ReturnType<typeof createTestContext>, eventId: string) => Promise<T>): Promise<T> {
  const ctx = createTestContext({ db: tdb.db, mailer: mail.mailer, clock: new FixedClock(T0), env: { TRUST_PROXY: 'true', ...env } });
  const server = await startTestServer(ctx);
  const event = await insertEvent(tdb.db, { capacity: null });
  const post: Poster = async (email, client, name = 'Jo Citizen') => {
    const body = new URLSearchParams({ name, email, payment: 'bank', attendee_name: name, attendee_tier: 'adult' }).toString();
    const answer = await fetch(`${server.url}/events/${event.slug}/register`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
      body,
    });
    expect(answer.status).toBe(303);
    const location = answer.headers.get('location') ?? '';
    const id = /\/registrations\/([^?]+)/.exec(location)?.[1] as string;
    return { id, location, page: async () => (await fetch(`${server.url}${location}`)).text() };
  };
  try {
    return await run(post, ctx, event.id);
  } finally {
    await server.close();
  }
}
type Poster = (email: string, client: string, name?: string) => Promise<{ id: string; location: string; page: () => Promise<string> }>;

async function delivered(ctx: ReturnType<typeof createTestContext>) {
  await deliverQueuedMail(ctx, { limit: 100 });
  return mail.sink.messages;
}

describe('the confirmation limit counts mailboxes, not spellings of them', () => {
  it('canonicalMailbox folds case, a +tag, and for gmail.com and googlemail.com the dots; other domains keep their dots', () => {
    expect(canonicalMailbox('Victim+7@Example.org')).toBe('victim@example.org');
    expect(canonicalMailbox('J.O.Doe+camp@googlemail.com')).toBe('jodoe@gmail.com');
    expect(canonicalMailbox('jo.doe@GMAIL.COM')).toBe('jodoe@gmail.com');
    expect(canonicalMailbox('jo.doe@example.org')).toBe('jo.doe@example.org');
    expect(canonicalMailbox('+only@example.org')).toBe('+only@example.org');
    expect(canonicalMailbox('jo@münchen.de')).toBe('jo@xn--mnchen-3ya.de');
  });

  it(`ten posts to victim+1@… … victim+10@… from ten clients send the mailbox ${CONFIRMATIONS_PER_ADDRESS_PER_HOUR} confirmations; every registration is still made`, async () => {
    await withServer({}, async (post, ctx, eventId) => {
      for (let n = 1; n <= 10; n += 1) await post(`victim+${n}@example.org`, `203.0.113.${n}`, `Jo ${n}`);
      const sent = await delivered(ctx);
      expect(sent.map((message) => message.envelope.to)).toEqual([['victim+1@example.org'], ['victim+2@example.org'], ['victim+3@example.org']]);
      expect(await tdb.db('registrations').where({ event_id: eventId }).count({ n: '*' }).first()).toEqual({ n: 10 });
    });
  });

  it('gmail.com and googlemail.com spellings of one mailbox (dots, case, +tags) share its limit; another mailbox is unaffected', async () => {
    await withServer({}, async (post, ctx) => {
      const spellings = ['jo.doe@gmail.com', 'JoDoe+camp@googlemail.com', 'J.o.D.o.E@gmail.com', 'jodoe+x@gmail.com'];
      for (const [n, email] of spellings.entries()) await post(email, `198.51.100.${n + 1}`);
      await post('jo.doe@example.org', '198.51.100.9');
      const sent = await delivered(ctx);
      expect(sent.map((message) => message.envelope.to[0])).toEqual([...spellings.slice(0, CONFIRMATIONS_PER_ADDRESS_PER_HOUR), 'jo.doe@example.org']);
    });
  });
});

describe('the per-client cap of confirmation emails (CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR)', () => {
  it('one client posting to distinct mailboxes gets that many emailed an hour; the rest are registered, not emailed; another client is unaffected', async () => {
    await withServer({ CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: '4' }, async (post, ctx, eventId) => {
      for (let n = 1; n <= 7; n += 1) await post(`member${n}@example.org`, '203.0.113.77');
      await post('other@example.org', '203.0.113.78');
      const sent = await delivered(ctx);
      expect(sent.map((message) => message.envelope.to[0])).toEqual([
        'member1@example.org',
        'member2@example.org',
        'member3@example.org',
        'member4@example.org',
        'other@example.org',
      ]);
      expect(await tdb.db('registrations').where({ event_id: eventId }).count({ n: '*' }).first()).toEqual({ n: 8 });
    });
  });

  it('IPv6 clients in one /48 share the cap, whichever /56 or /64 they post from; another /48 does not', async () => {
    await withServer({ CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: '2' }, async (post, ctx) => {
      await post('a@example.org', '2001:db8:5:1::1');
      await post('b@example.org', '2001:db8:5:200::2');
      await post('c@example.org', '2001:db8:5:ff00::3');
      await post('d@example.org', '2001:db8:6::1');
      const sent = await delivered(ctx);
      expect(sent.map((message) => message.envelope.to[0])).toEqual(['a@example.org', 'b@example.org', 'd@example.org']);
    });
  });
});

describe('a held-back confirmation is on the registration page', () => {
  it('the page the post leads to says no email was sent and shows what the email would have said: when and where, lines, amount, bank details and reference', async () => {
    await withServer({ CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: '1' }, async (post, ctx) => {
      const emailed = await post('ruth@example.org', '192.0.2.10', 'Ruth Emailed');
      const held = await post('naomi@example.org', '192.0.2.10', 'Naomi Held');
      expect((await delivered(ctx)).map((message) => message.envelope.to[0])).toEqual(['ruth@example.org']);

      expect(emailed.location).not.toContain('confirmation=');
      expect(held.location).toMatch(/&confirmation=[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      const page = (await held.page()).replaceAll('&#x27;', "'");
      expect(page).toContain(CONFIRMATION_HELD_NOTE);
      expect(page).toContain('Church Hall, 1 Main St');
      expect(page).toContain('Naomi Held');
      expect(page).toContain('$120.00');
      expect(page).toMatch(/<dt>Account number<\/dt><dd>1234 5678<\/dd>/);
      expect(page).toContain(paymentReference(held.id));
      expect(page).toContain('<span id="reference">');

      const emailedPage = await emailed.page();
      expect(emailedPage).not.toContain('confirmation-held');
      expect(emailedPage).toContain('Church Hall, 1 Main St');
    });
  });

  it('shows the manage link and the plain answers (never a sensitive one) to the browser that registered; an address edited or guessed shows neither', async () => {
    const ctx = createTestContext({ db: tdb.db, mailer: mail.mailer, clock: new FixedClock(T0), env: { TRUST_PROXY: 'true', CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: '1' } });
    const server = await startTestServer(ctx);
    const questions = [
      { id: 'diet', label: 'Dietary needs', type: 'text', appliesTo: 'registration' },
      { id: 'medical', label: 'Medical conditions', type: 'text', appliesTo: 'registration', sensitive: true },
    ];
    const event = await insertEvent(tdb.db, { capacity: null, questions: JSON.stringify(questions) });
    const register = async (email: string, name: string) => {
      const body = new URLSearchParams({ name, email, payment: 'bank', attendee_name: name, attendee_tier: 'adult', 'q.diet': 'Vegetarian', 'q.medical': 'Asthma' });
      const answer = await fetch(`${server.url}/events/${event.slug}/register`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '192.0.2.30' },
        body: body.toString(),
      });
      expect(answer.status).toBe(303);
      const location = answer.headers.get('location') as string;
      return { location, id: /\/registrations\/([^?]+)/.exec(location)?.[1] as string };
    };
    const page = async (path: string) => (await fetch(`${server.url}${path}`)).text();
    try {
      const emailed = await register('ruth@example.org', 'Ruth Emailed');
      const held = await register('naomi@example.org', 'Naomi Held');
      const shown = await page(held.location);
      const manage = /<p id="manage-link"><a href="(\/manage\/[^"]+)">Manage your registration<\/a>/.exec(shown)?.[1];
      expect(manage).toBeDefined();
      expect((await fetch(`${server.url}${manage}`)).status).toBe(200);
      expect(shown).toContain('Dietary needs: <bdi>Vegetarian</bdi>');
      expect(shown).not.toContain('Asthma');

      const [plain] = held.location.split('&confirmation=');
      const mark = held.location.split('&confirmation=')[1] as string;
      const emailedPlain = emailed.location;
      const flipped = `${mark.slice(0, -1)}${mark.endsWith('A') ? 'B' : 'A'}`;
      for (const guessed of [plain, `${plain}&confirmation=held`, `${plain}&confirmation=${flipped}`, `${emailedPlain}&confirmation=${mark}`]) {
        const other = await page(guessed as string);
        expect(other, guessed).toContain('<h1>Your registration</h1>');
        expect(other, guessed).not.toContain('/manage/');
        expect(other, guessed).not.toContain('Vegetarian');
        expect(other, guessed).not.toContain('id="confirmation-held"');
      }
    } finally {
      await server.close();
    }
  });

  it('a free registration held back says so and to keep the page; a JSON post answers confirmationEmailed false', async () => {
    const ctx = createTestContext({ db: tdb.db, mailer: mail.mailer, clock: new FixedClock(T0), env: { TRUST_PROXY: 'true', CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: '1' } });
    const server = await startTestServer(ctx);
    const free = await insertEvent(tdb.db, { capacity: null, pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 0 }] }) });
    try {
      const postJson = (email: string) =>
        fetch(`${server.url}/events/${free.slug}/register`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.20' },
          body: JSON.stringify({ name: 'Eli Free', email, attendees: [{ name: 'Eli', tier: 'adult' }] }),
        }).then(async (answer) => (await answer.json()) as { location: string; confirmationEmailed: boolean });
      expect((await postJson('eli@example.org')).confirmationEmailed).toBe(true);
      const held = await postJson('eli.two@example.org');
      expect(held.confirmationEmailed).toBe(false);
      const page = await (await fetch(`${server.url}${held.location}`)).text();
      expect(page).toContain('Confirmed (free)');
      expect(page).toContain('id="confirmation-held"');
      expect(page).toContain('id="keep-this-page"');
    } finally {
      await server.close();
    }
  });
});
