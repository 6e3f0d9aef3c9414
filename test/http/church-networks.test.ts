import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { queuedMessages } from '../support/webhook-events.js';

/**
 * CHURCH_NETWORKS: after a service many families register over the church's own Wi-Fi, one address. Posts
 * from the church's networks get CHURCH_NETWORK_FORM_POSTS_PER_MINUTE form posts a minute and no per-client
 * cap of confirmations or unpaid places; the per-mailbox caps still apply to them, and everyone else keeps
 * the spec's limits. The server trusts its loopback proxy, so each post names its client in X-Forwarded-For.
 */

const CHURCH_IPV4 = '203.0.113.7';
const OUTSIDE_IPV4 = '198.51.100.44';

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness({
    env: {
      TRUST_PROXY: 'true',
      CHURCH_NETWORKS: `${CHURCH_IPV4}/32,2001:db8:5::/48`,
      CHURCH_NETWORK_FORM_POSTS_PER_MINUTE: '60',
      CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR: '5',
    },
    admin: false,
  });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(async () => {
  await harness.tdb.db('rate_limits').delete();
});

const db = () => harness.tdb.db;

async function post(slug: string, client: string, email: string, options: { attendees?: number; payment?: 'bank' | 'card' } = {}) {
  const form = new URLSearchParams({ name: 'Church Family', email, payment: options.payment ?? 'bank' });
  for (let n = 1; n <= (options.attendees ?? 1); n += 1) {
    form.append('attendee_name', `Family Member ${n}`);
    form.append('attendee_tier', 'adult');
  }
  const answer = await fetch(`${harness.server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
    body: form.toString(),
  });
  return { status: answer.status, retryAfter: answer.headers.get('retry-after'), location: answer.headers.get('location') ?? '', text: await answer.text() };
}

/** The addresses the event's queued confirmations go to. */
async function confirmationsTo(eventId: string): Promise<string[]> {
  const queued = await db()('queued_mail')
    .join('registrations', 'registrations.id', 'queued_mail.registration_id')
    .where({ 'registrations.event_id': eventId, 'queued_mail.kind': 'registration-confirmation' })
    .pluck<number[]>('queued_mail.id');
  return (await queuedMessages(harness.ctx, 'registration-confirmation')).filter((m) => queued.includes(m.id)).flatMap((m) => m.to);
}

describe('posts from the church network', () => {
  it('forty families in a minute from the church address: every post registered and every one emailed, past the spec 10 posts, the 5 confirmations per client and the 30 unpaid places per client', async () => {
    const event = await insertEvent(db(), { capacity: null });
    const answers = [];
    for (let n = 1; n <= 40; n += 1) answers.push(await post(event.slug, CHURCH_IPV4, `family${n}@example.org`));
    expect(answers.map((a) => a.status)).toEqual(Array.from({ length: 40 }, () => 303));
    expect(await db()('registrations').where({ event_id: event.id, status: 'PENDING' }).count({ n: '*' }).first()).toEqual({ n: 40 });
    expect((await confirmationsTo(event.id)).sort()).toEqual(Array.from({ length: 40 }, (_, i) => `family${i + 1}@example.org`).sort());
    // Counted as the church's network, apart from anyone else at that address's /48 or key.
    expect(await db()('registrations').where({ event_id: event.id }).distinct('client_key')).toEqual([{ client_key: `church:${CHURCH_IPV4}` }]);
  });

  it('the church network has its own form limit (CHURCH_NETWORK_FORM_POSTS_PER_MINUTE): the post past it gets 429 with Retry-After', async () => {
    const event = await insertEvent(db(), { capacity: null });
    const statuses = [];
    for (let n = 1; n <= 61; n += 1) statuses.push((await post(event.slug, CHURCH_IPV4, `limit${n}@example.org`)).status);
    expect(statuses.slice(0, 60).every((status) => status === 303)).toBe(true);
    const over = await post(event.slug, CHURCH_IPV4, 'limit-over@example.org');
    expect(over.status).toBe(429);
    expect(Number(over.retryAfter)).toBeGreaterThan(0);
  });

  it('an IPv6 address anywhere in the church /48 is the church; an address in the next /48 keeps the spec 10 posts a minute', async () => {
    const event = await insertEvent(db(), { capacity: null });
    const church = [];
    for (let n = 0; n < 12; n += 1) church.push((await post(event.slug, `2001:db8:5:${(n * 4099).toString(16)}::${n + 1}`, `v6-${n}@example.org`)).status);
    expect(church).toEqual(Array.from({ length: 12 }, () => 303));
    const outside = [];
    for (let n = 0; n < 11; n += 1) outside.push((await post(event.slug, `2001:db8:6:${n}::1`, `v6-outside-${n}@example.org`)).status);
    expect(outside).toEqual([...Array.from({ length: 10 }, () => 303), 429]);
  });

  it('the per-mailbox caps still apply: one mailbox (spelt with +tags) gets 3 confirmations an hour and holds at most maxUnpaidSeatsPerClient unpaid places', async () => {
    const event = await insertEvent(db(), { capacity: null, max_unpaid_seats_per_client: 10 });
    const answers = [];
    for (const tag of ['', '+a', '+b', '+c']) answers.push(await post(event.slug, CHURCH_IPV4, `pat${tag}@example.org`, { attendees: 2 }));
    expect(answers.map((a) => a.status)).toEqual([303, 303, 303, 303]);
    expect(await confirmationsTo(event.id)).toHaveLength(3);
    // 8 held by the mailbox: two more fit, then it is refused by the mailbox's cap, not the church's connection.
    expect((await post(event.slug, CHURCH_IPV4, 'pat+d@example.org', { attendees: 2 })).status).toBe(303);
    const refused = await post(event.slug, CHURCH_IPV4, 'PAT+e@example.org', { attendees: 1 });
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('This email address already holds 10 unpaid places for this event');
    // Another family at the church is not held back by it.
    expect((await post(event.slug, CHURCH_IPV4, 'sam@example.org', { attendees: 2 })).status).toBe(303);
  });

  it("the church's network is named as such among the largest holders when the event's unpaid places pass its unpaidAlertShare", async () => {
    const event = await insertEvent(db(), { slug: 'sunday-lunch', title: 'Sunday Lunch', capacity: 50 });
    for (let n = 1; n <= 5; n += 1) expect((await post(event.slug, CHURCH_IPV4, `lunch${n}@example.org`, { attendees: 4 })).status).toBe(303);
    expect((await post(event.slug, OUTSIDE_IPV4, 'neighbour@example.org', { attendees: 1 })).status).toBe(303);
    const alerts = await db()('operations_alerts').where({ kind: 'unpaid_share' }).whereRaw(`details->>'eventId' = ?`, [event.id]);
    expect(alerts).toHaveLength(1);
    expect(alerts[0].reason).toContain(`hold 21 of the 50 places of "Sunday Lunch" (sunday-lunch) unpaid`);
    expect(alerts[0].reason).toContain("connection A (the church's network): 20 places in 5 registrations");
    expect(alerts[0].reason).toContain('connection B: 1 place in 1 registration');
  });

  it('card payments from the church network are not held to the per-client cap of unfinished card payments', async () => {
    const event = await insertEvent(db(), { capacity: 200, online_payment: true, max_unpaid_seats_per_client: 10 });
    for (let n = 1; n <= 3; n += 1) {
      const answer = await post(event.slug, CHURCH_IPV4, `card${n}@example.org`, { attendees: 5, payment: 'card' });
      expect(answer.status).toBe(303);
      expect(answer.location).toMatch(/\/pay\/cs_/);
    }
    expect(await db()('checkout_sessions').where({ event_id: event.id, status: 'OPEN' }).sum({ places: 'places' }).first()).toEqual({ places: 15 });
  });
});

describe('everyone else keeps the spec limits', () => {
  it('an address outside the church networks: the 11th post in a minute gets 429, confirmations stop at 5 an hour, and unpaid places at 30', async () => {
    const event = await insertEvent(db(), { capacity: null });
    const answers = [];
    for (let n = 1; n <= 11; n += 1) answers.push(await post(event.slug, OUTSIDE_IPV4, `outside${n}@example.org`, { attendees: n <= 3 ? 10 : 1 }));
    expect(answers.map((a) => a.status)).toEqual([303, 303, 303, 409, 409, 409, 409, 409, 409, 409, 429]);
    expect(answers[3]!.text).toContain('This connection already holds 30 unpaid places for this event');
    await harness.tdb.db('rate_limits').where({ bucket: 'POST /events/:slug/register' }).delete();
    const event2 = await insertEvent(db(), { capacity: null });
    for (let n = 1; n <= 7; n += 1) expect((await post(event2.slug, OUTSIDE_IPV4, `other${n}@example.org`)).status).toBe(303);
    expect(await confirmationsTo(event2.id)).toHaveLength(2);
  });
});
