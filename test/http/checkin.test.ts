import crypto from 'node:crypto';
import { Writable } from 'node:stream';
import { parse } from 'csv-parse/sync';
import { listCheckinLog } from '../../src/registrations/checkin/records.js';
import { checkinLines } from '../../src/door/show-lines.js';
import { attendeesCsv, exportAttendees } from '../../src/office/registrations/export.js';
import { beforeEach, describe, expect, it } from 'vitest';
import { createCheckinLink } from '../../src/door/links.js';
import { printedRoll } from '../../src/door/printed-roll.js';
import { createLogger } from '../../src/logger.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { pathForLog } from '../../src/secret-paths.js';
import { registerFamily, insertCamp } from '../support/checkin-fixtures.js';
import { createTestContext } from '../support/context.js';
import { insertUser } from '../support/factories.js';
import { startTestServer } from '../support/http.js';
import { useServerWithSink } from '../support/server-fixture.js';

const T0 = new Date('2026-12-05T07:30:00Z');
const web = useServerWithSink({ now: T0, truncate: 'registrations, events, users, queued_mail, rate_limits, checkin_links, checkin_nonces' });
const { clock, mail, context } = web;

beforeEach(async () => {
  await insertUser(web.tdb.db, context().cipher, { email: 'office@example.org' });
});

const unescape = (html: string) => html.replaceAll('&#x3D;', '=').replaceAll('&#x27;', "'");
async function get(path: string) {
  const response = await fetch(`${web.server.url}${path}`, { redirect: 'manual', headers: { accept: 'text/html' } });
  return { status: response.status, headers: response.headers, html: unescape(await response.text()) };
}
async function post(path: string, fields: Record<string, string>) {
  const response = await fetch(`${web.server.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
  return { status: response.status, headers: response.headers, html: unescape(await response.text()) };
}
async function upload(path: string, actions: unknown[]) {
  const response = await fetch(`${web.server.url}${path}/actions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ actions }) });
  return { status: response.status, body: (await response.json()) as { results: Array<{ id: string; outcome: string }>; here: number; total: number } };
}

/** A camp with the Lee family (a child with a peanut allergy, owing $180) and a paid adult, José Núñez. */
async function camp() {
  const ctx = context();
  const event = await insertCamp(web.tdb.db);
  const lee = await registerFamily(web.tdb.db, ctx.cipher, event, {
    contact: 'Ruth Lee',
    attendees: [
      { name: 'Ruth Lee', tier: 'adult' },
      { name: 'Mia Lee', tier: 'child', answers: { allergies: 'Peanuts', medication: 'Ventolin', tshirt: 'S' } },
    ],
  });
  const jose = await registerFamily(web.tdb.db, ctx.cipher, event, { contact: 'José Núñez', status: 'PAID', attendees: [{ name: 'José Núñez', tier: 'adult' }] });
  return { event, lee, jose };
}
const linkFor = async (slug: string, options: { hours?: number; label?: string; canTakePayment?: boolean } = {}) => {
  const { link, url } = await createCheckinLink(context(), { eventSlug: slug, hours: options.hours ?? 12, label: options.label ?? 'Front door', canTakePayment: options.canTakePayment ?? false, actor: 'office' });
  return { link, path: new URL(url).pathname };
};
const log = (registrationId: string) => web.tdb.db('checkin_log').where({ registration_id: registrationId }).orderBy('id').select('attendee_index', 'action', 'label');

