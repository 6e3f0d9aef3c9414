import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { forgetClientKeys } from '../../src/payments/unpaid-seat-cap.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { insertEvent, insertUser } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { queuedMessages } from '../support/webhook-events.js';

/**
 * maxUnpaidSeatsPerClient: the public form's bank-transfer (and free) registrations from one client address
 * (IPv4 as it is, IPv6 by /48), and to one mailbox, hold at most that many unpaid places of an event; card
 * payment stays open. Past the event's unpaidAlertShare of its capacity, the office hears once.
 */

let harness: PaymentsHarness;
beforeAll(async () => {
  // TRUST_PROXY: each post names its client in X-Forwarded-For. Card payments are on (the local provider).
  harness = await startPaymentsHarness({ env: { TRUST_PROXY: 'true' }, admin: false });
  await insertUser(harness.tdb.db, harness.ctx.cipher, { email: 'admin@example.org', role: 'ADMIN' });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(async () => {
  await harness.tdb.db('rate_limits').delete();
});

const db = () => harness.tdb.db;

/** A mailbox of the client's own, so only the per-client cap is at stake unless a test names one. */
const mailboxOf = (client: string) => `harry-${client.replace(/[^0-9a-f]/gi, '-')}@example.org`;

/** The page's form, `attendees` rows of adults, from `client`. */
async function postForm(
  slug: string,
  client: string,
  attendees: number,
  payment: 'bank' | 'card' | undefined = 'bank',
  name = 'Hoarding Harry',
  email = mailboxOf(client),
) {
  const form = new URLSearchParams({ name, email, ...(payment ? { payment } : {}) });
  for (let n = 1; n <= attendees; n += 1) {
    form.append('attendee_name', `Guest ${n}`);
    form.append('attendee_tier', 'adult');
  }
  const answer = await fetch(`${harness.server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
    body: form.toString(),
  });
  return { status: answer.status, location: answer.headers.get('location') ?? '', text: await answer.text() };
}

async function heldBy(eventId: string, client: string): Promise<number> {
  const row = await db()('registrations').where({ event_id: eventId, client_key: client, status: 'PENDING' }).sum({ seats: 'attendee_count' }).first();
  return Number(row?.seats ?? 0);
}

const capAlerts = (eventId: string) => db()('operations_alerts').where({ kind: 'unpaid_seat_cap' }).whereRaw(`details->>'eventId' = ?`, [eventId]).orderBy('id');

describe('the cap on unpaid places per client (default 30)', () => {
  it('twelve bank posts of ten from one address: three are registered, the rest get the form again naming the 30 unpaid places and offering card; the places left stay right', async () => {
    const event = await insertEvent(db(), { capacity: 120, online_payment: true });
    const answers = [];
    // The form's limit is 10 posts a minute per address: the last two are rate-limited, not registered either.
    for (let n = 0; n < 12; n += 1) answers.push(await postForm(event.slug, '198.51.100.7', 10));
    expect(answers.map((a) => a.status)).toEqual([303, 303, 303, 409, 409, 409, 409, 409, 409, 409, 429, 429]);
    expect(await heldBy(event.id, '198.51.100.7')).toBe(30);

    const refused = answers[3]!.text;
    expect(refused).toContain('This connection already holds 30 unpaid places for this event, and at most 30 places may be held unpaid from one connection.');
    expect(refused).toContain('Card payment is chosen below: pay by card to register now');
    // Kept filled in, with card chosen, and the places left as they are.
    expect(refused).toContain('value="Hoarding Harry"');
    expect(refused).toMatch(/id="payment-card" name="payment" type="radio" value="card" checked/);
    expect(refused).not.toMatch(/value="bank" checked/);
    expect(refused).toContain('90 places left');
    const page = await (await fetch(`${harness.server.url}/events/${event.slug}`)).text();
    expect(page).toContain('90 places left');
  });

  it('card payment stays open to the capped address; other addresses still register by bank transfer', async () => {
    const event = await insertEvent(db(), { capacity: 120, online_payment: true });
    for (let n = 0; n < 3; n += 1) expect((await postForm(event.slug, '198.51.100.8', 10)).status).toBe(303);
    expect((await postForm(event.slug, '198.51.100.8', 1)).status).toBe(409);

    const card = await postForm(event.slug, '198.51.100.8', 10, 'card');
    expect(card.status).toBe(303);
    expect(card.location).toMatch(/\/pay\/cs_/);
    expect(await db()('checkout_sessions').where({ event_id: event.id, status: 'OPEN' }).count({ n: '*' }).first()).toEqual({ n: 1 });

    expect((await postForm(event.slug, '203.0.113.50', 10)).status).toBe(303);
    expect(await heldBy(event.id, '203.0.113.50')).toBe(10);
  });

  it('without card payment the refusal asks to pay for the places held first; a JSON post gets 409 unpaid_seat_cap', async () => {
    const event = await insertEvent(db(), { capacity: null, online_payment: false, max_unpaid_seats_per_client: 12 });
    expect((await postForm(event.slug, '198.51.100.9', 10)).status).toBe(303);
    const refused = await postForm(event.slug, '198.51.100.9', 3);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('This connection already holds 10 unpaid places for this event, and at most 12 places may be held unpaid from one connection. Please pay for the places already held first, or contact the church office.');
    expect(refused.text).not.toContain('Card payment is chosen below');
    // Two more fit under 12.
    expect((await postForm(event.slug, '198.51.100.9', 2)).status).toBe(303);

    const json = await fetch(`${harness.server.url}/events/${event.slug}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.9' },
      body: JSON.stringify({ name: 'Harry', email: mailboxOf('198.51.100.9'), payment: 'bank', attendees: [{ name: 'One', tier: 'adult' }] }),
    });
    expect(json.status).toBe(409);
    expect(((await json.json()) as { error: { code: string } }).error.code).toBe('unpaid_seat_cap');
  });

  it('free registrations count as unpaid holds: a free event caps them alike', async () => {
    const event = await insertEvent(db(), { capacity: 100, pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 0 }] }) });
    for (let n = 0; n < 3; n += 1) expect((await postForm(event.slug, '198.51.100.10', 10, undefined)).status).toBe(303);
    const refused = await postForm(event.slug, '198.51.100.10', 1, undefined);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('This connection already holds 30 places for this event, and at most 30 places may be held from one connection. Please contact the church office to register more people.');
    expect(await db()('registrations').where({ event_id: event.id, status: 'PAID', payment_method: 'free' }).sum({ seats: 'attendee_count' }).first()).toEqual({ seats: 30 });
  });

  it('a raised maxUnpaidSeatsPerClient (church Wi-Fi after a service) lets many families behind one address register', async () => {
    const event = await insertEvent(db(), { capacity: 200, max_unpaid_seats_per_client: 60 });
    for (let n = 0; n < 6; n += 1) expect((await postForm(event.slug, '192.0.2.77', 10, 'bank', `Family ${n}`)).status).toBe(303);
    expect((await postForm(event.slug, '192.0.2.77', 1)).status).toBe(409);
  });

  it('the office registering by hand is not capped, and its registrations record no client', async () => {
    const event = await insertEvent(db(), { capacity: 100, max_unpaid_seats_per_client: 1 });
    expect((await postForm(event.slug, '198.51.100.11', 1)).status).toBe(303);
    const stored = await db()('registrations').where({ event_id: event.id }).first<{ client_key: string | null }>();
    expect(stored.client_key).toBe('198.51.100.11');
    const { registerWithoutCard } = await import('../../src/signup/register.js');
    const { getEventBySlug } = await import('../../src/office/events.js');
    const record = (await getEventBySlug(db(), event.slug))!;
    const added = await registerWithoutCard(
      harness.ctx,
      record,
      { contact: { name: 'Walk In', email: 'walkin@example.org' }, attendees: [{ name: 'A', tier: 'adult' }, { name: 'B', tier: 'adult' }], family: false },
      { within: async () => {} },
    );
    expect((await db()('registrations').where({ id: added.registrationId }).first<{ client_key: string | null }>()).client_key).toBeNull();
  });
});

