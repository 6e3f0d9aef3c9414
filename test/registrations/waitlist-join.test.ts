import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { createMailer } from '../../src/mail/create.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import type { Mailer } from '../../src/mail/types.js';
import { CONFIRMATIONS_PER_ADDRESS_PER_HOUR } from '../../src/signup/confirmations.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { startCaptchaServer, type CaptchaServer } from '../support/captcha-server.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { entries, formBody, fullWaitlistEvent } from './waitlist-support.js';

/**
 * The public join as an attacker uses it: no mailbox of its own, any address typed, as many posts as
 * the rate limit allows. Each test runs the attack over real HTTP on a real server, with the real mailer
 * delivering to an SMTP sink.
 */
const smtp = useSmtpSink();
let tdb: TestDatabase;
let ctx: AppContext & { clock: FixedClock };
const mailers: Mailer[] = [];
let captcha: CaptchaServer;
const servers: TestServer[] = [];

beforeAll(async () => {
  tdb = await createTestDatabase();
  captcha = await startCaptchaServer({ secret: 'captcha-secret', validTokens: ['good-token', 'json-token'] });
});
afterAll(async () => {
  await captcha?.close();
  await tdb?.drop();
});
beforeEach(async () => {
  await tdb.db('rate_limits').delete();
});
afterEach(async () => {
  while (servers.length > 0) await servers.pop()?.close();
  while (mailers.length > 0) await mailers.pop()?.close();
  await tdb.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED', 'UNCONFIRMED']).update({ state: 'REMOVED' });
  await tdb.db('queued_mail').where({ status: 'PENDING' }).update({ status: 'SENT' });
});

/** A server on its own context (clock at 2026-11-22, the real mailer to the sink), with `env` on top. */
async function serve(env: Record<string, string> = {}): Promise<string> {
  ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date('2026-11-22T00:00:00Z')), env: { ...smtp.sink.configEnv(), ...env } }) as AppContext & {
    clock: FixedClock;
  };
  const created = await createMailer(ctx.config, ctx.logger, { timeoutMs: 10_000 });
  mailers.push(created);
  ctx.mailer = async () => created;
  const server = await startTestServer(ctx);
  servers.push(server);
  return server.url;
}

const CAPTCHA_ENV = { CAPTCHA_SECRET_KEY: 'captcha-secret', CAPTCHA_SITE_KEY: 'site-key-123' };