describe('the check-in page of a volunteer link', () => {
  it('shows the roll with counts and the door flags (owes, showAtCheckin answers only, a child\'s guardian), behind the public pages\' headers', async () => {
    const { event } = await camp();
    const { path } = await linkFor(event.slug);
    const page = await get(path);
    expect(page.status).toBe(200);
    expect(page.headers.get('cache-control')).toBe('no-store');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'(?! 'unsafe-inline')[^;]*'nonce-[0-9a-f]{32}'/);
    expect(page.html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page.html).toContain('<span id="here-text">0 of 3 here</span>');
    const mia = /<li[^>]*data-key="[^"]+:1"[^>]*>[\s\S]*?<\/li>/.exec(page.html)?.[0] ?? '';
    expect(mia).toContain('<bdi>Mia Lee</bdi>');
    expect(mia).toContain('Guardian: <bdi>Ruth Lee</bdi>');
    expect(mia).toContain('Owes $180.00');
    expect(mia).toContain('<strong>Allergies:</strong> Peanuts');
    // Sensitive but not marked showAtCheckin: never on the page.
    expect(page.html).not.toContain('Ventolin');
    const joseRow = /<li[^>]*>(?:(?!<\/li>)[\s\S])*José Núñez(?:(?!<\/li>)[\s\S])*<\/li>/.exec(page.html)?.[0] ?? '';
    expect(joseRow).not.toContain('Owes');
    expect(joseRow).not.toContain('Guardian');
    // No payment buttons on a link made without --can-take-payment.
    expect(page.html).not.toContain('Paid $180.00 in cash');
  });

  it('a search in the address (no script) keeps the matching names, accents and case ignored', async () => {
    const { event } = await camp();
    const { path } = await linkFor(event.slug);
    const page = await get(`${path}?q=${encodeURIComponent('JOSE nun')}`);
    const rows = [...page.html.matchAll(/<li class="card attendee"[^>]*>/g)].map((m) => m[0]);
    expect(rows.filter((row) => !row.includes(' hidden'))).toHaveLength(1);
    expect(rows.find((row) => !row.includes(' hidden'))).toContain('data-search="jose nunez jose nunez"');
  });

  it('answers 404 alike for an unknown, an expired and a revoked link, and for a link of a deleted event', async () => {
    const { event } = await camp();
    const expired = await linkFor(event.slug, { hours: 1 });
    const revoked = await linkFor(event.slug, { label: 'Side door' });
    await web.tdb.db('checkin_links').where({ id: revoked.link.id }).update({ revoked_at: T0 });
    clock.set(new Date(T0.getTime() + 2 * 3_600_000));
    for (const path of [expired.path, revoked.path, '/checkin/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', '/checkin/short']) {
      const page = await get(path);
      expect(page.status).toBe(404);
      expect(page.html).toContain('We could not find that check-in page');
      expect((await post(`${path}/actions`, { registration: '00000000-0000-0000-0000-000000000000', attendee: '0', action: 'check_in' })).status).toBe(404);
    }
    const live = await linkFor(event.slug, { label: 'Hall' });
    await web.tdb.db('events').where({ id: event.id }).update({ deleted_at: clock.now() });
    expect((await get(live.path)).status).toBe(404);
  });

  it('limits guesses: ten wrong tokens a minute from one client, then 429, while a live link from the same client still opens', async () => {
    const { event } = await camp();
    const { path } = await linkFor(event.slug);
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push((await get(`/checkin/${'x'.repeat(42)}${i % 10}`)).status);
    expect(statuses).toEqual([...Array(10).fill(404), 429]);
    expect((await get(path)).status).toBe(200);
  });

  it('keeps the token out of the request log: the page, a check-in and a payment are logged with it redacted', async () => {
    expect(pathForLog('/CheckIn/abcDEF123_-xyz')).toBe('/CheckIn/[redacted]');
    const { event, lee } = await camp();
    const { path } = await linkFor(event.slug, { canTakePayment: true });
    const token = path.split('/')[2] as string;
    const written: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        written.push(chunk.toString());
        done();
      },
    });
    const logged = await startTestServer(createTestContext({ db: web.tdb.db, mailer: mail.mailer, clock, env: mail.sink.configEnv(), logger: createLogger({ level: 'info', destination }) }));
    try {
      const at = (p: string) => `${logged.url}${p}`;
      expect((await fetch(at(`${path}?q=lee`))).status).toBe(200);
      const form = (fields: Record<string, string>) => ({ method: 'POST', redirect: 'manual' as const, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(fields).toString() });
      expect((await fetch(at(`${path}/actions`), form({ registration: lee, attendee: '0', action: 'check_in' }))).status).toBe(303);
      expect((await fetch(at(`${path}/pay`), form({ registration: lee, method: 'cash' }))).status).toBe(303);
    } finally {
      await logged.close();
    }
    const requests = written.join('').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { msg: string; req?: { url: string } });
    expect(requests.filter((line) => line.msg === 'request completed').map((line) => line.req?.url)).toEqual([
      '/checkin/[redacted]',
      '/checkin/[redacted]/[redacted]',
      '/checkin/[redacted]/[redacted]',
    ]);
    expect(written.join('')).not.toContain(token);
  });
});