describe('the cap is race-free', () => {
  it('posts from one client racing for the last unpaid places under the cap: exactly as many are registered as fit, never more', async () => {
    for (let round = 0; round < 3; round += 1) {
      const event = await insertEvent(db(), { capacity: 100, max_unpaid_seats_per_client: 20 });
      await harness.tdb.db('rate_limits').delete();
      // 15 held already: two posts of 5 race for the last 5 places under the cap.
      for (const size of [10, 5]) expect((await postForm(event.slug, '198.51.100.20', size)).status).toBe(303);
      const racing = await Promise.all([postForm(event.slug, '198.51.100.20', 5), postForm(event.slug, '198.51.100.20', 5)]);
      expect(racing.map((a) => a.status).sort()).toEqual([303, 409]);
      expect(await heldBy(event.id, '198.51.100.20')).toBe(20);
    }
    const event = await insertEvent(db(), { capacity: 100, max_unpaid_seats_per_client: 20 });
    await harness.tdb.db('rate_limits').delete();
    const burst = await Promise.all(Array.from({ length: 8 }, () => postForm(event.slug, '198.51.100.21', 5)));
    expect(burst.filter((a) => a.status === 303)).toHaveLength(4);
    expect(burst.filter((a) => a.status === 409)).toHaveLength(4);
    expect(await heldBy(event.id, '198.51.100.21')).toBe(20);
    // One alert for the address however many refusals raced.
    expect(await capAlerts(event.id)).toHaveLength(1);
  });
});

