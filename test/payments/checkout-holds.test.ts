import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

// Rule: an open card checkout for a new registration holds its places, so the payer at the provider's page
// is never charged for a place a bank transfer took meanwhile; its own places are the ones its payment takes;
// an expired checkout frees them, at its expiry by the app clock whether or not a sweep has run; and one client's
// open checkouts hold at most maxUnpaidSeatsPerClient places.

const T0 = new Date('2026-11-22T00:00:00Z');
let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness({ env: { TRUST_PROXY: 'true' }, now: T0 });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(async () => {
  harness.ctx.clock.set(T0);
  await harness.tdb.db('rate_limits').delete();
});

const db = () => harness.tdb.db;

async function post(slug: string, client: string, attendees: number, payment: 'bank' | 'card') {
  const form = new URLSearchParams({ name: 'Pat Parent', email: `pat.${client}@example.org`, payment });
  for (let n = 1; n <= attendees; n += 1) {
    form.append('attendee_name', `Child ${n}`);
    form.append('attendee_tier', 'adult');
  }
  const answer = await fetch(`${harness.server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
    body: form.toString(),
  });
  return { status: answer.status, text: await answer.text() };
}

async function placesTaken(eventId: string): Promise<number> {
  const row = await db()('registrations').where({ event_id: eventId }).whereIn('status', ['PENDING', 'PAID']).sum({ n: 'attendee_count' }).first();
  return Number(row?.n ?? 0);
}

const openCheckouts = (eventId: string) => db()('checkout_sessions').where({ event_id: eventId, status: 'OPEN' });

describe('places held by an open card checkout', () => {
  it('a bank transfer cannot take the places a payer at the provider holds, and the payment then registers them', async () => {
    const event = await insertEvent(db(), { capacity: 3, online_payment: true });
    expect((await post(event.slug, '198.51.100.20', 2, 'card')).status).toBe(303);
    const [checkout] = await openCheckouts(event.id);
    expect(checkout).toMatchObject({ places: 2, client_key: '198.51.100.20' });

    const bank = await post(event.slug, '198.51.100.21', 2, 'bank');
    expect(bank.status).toBe(409);
    expect(bank.text).toContain('only 1 place is left');
    expect((await post(event.slug, '198.51.100.22', 1, 'bank')).status).toBe(303);
    expect(await (await fetch(`${harness.server.url}/events/${event.slug}`)).text()).toMatch(/sold out/i);

    const delivered = await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id as string);
    expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'completed' });
    expect(await placesTaken(event.id)).toBe(3);
    expect(await openCheckouts(event.id)).toEqual([]);
    expect(await db()('operations_alerts').where({ kind: 'sold_out' })).toEqual([]);
  });

  it('when the office lowers the capacity below the places held, the holder whose payment is confirmed first gets them (not every holder fails while the others hold)', async () => {
    const event = await insertEvent(db(), { capacity: 4, online_payment: true });
    expect((await post(event.slug, '198.51.100.25', 2, 'card')).status).toBe(303);
    expect((await post(event.slug, '198.51.100.26', 2, 'card')).status).toBe(303);
    const [first, second] = await openCheckouts(event.id).orderBy('created_at');
    await db()('events').where({ id: event.id }).update({ capacity: 2 });

    const paidFirst = await harness.provider.deliver('checkout.session.completed', second.provider_session_id as string);
    expect(JSON.parse(paidFirst.body)).toMatchObject({ outcome: 'completed' });
    const paidSecond = await harness.provider.deliver('checkout.session.completed', first.provider_session_id as string);
    expect(JSON.parse(paidSecond.body)).toMatchObject({ outcome: 'unfulfilled' });
    expect(await placesTaken(event.id)).toBe(2);
    expect(await db()('operations_alerts').where({ kind: 'sold_out', checkout_session_id: first.id })).toHaveLength(1);
  });

  it('a checkout the sweep finds expired frees its places for the next family', async () => {
    const event = await insertEvent(db(), { capacity: 2, online_payment: true });
    expect((await post(event.slug, '198.51.100.30', 2, 'card')).status).toBe(303);
    expect((await post(event.slug, '198.51.100.31', 1, 'bank')).status).toBe(409);

    harness.ctx.clock.set(new Date(T0.getTime() + 40 * 60_000));
    await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' });
    expect(await openCheckouts(event.id)).toEqual([]);

    expect((await post(event.slug, '198.51.100.31', 2, 'bank')).status).toBe(303);
    expect(await placesTaken(event.id)).toBe(2);
  });

  it('a checkout past its expiry holds nothing, by the app clock, before any sweep has run: the public count, a bank transfer and the cap per connection all see its places free', async () => {
    const event = await insertEvent(db(), { capacity: 2, online_payment: true, max_unpaid_seats_per_client: 2 });
    expect((await post(event.slug, '198.51.100.35', 2, 'card')).status).toBe(303);
    const [checkout] = await openCheckouts(event.id);
    expect((await post(event.slug, '198.51.100.36', 1, 'bank')).status).toBe(409);
    expect((await post(event.slug, '198.51.100.35', 2, 'card')).status).toBe(409);

    // Its expiry passes; no sweep runs, so the row is still OPEN.
    harness.ctx.clock.set(checkout.expires_at);
    expect(await openCheckouts(event.id)).toHaveLength(1);
    expect(await (await fetch(`${harness.server.url}/events/${event.slug}`)).text()).toContain('2 places left');
    // The same connection may hold places by card again: the expired checkout no longer counts toward its cap.
    expect((await post(event.slug, '198.51.100.35', 1, 'card')).status).toBe(303);
    expect((await post(event.slug, '198.51.100.36', 1, 'bank')).status).toBe(303);
    expect(await placesTaken(event.id)).toBe(1);
  });

  it('one connection\'s open checkouts hold at most maxUnpaidSeatsPerClient places; other connections still pay by card', async () => {
    const event = await insertEvent(db(), { capacity: 100, online_payment: true, max_unpaid_seats_per_client: 5 });
    expect((await post(event.slug, '198.51.100.40', 3, 'card')).status).toBe(303);
    const refused = await post(event.slug, '198.51.100.40', 3, 'card');
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('This connection already has 3 places in card payments not yet finished for this event');
    expect(await openCheckouts(event.id)).toHaveLength(1);

    expect((await post(event.slug, '198.51.100.41', 3, 'card')).status).toBe(303);
    expect(await openCheckouts(event.id)).toHaveLength(2);
  });

  it('on an event without a capacity a checkout holds nothing and is not capped', async () => {
    const event = await insertEvent(db(), { capacity: null, online_payment: true, max_unpaid_seats_per_client: 2 });
    expect((await post(event.slug, '198.51.100.50', 3, 'card')).status).toBe(303);
    expect((await post(event.slug, '198.51.100.50', 3, 'card')).status).toBe(303);
    expect((await openCheckouts(event.id)).map((row) => row.places)).toEqual([0, 0]);
  });
});