const postForm = (url: string, path: string, fields: Record<string, string | string[]>) =>
  fetch(`${url}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: formBody(fields) });
const postJson = (url: string, path: string, body: unknown) =>
  fetch(`${url}${path}`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const page = async (url: string, path: string) => (await fetch(`${url}${path}`)).text();

/** What arrived at the sink once the queue is delivered. */
async function delivered() {
  await deliverQueuedMail(ctx, { limit: 100 });
  return smtp.sink.messages;
}

/** A page as it reads whatever the request: without its per-request nonces. */
const sameEveryTime = (html: string) => html.replace(/nonce="[^"]*"/g, 'nonce=""');

function linkIn(text: string | undefined, prefix: string): string {
  const path = new RegExp(`(${prefix}/[A-Za-z0-9_.-]+)`).exec(text ?? '')?.[1];
  if (!path) throw new Error(`no ${prefix} link in: ${text}`);
  return path;
}

describe('a junk waiting-list join', () => {
  it('never closes the public form: an unconfirmed entry for 8 places on a camp with 7 free leaves "7 places left", and the 7 sell', async () => {
    const url = await serve();
    const { event } = await fullWaitlistEvent(tdb.db, ctx.cipher, 10, { max_attendees_per_registration: 8 }, 3);
    const junk = await postForm(url, `/events/${event.slug}/waitlist`, { name: 'Nobody', email: 'nobody@junk.example', places: '8' });
    expect(junk.status).toBe(202);
    expect(await entries(tdb.db, event.id)).toMatchObject([{ state: 'UNCONFIRMED', places: 8 }]);

    const shown = await page(url, `/events/${event.slug}`);
    expect(shown).toContain('7 places left');
    expect(shown).not.toContain('Sold out');
    const names = Array.from({ length: 7 }, (_, n) => `Camper ${n + 1}`);
    const sold = await postForm(url, `/events/${event.slug}/register`, {
      name: 'Camp Family',
      email: 'camp@example.org',
      attendee_name: names,
      attendee_tier: names.map(() => 'adult'),
      payment: 'bank',
    });
    expect(sold.status).toBe(303);
    expect(await tdb.db('registrations').where({ event_id: event.id, status: 'PENDING' }).sum({ n: 'attendee_count' }).first()).toEqual({ n: 7 });
    // The pass offers an unconfirmed entry nothing.
    await tdb.db('events').where({ id: event.id }).update({ capacity: 18 });
    expect(await runWaitlistPass(ctx, { actor: 'test' })).toMatchObject({ offered: 0 });
  });

  it('holds no place freed later, where an entry the office adds takes it at once', async () => {
    const url = await serve();
    const junked = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    expect((await postForm(url, `/events/${junked.event.slug}/waitlist`, { name: 'Nobody', email: 'nobody@junk.example', places: '1' })).status).toBe(202);
    await tdb.db('registrations').where({ id: junked.registrations[0] }).update({ status: 'CANCELLED' });
    expect(await page(url, `/events/${junked.event.slug}`)).toContain('1 place left');

    const added = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    await addToWaitingList(ctx, added.event, { contact: { name: 'Lee Family', email: 'lee@example.org' }, places: 1 }, { actor: 'office' });
    expect((await entries(tdb.db, added.event.id)).map((e) => e.state)).toEqual(['WAITING']);
    await tdb.db('registrations').where({ id: added.registrations[0] }).update({ status: 'CANCELLED' });
    expect(await page(url, `/events/${added.event.slug}`)).toContain('Sold out');
  });

  it('lapses a day after joining, unconfirmed: its link no longer confirms, and the pass lapses the rest', async () => {
    const url = await serve();
    const { event } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    await postForm(url, `/events/${event.slug}/waitlist`, { name: 'Late', email: 'late@example.org', places: '1' });
    await postForm(url, `/events/${event.slug}/waitlist`, { name: 'Never', email: 'never@example.org', places: '1' });
    const confirm = linkIn((await delivered()).find((mail) => mail.envelope.to.includes('late@example.org'))?.text, '/waitlist/confirm');

    ctx.clock.advance(24 * 3600_000);
    expect(await page(url, confirm)).toContain('This link no longer works');
    const tooLate = await fetch(`${url}${confirm}`, { method: 'POST' });
    expect(await tooLate.text()).toContain('works for 24 hours');
    expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['LAPSED', 'UNCONFIRMED']);
    expect(await runWaitlistPass(ctx, { actor: 'test' })).toMatchObject({ lapsed: 1 });
    expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['LAPSED', 'LAPSED']);
    const ids = (await entries(tdb.db, event.id)).map((e) => e.id);
    expect(await tdb.db('waitlist_history').whereIn('entry_id', ids).orderBy('id').pluck('action')).toEqual(['joined', 'joined', 'lapsed', 'lapsed']);
  });

  it('takes its place in the queue when confirmed: the order of confirming; a mailbox already on the list through another join is not put on twice', async () => {
    const url = await serve();
    const { event } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    for (const email of ['first@example.org', 'second@example.org', 'second+again@example.org']) {
      expect((await postForm(url, `/events/${event.slug}/waitlist`, { name: 'Family', email, places: '1' })).status).toBe(202);
    }
    const sent = await delivered();
    const confirmOf = (to: string) => linkIn(sent.find((mail) => mail.envelope.to.includes(to))?.text, '/waitlist/confirm');
    expect(await (await fetch(`${url}${confirmOf('second@example.org')}`, { method: 'POST' })).text()).toContain('You are number 1');
    expect(await (await fetch(`${url}${confirmOf('first@example.org')}`, { method: 'POST' })).text()).toContain('You are number 2');
    expect(await (await fetch(`${url}${confirmOf('second+again@example.org')}`, { method: 'POST' })).text()).toContain('You are already on the waiting list');
    const rows = await tdb.db('waitlist_entries').where({ event_id: event.id }).orderBy('position').select('state', 'email_enc');
    expect(rows.map((row) => [ctx.cipher.decrypt(row.email_enc), row.state])).toEqual([
      ['second+again@example.org', 'LAPSED'],
      ['second@example.org', 'WAITING'],
      ['first@example.org', 'WAITING'],
    ]);
  });
});

describe('joining needs the bot check whenever the registration form does', () => {
  it('without a token, or with a used one, no entry is stored and no email sent; with a good one the join is asked', async () => {
    const url = await serve({ ...CAPTCHA_ENV, CAPTCHA_VERIFY_URL: captcha.verifyUrl });
    const { event } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    const shown = await page(url, `/events/${event.slug}`);
    expect(shown).toMatch(/id="waitlist-form"[\s\S]*<div class="cf-turnstile" data-sitekey="site-key-123"><\/div>[\s\S]*id="join-waitlist"/);
    expect(shown).toContain('https://challenges.cloudflare.com/turnstile/v0/api.js');

    const fields = { name: 'Bot', email: 'bot@example.org', places: '2' };
    const missing = await postForm(url, `/events/${event.slug}/waitlist`, fields);
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('The bot check did not pass');
    const forged = await postJson(url, `/events/${event.slug}/waitlist`, { ...fields, places: 2, captchaToken: 'forged' });
    expect(forged.status).toBe(400);
    expect(((await forged.json()) as { error: { code: string } }).error.code).toBe('captcha_failed');
    expect(await entries(tdb.db, event.id)).toEqual([]);

    const good = await postForm(url, `/events/${event.slug}/waitlist`, { ...fields, 'cf-turnstile-response': 'good-token' });
    expect(good.status).toBe(202);
    expect(captcha.checks.at(-1)).toEqual({ secret: 'captcha-secret', response: 'good-token', remoteip: '127.0.0.1' });
    const replayed = await postForm(url, `/events/${event.slug}/waitlist`, { ...fields, email: 'bot2@example.org', 'cf-turnstile-response': 'good-token' });
    expect(replayed.status).toBe(400);
    expect((await postJson(url, `/events/${event.slug}/waitlist`, { ...fields, email: 'json@example.org', places: 2, captchaToken: 'json-token' })).status).toBe(202);
    expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['UNCONFIRMED', 'UNCONFIRMED']);
    expect((await delivered()).map((mail) => mail.envelope.to[0]).sort()).toEqual(['bot@example.org', 'json@example.org']);
  });

  it('a captcha secret the verifier refuses: 503 and an error-log row, no entry', async () => {
    const url = await serve({ ...CAPTCHA_ENV, CAPTCHA_SECRET_KEY: 'a-stale-secret', CAPTCHA_VERIFY_URL: captcha.verifyUrl });
    const { event } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    const refused = await postForm(url, `/events/${event.slug}/waitlist`, { name: 'Jo', email: 'jo@example.org', places: '1', 'cf-turnstile-response': 'whatever' });
    expect(refused.status).toBe(503);
    expect(await entries(tdb.db, event.id)).toEqual([]);
    expect(await tdb.db('error_logs').where({ source: 'http:waitlist' }).pluck('message')).toContain('the captcha verifier refused CAPTCHA_SECRET_KEY: check it against the site key');
  });
});

describe('a join tells nobody but the mailbox who is on the list', () => {
  it('every join gets the same answer (page and JSON) whether the mailbox is new, waiting, holding an offer or unconfirmed; the email tells the mailbox', async () => {
    const url = await serve();
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    await addToWaitingList(ctx, event, { contact: { name: 'Offered Family', email: 'offered@example.org' }, places: 1 }, { actor: 'office' });
    await addToWaitingList(ctx, event, { contact: { name: 'Waiting Family', email: 'waiting@example.org' }, places: 2 }, { actor: 'office' });
    await tdb.db('registrations').where({ id: registrations[0] }).update({ status: 'CANCELLED' });
    expect(await runWaitlistPass(ctx, { actor: 'test' })).toMatchObject({ offered: 1 });
    await postForm(url, `/events/${event.slug}/waitlist`, { name: 'Pending', email: 'pending@example.org', places: '1' });
    await delivered();
    smtp.sink.clear();

    const mailboxes = ['new@example.org', 'Waiting+x@example.org', 'offered@example.org', 'pending@example.org'];
    const pages = [];
    const replies = [];
    for (const email of mailboxes) {
      const asked = await postForm(url, `/events/${event.slug}/waitlist`, { name: 'Someone Else', email, places: '1' });
      pages.push({ status: asked.status, body: sameEveryTime(await asked.text()) });
      const json = await postJson(url, `/events/${event.slug}/waitlist`, { name: 'Someone Else', email, places: 1 });
      replies.push({ status: json.status, body: await json.text() });
    }
    expect(new Set(pages.map((p) => JSON.stringify(p))).size).toBe(1);
    expect(new Set(replies.map((r) => JSON.stringify(r))).size).toBe(1);
    expect(pages[0]?.status).toBe(202);
    expect(pages[0]?.body).toContain('Check your email');
    expect(pages[0]?.body).not.toMatch(/number \d/);
    expect(replies[0]?.body).not.toContain('position');

    const sent = await delivered();
    const to = (address: string) => sent.filter((mail) => mail.envelope.to.includes(address));
    expect(to('new@example.org').map((mail) => mail.subject)).toEqual(Array(2).fill('Confirm your place on the waiting list: Family Camp'));
    const waiting = to('waiting@example.org');
    expect(waiting.map((mail) => mail.subject)).toEqual(Array(2).fill('You are already on the waiting list: Family Camp'));
    expect(waiting[0]?.text).toContain('Hi Waiting Family');
    // Behind the family holding the offer.
    expect(waiting[0]?.text).toContain('You are number 2 on the waiting list');
    const offered = to('offered@example.org');
    expect(offered[0]?.subject).toBe('You are already on the waiting list: Family Camp');
    expect(offered[0]?.text).toMatch(/Places are held for you until .* Register now: http\S+\?offer=/);
    // Still one live entry per mailbox; the new and pending addresses have unconfirmed asks only.
    expect((await entries(tdb.db, event.id)).filter((e) => e.state === 'WAITING' || e.state === 'OFFERED')).toHaveLength(2);
  });

  it(`join emails count under the confirmation caps: one mailbox gets at most ${CONFIRMATIONS_PER_ADDRESS_PER_HOUR} an hour with registration confirmations, one client at most its hourly cap; the answers stay the same`, async () => {
    const url = await serve({ CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: '100' });
    const { event } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    const open = await fullWaitlistEvent(tdb.db, ctx.cipher, 10, {}, 0);
    const registered = await postForm(url, `/events/${open.event.slug}/register`, {
      name: 'Victim',
      email: 'victim@example.org',
      attendee_name: 'Victim',
      attendee_tier: 'adult',
      payment: 'bank',
    });
    expect(registered.status).toBe(303);
    const answers = new Set<string>();
    for (let n = 1; n <= 4; n++) {
      const asked = await postForm(url, `/events/${event.slug}/waitlist`, { name: 'Victim', email: `victim+${n}@example.org`, places: '1' });
      answers.add(`${asked.status} ${sameEveryTime(await asked.text())}`);
    }
    expect(answers.size).toBe(1);
    const sent = await delivered();
    expect(sent).toHaveLength(CONFIRMATIONS_PER_ADDRESS_PER_HOUR);
    expect(sent.filter((mail) => mail.subject.startsWith('Confirm your place'))).toHaveLength(CONFIRMATIONS_PER_ADDRESS_PER_HOUR - 1);
    // Nothing is stored for a join whose email was held back: it could never be confirmed.
    expect(await entries(tdb.db, event.id)).toHaveLength(CONFIRMATIONS_PER_ADDRESS_PER_HOUR - 1);

    smtp.sink.clear();
    await tdb.db('rate_limits').delete();
    const capped = await serve({ CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: '2' });
    for (const email of ['a@example.org', 'b@example.org', 'c@example.org']) {
      expect((await postForm(capped, `/events/${event.slug}/waitlist`, { name: 'Someone', email, places: '1' })).status).toBe(202);
    }
    expect((await delivered()).map((mail) => mail.envelope.to[0])).toEqual(['a@example.org', 'b@example.org']);
  });
});