describe('IPv6 clients are counted by their /48', () => {
  it('two addresses in one /48 share the cap; an address in the next /48 has its own', async () => {
    const event = await insertEvent(db(), { capacity: 100, max_unpaid_seats_per_client: 15 });
    expect((await postForm(event.slug, '2001:db8:abcd:1200::1', 10)).status).toBe(303);
    const sameSite = await postForm(event.slug, '2001:db8:abcd:ffff:ffff::9', 10);
    expect(sameSite.status).toBe(409);
    expect(sameSite.text).toContain('This connection already holds 10 unpaid places');
    expect((await postForm(event.slug, '2001:db8:abcd:12ff::2', 5)).status).toBe(303);
    expect((await postForm(event.slug, '2001:db8:abce::1', 10)).status).toBe(303);
    expect(await heldBy(event.id, '2001:db8:abcd::/48')).toBe(15);
    expect(await heldBy(event.id, '2001:db8:abce::/48')).toBe(10);
  });

  it('rotating through five /56 networks inside one /48 holds no more than one cap: the second /56 and later are refused', async () => {
    const event = await insertEvent(db(), { capacity: 200, max_unpaid_seats_per_client: 10 });
    const answers = [];
    for (const network of ['00', '01', '02', '03', '04']) answers.push(await postForm(event.slug, `2001:db8:77:${network}00::1`, 10));
    expect(answers.map((a) => a.status)).toEqual([303, 409, 409, 409, 409]);
    expect(await heldBy(event.id, '2001:db8:77::/48')).toBe(10);
  });
});

describe('the cap counts mailboxes too', () => {
  it('one mailbox posting from many addresses (its spellings: case, +tags) holds at most the cap; the refusal names the email address; other mailboxes are unaffected', async () => {
    const event = await insertEvent(db(), { slug: 'mailbox-camp', title: 'Mailbox Camp', capacity: 200, max_unpaid_seats_per_client: 20 });
    const spellings = ['hoarder@example.org', 'Hoarder+2@example.org', 'hoarder+3@EXAMPLE.org', 'hoarder+4@example.org'];
    const answers = [];
    for (const [n, email] of spellings.entries()) answers.push(await postForm(event.slug, `198.51.100.${60 + n}`, 10, 'bank', 'Hoarding Harry', email));
    expect(answers.map((a) => a.status)).toEqual([303, 303, 409, 409]);
    expect(answers[2]!.text).toContain('This email address already holds 20 unpaid places for this event, and at most 20 places may be held unpaid by one email address.');
    expect(await db()('registrations').where({ event_id: event.id }).sum({ seats: 'attendee_count' }).first()).toEqual({ seats: 20 });

    // One alert for the mailbox, naming its registrations, never the address.
    const alerts = await capAlerts(event.id);
    expect(alerts).toHaveLength(1);
    expect(alerts[0].reason).toContain('One email address holds 20 unpaid places of "Mailbox Camp" (mailbox-camp)');
    expect(alerts[0].reason).toContain('--note "unpaid places held by one email address"');
    expect(alerts[0].details).toMatchObject({ holder: 'mailbox', heldSeats: 20 });
    expect(JSON.stringify(alerts[0]).toLowerCase()).not.toContain('hoarder');

    expect((await postForm(event.slug, '198.51.100.64', 10, 'bank', 'Another Family', 'another@example.org')).status).toBe(303);
  });

  it('the mailbox key is forgotten with the client key once the places are no longer held unpaid', async () => {
    const event = await insertEvent(db(), { capacity: 100 });
    expect((await postForm(event.slug, '198.51.100.70', 1)).status).toBe(303);
    const stored = await db()('registrations').where({ event_id: event.id }).first<{ id: string; mailbox_key: string | null }>();
    expect(stored.mailbox_key).toMatch(/^[0-9a-f]{64}$/);
    await db()('registrations').where({ id: stored.id }).update({ status: 'PAID', paid_at: new Date() });
    await forgetClientKeys(db(), new Date('2026-11-22T00:00:00Z'));
    expect(await db()('registrations').where({ id: stored.id }).first('client_key', 'mailbox_key')).toEqual({ client_key: null, mailbox_key: null });
  });
});