describe('families together on the roll', () => {
  /** Families whose first names, in order, would scatter them: Ann, Carmen, José, Mia, Nobuhle, Ruth, Zoe. */
  async function scattered() {
    const ctx = context();
    const event = await insertCamp(web.tdb.db);
    const at = (minutes: number) => new Date(T0.getTime() - 2 * 86_400_000 + minutes * 60_000);
    await registerFamily(web.tdb.db, ctx.cipher, event, { contact: 'Ruth Lee', now: at(1), attendees: [{ name: 'Ruth Lee', tier: 'adult' }, { name: 'Mia Lee', tier: 'child' }] });
    await registerFamily(web.tdb.db, ctx.cipher, event, { contact: 'José Núñez', now: at(2), attendees: [{ name: 'José Núñez', tier: 'adult' }] });
    // The contact's surname files the family, whatever the attendees are called; a one-word name is its own surname.
    await registerFamily(web.tdb.db, ctx.cipher, event, { contact: 'Ann Adams', now: at(3), attendees: [{ name: 'Zoe Adams', tier: 'child' }, { name: 'Ann Adams', tier: 'adult' }] });
    await registerFamily(web.tdb.db, ctx.cipher, event, { contact: 'Nobuhle', now: at(4), attendees: [{ name: 'Nobuhle', tier: 'adult' }] });
    await registerFamily(web.tdb.db, ctx.cipher, event, { contact: 'Carmen de la Cruz', now: at(5), attendees: [{ name: 'Carmen de la Cruz', tier: 'adult' }] });
    return event;
  }
  const FAMILY_ORDER = [['Zoe Adams', 'Ann Adams'], ['Carmen de la Cruz'], ['Ruth Lee', 'Mia Lee'], ['Nobuhle'], ['José Núñez']];

  it('the check-in page lists each registration together, families by the contact\'s surname, attendees in the order registered', async () => {
    const event = await scattered();
    const { path } = await linkFor(event.slug);
    const page = await get(path);
    const families = [...page.html.matchAll(/<li class="family[^"]*">([\s\S]*?)<\/ul>\s*<\/li>/g)].map((family) =>
      [...(family[1] ?? '').matchAll(/<strong class="name"><bdi>([^<]+)<\/bdi>/g)].map((name) => name[1]),
    );
    expect(families).toEqual(FAMILY_ORDER);
    // A family of more than one is framed and named by its contact; one person alone is not.
    expect([...page.html.matchAll(/<li class="family( together)?">/g)].map((m) => Boolean(m[1]))).toEqual([true, false, true, false, false]);
    expect(page.html).toContain('Registered together by <bdi>Ann Adams</bdi> · 2 people');
    // A search in the address hides the families it leaves empty.
    const searched = await get(`${path}?q=lee`);
    expect([...searched.html.matchAll(/<li class="family[^"]*"( hidden)?>/g)].map((m) => Boolean(m[1]))).toEqual([true, true, false, true, true]);
  });

  it('the printed roll keeps each family together in the same order, one table body per family', async () => {
    const event = await scattered();
    const { html } = await printedRoll(context(), event.slug);
    const families = [...html.matchAll(/<tbody class="family">([\s\S]*?)<\/tbody>/g)].map((family) =>
      [...(family[1] ?? '').matchAll(/<td class="name"><bdi>([^<]+)<\/bdi>/g)].map((name) => name[1]),
    );
    expect(families).toEqual(FAMILY_ORDER);
  });
});

describe('what the page\'s script is told when its link stops working', () => {
  it('an upload through a revoked or an expired link is refused with a code saying which; a token never made is plainly not found', async () => {
    const { event, lee } = await camp();
    const revoked = await linkFor(event.slug, { label: 'Side door' });
    const expired = await linkFor(event.slug, { hours: 1 });
    const tap = () => [{ id: crypto.randomUUID(), action: 'check_in', registration: lee, attendee: 0 }];
    await web.tdb.db('checkin_links').where({ id: revoked.link.id }).update({ revoked_at: T0 });
    clock.set(new Date(T0.getTime() + 2 * 3_600_000));
    const answer = async (path: string) => {
      const response = await fetch(`${web.server.url}${path}/actions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ actions: tap() }) });
      return { status: response.status, code: ((await response.json()) as { error: { code: string } }).error.code, cache: response.headers.get('cache-control') };
    };
    expect(await answer(revoked.path)).toEqual({ status: 410, code: 'link_revoked', cache: 'no-store' });
    expect(await answer(expired.path)).toEqual({ status: 410, code: 'link_expired', cache: 'no-store' });
    expect(await answer('/checkin/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')).toEqual({ status: 404, code: 'not_found', cache: 'no-store' });
    expect(await log(lee)).toEqual([]);
    // The page itself still answers all of them alike.
    for (const path of [revoked.path, expired.path]) expect((await get(path)).status).toBe(404);
  });
});

describe('the check-in page\'s service worker', () => {
  it('is served at /checkin/sw.js, whose scope covers every link\'s page, as JavaScript the Content-Security-Policy allows as a worker', async () => {
    const { event } = await camp();
    const { link, path } = await linkFor(event.slug);
    const page = await get(path);
    expect(page.html).toContain('data-worker="/checkin/sw.js"');
    expect(page.headers.get('x-checkin-link-expires')).toBe(link.expiresAt.toISOString());
    expect(page.headers.get('content-security-policy')).toMatch(/(?:^|;)\s*worker-src 'self'(?:;|$)/);
    const worker = await fetch(`${web.server.url}/checkin/sw.js`);
    expect(worker.status).toBe(200);
    expect(worker.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(worker.headers.get('cache-control')).toBe('no-cache');
    expect(worker.headers.get('x-content-type-options')).toBe('nosniff');
    expect(worker.headers.get('content-security-policy')).toMatch(/worker-src 'self'/);
    expect(await worker.text()).toContain('eventops-checkin-page:');
  });
});

describe('check-in records', () => {
  it('two volunteers checking in the same person at once record one check-in, with the link\'s label', async () => {
    const { event, lee } = await camp();
    const front = await linkFor(event.slug, { label: 'Front door' });
    const side = await linkFor(event.slug, { label: 'Side door' });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => post(`${(i % 2 ? side : front).path}/actions`, { registration: lee, attendee: '1', action: 'check_in' })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(303));
    const entries = await log(lee);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ attendee_index: 1, action: 'check_in' });
    expect(['Front door', 'Side door']).toContain(entries[0]?.label);
    const state = await web.tdb.db('attendee_checkins').where({ registration_id: lee, attendee_index: 1 }).first();
    expect(state.checked_in_at).not.toBeNull();
    expect((await get(front.path)).html).toContain('<span id="here-text">1 of 3 here</span>');
  });

  it('an upload sent twice (its answer lost) is recorded once: the ids already seen are ignored; undo and check-out are recorded too', async () => {
    const { event, lee } = await camp();
    const { path } = await linkFor(event.slug);
    // Tapped offline ten minutes after the link was made, uploaded twenty minutes later.
    const tapped = new Date(T0.getTime() + 10 * 60_000).toISOString();
    clock.set(new Date(T0.getTime() + 30 * 60_000));
    const actions = [
      { id: '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0001', action: 'check_in', registration: lee, attendee: 0, at: tapped },
      { id: '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0002', action: 'check_in', registration: lee, attendee: 1, at: tapped },
      { id: '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0003', action: 'undo', registration: lee, attendee: 0, at: tapped },
    ];
    const first = await upload(path, actions);
    expect(first.status).toBe(200);
    expect(first.body.results.map((r) => r.outcome)).toEqual(['recorded', 'recorded', 'recorded']);
    expect(first.body).toMatchObject({ here: 1, total: 3 });
    const again = await upload(path, actions);
    expect(again.body.results.map((r) => r.outcome)).toEqual(['seen', 'seen', 'seen']);
    expect(await log(lee)).toEqual([
      { attendee_index: 0, action: 'check_in', label: 'Front door' },
      { attendee_index: 1, action: 'check_in', label: 'Front door' },
      { attendee_index: 0, action: 'undo', label: 'Front door' },
    ]);
    // The tap's time is kept for a check-in queued offline.
    const state = await web.tdb.db('attendee_checkins').where({ registration_id: lee, attendee_index: 1 }).first();
    expect(state.checked_in_at.toISOString()).toBe(tapped);
    const out = await upload(path, [{ id: '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0004', action: 'check_out', registration: lee, attendee: 1 }]);
    expect(out.body.results[0]?.outcome).toBe('recorded');
    expect((await web.tdb.db('attendee_checkins').where({ registration_id: lee, attendee_index: 1 }).first()).checked_out_by).toBe('Front door');
  });

  it('refuses a registration of another event, or an attendee it does not have', async () => {
    const { event, lee } = await camp();
    const other = await insertCamp(web.tdb.db);
    const { path } = await linkFor(other.slug);
    const answer = await upload(path, [
      { id: '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0010', action: 'check_in', registration: lee, attendee: 0 },
      { id: '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0011', action: 'check_in', registration: lee, attendee: 7 },
    ]);
    expect(answer.body.results.map((r) => r.outcome)).toEqual(['not_found', 'not_found']);
    expect(await log(lee)).toEqual([]);
    expect(event.id).not.toBe(other.id);
  });
});

describe('what one link can make the server do', () => {
  const tapsFor = (registration: string, count: number, at?: string) =>
    Array.from({ length: count }, (_, i) => ({ id: crypto.randomUUID(), action: i % 2 === 0 ? 'check_in' : 'undo', registration, attendee: 0, ...(at ? { at } : {}) }));

  it('a live link has its own budget (each request 1, each tap 1 more, 300 a minute): past it, 429 and nothing recorded; other links and the next minute are not held back', async () => {
    const { event, lee } = await camp();
    const { path } = await linkFor(event.slug);
    const other = await linkFor(event.slug, { label: 'Side door' });
    const first = await upload(path, tapsFor(lee, 100));
    const second = await upload(path, tapsFor(lee, 100));
    expect([first.status, second.status]).toEqual([200, 200]);
    expect((await upload(path, tapsFor(lee, 97))).status).toBe(200); // 202 + 98: the whole minute's 300
    const entries = (await log(lee)).length;
    const refused = await fetch(`${web.server.url}${path}/actions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ actions: tapsFor(lee, 1) }) });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('link_budget_spent');
    expect((await log(lee)).length).toBe(entries);
    // A form post and the page itself are held to it too; the refusal does not load the roll.
    const page = await get(path);
    expect(page.status).toBe(429);
    expect(page.html).not.toContain('Ruth Lee');
    expect((await post(`${path}/actions`, { registration: lee, attendee: '1', action: 'check_in' })).status).toBe(429);
    // Another link of the same door, from the same client, is not.
    expect((await get(other.path)).status).toBe(200);
    clock.set(new Date(T0.getTime() + 61_000));
    expect((await upload(path, tapsFor(lee, 1))).status).toBe(200);
  });

  it('one upload records at most 100 taps, in the order tapped; the answer names them and says how many are left for the next upload', async () => {
    const { event, lee } = await camp();
    const { path } = await linkFor(event.slug);
    const actions = tapsFor(lee, 150);
    const answer = await upload(path, actions);
    expect(answer.status).toBe(200);
    expect(answer.body.results.map((r) => r.id)).toEqual(actions.slice(0, 100).map((a) => a.id));
    expect((answer.body as unknown as { left: number }).left).toBe(50);
    expect(await web.tdb.db('checkin_nonces').count({ n: '*' }).first()).toEqual({ n: 100 });
    const rest = await upload(path, actions.slice(100));
    expect(rest.body.results.map((r) => r.id)).toEqual(actions.slice(100).map((a) => a.id));
    expect(await web.tdb.db('checkin_nonces').count({ n: '*' }).first()).toEqual({ n: 150 });
  });

  it('a tap id belongs to its link: the same id sent through another link (of this event or another) is its own tap, never "seen"', async () => {
    const { event, lee, jose } = await camp();
    const front = await linkFor(event.slug);
    const side = await linkFor(event.slug, { label: 'Side door' });
    const id = '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0099';
    expect((await upload(front.path, [{ id, action: 'check_in', registration: lee, attendee: 0 }])).body.results).toEqual([{ id, outcome: 'recorded' }]);
    expect((await upload(side.path, [{ id, action: 'check_in', registration: jose, attendee: 0 }])).body.results).toEqual([{ id, outcome: 'recorded' }]);
    expect((await upload(side.path, [{ id, action: 'check_out', registration: jose, attendee: 0 }])).body.results).toEqual([{ id, outcome: 'seen' }]);
    expect(await log(jose)).toEqual([{ attendee_index: 0, action: 'check_in', label: 'Side door' }]);
  });

  it('a tap timed outside the event\'s days (here backdated to the link\'s making, two days before) is recorded and flagged in show and export', async () => {
    const { event, lee } = await camp();
    clock.set(new Date(T0.getTime() - 2 * 24 * 3_600_000));
    const { path } = await linkFor(event.slug, { hours: 72 });
    const early = new Date(clock.now().getTime() + 60_000).toISOString();
    clock.set(T0);
    const answer = await upload(path, [
      { id: '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0101', action: 'check_in', registration: lee, attendee: 0, at: early },
      { id: '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0102', action: 'check_in', registration: lee, attendee: 1 },
    ]);
    expect(answer.body.results.map((r) => r.outcome)).toEqual(['recorded', 'recorded']);
    const rows = await web.tdb.db('checkin_log').where({ registration_id: lee }).orderBy('id').select('attendee_index', 'at', 'outside_event_days');
    expect(rows).toEqual([
      { attendee_index: 0, at: new Date(early), outside_event_days: true },
      { attendee_index: 1, at: T0, outside_event_days: false },
    ]);

    const ctx = context();
    const shown = checkinLines({ attendees: [{ name: 'Ruth Lee' }, { name: 'Mia Lee' }], checkins: await listCheckinLog(ctx.db, lee) }, (date) => date.toISOString());
    expect(shown).toEqual([
      'Check-in:',
      `  ${early} Ruth Lee checked in (Front door) [flag: timed outside the event's days]`,
      `  ${T0.toISOString()} Mia Lee checked in (Front door)`,
    ]);
    const csv = parse(attendeesCsv(await exportAttendees(ctx, event.slug)), { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(Object.keys(csv[0] ?? {}).at(-1)).toBe('checkin_flag');
    expect(csv.filter((row) => row.contact_name === 'Ruth Lee').map((row) => [row.attendee_name, row.checkin_flag])).toEqual([
      ['Ruth Lee', "check-in timed outside the event's days"],
      ['Mia Lee', ''],
    ]);
  });
});

describe('paying at the door', () => {
  it('records the balance in cash in the same ledger as mark-paid, with the link\'s label as who, and the receipt reaches the family', async () => {
    const { event, lee } = await camp();
    const { path } = await linkFor(event.slug, { label: 'Welcome desk', canTakePayment: true });
    const page = await get(path);
    expect(page.html).toContain('Paid $180.00 in cash');
    const paid = await post(`${path}/pay`, { registration: lee, method: 'cash' });
    expect(paid.status).toBe(303);
    expect(paid.headers.get('location')).toBe(`${path}?done=paid`);
    expect(await web.tdb.db('registrations').where({ id: lee }).first()).toMatchObject({ status: 'PAID', payment_method: 'cash' });
    expect(await web.tdb.db('registration_money').where({ registration_id: lee }).first()).toMatchObject({ office_paid_minor: 18000, balance_minor: 0 });
    expect(await web.tdb.db('registration_payments').where({ registration_id: lee }).select('amount_minor', 'method', 'recorded_by')).toEqual([
      { amount_minor: 18000, method: 'cash', recorded_by: 'Welcome desk' },
    ]);
    expect(await web.tdb.db('registration_history').where({ registration_id: lee, action: 'marked_paid' }).first()).toMatchObject({ actor: 'Welcome desk' });
    await deliverQueuedMail(context(), { limit: 10 });
    const [receipt] = await mail.sink.waitFor(1);
    expect(receipt?.envelope.to).toEqual(['ruth@example.org']);
    expect(receipt?.subject).toBe('Receipt: Kids Camp');
    expect((await get(`${path}?done=paid`)).html).toContain('Payment recorded');

    // Paid already: refused, saying why, and nothing more is recorded.
    const twice = await post(`${path}/pay`, { registration: lee, method: 'bank' });
    expect(twice.status).toBe(409);
    expect(twice.html).toContain('is already paid');
    expect(await web.tdb.db('registration_payments').where({ registration_id: lee })).toHaveLength(1);
  });

  it('a link made without --can-take-payment records no payment', async () => {
    const { event, lee } = await camp();
    const { path } = await linkFor(event.slug);
    const refused = await post(`${path}/pay`, { registration: lee, method: 'cash' });
    expect(refused.status).toBe(403);
    expect(await web.tdb.db('registration_payments').where({ registration_id: lee })).toHaveLength(0);
    expect((await web.tdb.db('registrations').where({ id: lee }).first()).status).toBe('PENDING');
  });
});