describe("the office hears once when an event's unpaid places pass its unpaidAlertShare", () => {
  const shareAlerts = (eventId: string) => db()('operations_alerts').where({ kind: 'unpaid_share' }).whereRaw(`details->>'eventId' = ?`, [eventId]).orderBy('id');

  it('many connections each under their cap: one alert when the unpaid places pass 40% of the capacity, naming the largest holders with their references; later posts raise none', async () => {
    const event = await insertEvent(db(), { slug: 'shared-camp', title: 'Shared Camp', capacity: 100 });
    const mailsBefore = (await queuedMessages(harness.ctx, 'operations-alert')).length;
    // The largest holder, 12 places from one address in two posts; then others: 6 + 6 + 10 + 10 + 5 = 37, under 40.
    expect((await postForm(event.slug, '192.0.2.15', 6)).status).toBe(303);
    expect((await postForm(event.slug, '192.0.2.15', 6)).status).toBe(303);
    for (const [client, places] of [['192.0.2.11', 10], ['192.0.2.12', 10], ['192.0.2.13', 5]] as const) expect((await postForm(event.slug, client, places)).status).toBe(303);
    expect(await shareAlerts(event.id)).toHaveLength(0);
    // 47: past the share. Posts after it raise nothing more.
    for (const client of ['192.0.2.14', '192.0.2.16', '192.0.2.17']) expect((await postForm(event.slug, client, 10)).status).toBe(303);

    const alerts = await shareAlerts(event.id);
    expect(alerts).toHaveLength(1);
    const largest = (await db()('registrations').where({ event_id: event.id, client_key: '192.0.2.15' }).orderBy(['created_at', 'id']).select<Array<{ id: string }>>('id')).map((r) =>
      paymentReference(r.id),
    );
    expect(alerts[0].reason).toContain(`The public form's registrations hold 47 of the 100 places of "Shared Camp" (shared-camp) unpaid, more than 40% (the event's unpaidAlertShare 0.4).`);
    expect(alerts[0].reason).toContain(`connection A: 12 places in 2 registrations (${largest.join(' ')})`);
    expect(alerts[0].reason).toContain('email address A: 12 places in 2 registrations');
    expect(alerts[0].details).toMatchObject({ unpaidPlaces: 47, capacity: 100, unpaidAlertShare: 0.4 });
    expect(JSON.stringify(alerts[0])).not.toContain('192.0.2.');
    const mails = (await queuedMessages(harness.ctx, 'operations-alert')).slice(mailsBefore);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject + mails[0]!.text).toContain('Many places held unpaid');
  });

  it('a crossing after the office resolved the first and the places fell back below the share is news again; unpaidAlertShare null asks for none', async () => {
    const event = await insertEvent(db(), { capacity: 50, unpaid_alert_share: 0.5 });
    for (const client of ['192.0.2.21', '192.0.2.22', '192.0.2.23']) expect((await postForm(event.slug, client, 10)).status).toBe(303);
    expect(await shareAlerts(event.id)).toHaveLength(1);
    await db()('operations_alerts').where({ kind: 'unpaid_share' }).update({ resolved_at: new Date() });
    // Two pay: 10 unpaid left, below 25; then the unpaid places pass 25 again.
    const [first, second] = await db()('registrations').where({ event_id: event.id }).orderBy('created_at').select<Array<{ id: string }>>('id');
    await db()('registrations').whereIn('id', [first!.id, second!.id]).update({ status: 'PAID', paid_at: new Date() });
    expect((await postForm(event.slug, '192.0.2.24', 10)).status).toBe(303);
    expect(await shareAlerts(event.id)).toHaveLength(1);
    expect((await postForm(event.slug, '192.0.2.25', 10)).status).toBe(303);
    expect(await shareAlerts(event.id)).toHaveLength(2);

    const quiet = await insertEvent(db(), { capacity: 20, unpaid_alert_share: null });
    for (const client of ['192.0.2.26', '192.0.2.27']) expect((await postForm(quiet.slug, client, 10)).status).toBe(303);
    expect(await shareAlerts(quiet.id)).toHaveLength(0);
  });

  it('a free event filling past the share raises none: nothing is owed on its places, though each connection is still capped', async () => {
    const picnic = await insertEvent(db(), { capacity: 40, pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 0 }] }) });
    for (const client of ['192.0.2.31', '192.0.2.32', '192.0.2.33']) expect((await postForm(picnic.slug, client, 10, undefined)).status).toBe(303);
    expect(await db()('registrations').where({ event_id: picnic.id, status: 'PAID', payment_method: 'free' }).sum({ places: 'attendee_count' }).first()).toEqual({ places: 30 });
    expect(await shareAlerts(picnic.id)).toHaveLength(0);
  });
});

describe('the office hears once per event and address', () => {
  it('the first refusal raises one alert listing the references and the one command that cancels them all; later refusals raise none', async () => {
    const event = await insertEvent(db(), { slug: 'hoarded-camp', title: 'Hoarded Camp', capacity: 120 });
    const mailsBefore = (await queuedMessages(harness.ctx, 'operations-alert')).length;
    for (let n = 0; n < 3; n += 1) expect((await postForm(event.slug, '198.51.100.30', 10)).status).toBe(303);
    expect(await capAlerts(event.id)).toHaveLength(0);
    for (let n = 0; n < 3; n += 1) expect((await postForm(event.slug, '198.51.100.30', 10)).status).toBe(409);

    const alerts = await capAlerts(event.id);
    expect(alerts).toHaveLength(1);
    const ids = (await db()('registrations').where({ event_id: event.id }).orderBy('created_at').select<Array<{ id: string }>>('id')).map((r) => r.id);
    const references = ids.map(paymentReference);
    const command = `eventops registrations cancel ${references.join(' ')} --note "unpaid places held from one connection"`;
    expect(alerts[0].reason).toContain(`One connection holds 30 unpaid places of "Hoarded Camp" (hoarded-camp)`);
    expect(alerts[0].reason).toContain(`cancel them all with: ${command}`);
    expect(alerts[0].details).toMatchObject({ references: references.join(' '), command, heldSeats: 30, maxUnpaidSeatsPerClient: 30 });
    // The unencrypted row never carries the address.
    expect(JSON.stringify(alerts[0])).not.toContain('198.51.100.30');
    const mails = (await queuedMessages(harness.ctx, 'operations-alert')).slice(mailsBefore);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.to).toEqual(['admin@example.org']);
    expect(mails[0]!.text).toContain(command);

    // Another address reaching the cap on the same event is another alert.
    for (let n = 0; n < 3; n += 1) await postForm(event.slug, '198.51.100.31', 10);
    expect((await postForm(event.slug, '198.51.100.31', 10)).status).toBe(409);
    expect(await capAlerts(event.id)).toHaveLength(2);

    // Once the office resolved it, the address trying again is news again.
    await db()('operations_alerts').whereIn('id', (await capAlerts(event.id)).map((a) => a.id)).update({ resolved_at: new Date() });
    await harness.tdb.db('rate_limits').delete();
    expect((await postForm(event.slug, '198.51.100.30', 10)).status).toBe(409);
    expect(await capAlerts(event.id)).toHaveLength(3);
  });
});

describe('the client key is kept only while the places are held unpaid', () => {
  it('forgetClientKeys blanks it once a registration is paid or cancelled, or its event has started; a live unpaid hold keeps it', async () => {
    const event = await insertEvent(db(), { capacity: 100, starts_at: new Date('2026-12-05T08:00:00Z') });
    for (let n = 0; n < 3; n += 1) expect((await postForm(event.slug, '198.51.100.40', 1)).status).toBe(303);
    const [paid, cancelled, held] = await db()('registrations').where({ event_id: event.id }).orderBy('created_at').select<Array<{ id: string }>>('id');
    await db()('registrations').where({ id: paid!.id }).update({ status: 'PAID', paid_at: new Date() });
    await db()('registrations').where({ id: cancelled!.id }).update({ status: 'CANCELLED', cancelled_at: new Date(), cancel_reason: 'office' });
    await forgetClientKeys(db(), new Date('2026-11-22T00:00:00Z'));
    const keys = async () => (await db()('registrations').where({ event_id: event.id }).orderBy('created_at').select('client_key')).map((r) => r.client_key);
    expect(await keys()).toEqual([null, null, '198.51.100.40']);
    expect(held).toBeDefined();
    await forgetClientKeys(db(), new Date('2026-12-05T08:00:00Z'));
    expect(await keys()).toEqual([null, null, null]);
  });
});
