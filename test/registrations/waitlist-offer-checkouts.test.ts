import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { claimToken } from '../../src/registrations/waitlist/tokens.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { entries, formBody, fullWaitlistEvent } from './waitlist-support.js';

// Rules: a waiting-list offer ends at the time its email stated. A card checkout opened from its claim link
// before then may be paid within the checkout's own lifetime (the offer's places stay held for it that long),
// but opening a checkout never moves the offer's end; one offer has at most one open checkout, and a second
// attempt is sent to the same provider page. A payment completes into the places its own checkout holds: a
// checkout holding none (an offer's, once the offer is gone) takes only places nobody else holds, never the
// places an innocent payer's open checkout holds.

const T0 = new Date('2026-11-22T00:00:00Z');
const MINUTE = 60_000;
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
// Passes run over every event: each test's lists are closed after it, so the next test's passes are its own.
afterEach(async () => {
  await harness.tdb.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).update({ state: 'REMOVED' });
});

const db = () => harness.tdb.db;
const office = { actor: 'office' };
const at = (minutes: number) => harness.ctx.clock.set(new Date(T0.getTime() + minutes * MINUTE));
const join = (eventId: string, email: string, places: number) =>
  addToWaitingList(harness.ctx, { id: eventId }, { contact: { name: `Family ${email}`, email }, places }, { actor: 'test' });

/** A full event of 3 whose first waiting family (2 places) has just been offered the 2 places two cancellations freed. */
async function offeredFamily(options: { behind?: boolean } = {}) {
  const { event, registrations } = await fullWaitlistEvent(db(), harness.ctx.cipher, 3);
  await join(event.id, 'claimer@example.org', 2);
  if (options.behind) await join(event.id, 'behind@example.org', 2);
  for (const id of registrations.slice(0, 2)) await cancelRegistration(harness.ctx, { registration: id, ...office });
  expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ offered: 1 });
  const [entry] = await entries(db(), event.id);
  const offered = await db()('waitlist_entries').where({ id: entry?.id }).first<{ id: string; offer_seq: number; offer_expires_at: Date }>();
  const token = claimToken(harness.ctx.config.keyring, { entryId: offered.id, offerSeq: offered.offer_seq });
  return { event, entryId: offered.id, statedEnd: offered.offer_expires_at, token };
}

/** The claim link's form, paid by card, as the family submits it. */
async function claimByCard(slug: string, token: string, client = '198.51.100.70') {
  const answer = await fetch(`${harness.server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
    body: formBody({ offer: token, name: 'Claimer Family', email: 'claimer@example.org', attendee_name: ['Ann Claimer', 'Bo Claimer'], attendee_tier: ['adult', 'adult'], payment: 'card' }),
  });
  return { status: answer.status, location: answer.headers.get('location'), text: await answer.text() };
}

/** Checkouts of the event that hold or may still be paid now: OPEN and unexpired by the app clock. */
async function liveCheckouts(eventId: string) {
  return db()('checkout_sessions').where({ event_id: eventId, status: 'OPEN' }).where('expires_at', '>', harness.ctx.clock.now());
}

describe('a waiting-list offer claimed by card', () => {
  it('ends at the time its email stated however often its claim link opens a checkout: each attempt resumes the one open checkout, none opens past the end, and the places then pass on', async () => {
    const { event, entryId, statedEnd, token } = await offeredFamily({ behind: true });
    expect(statedEnd).toEqual(new Date(T0.getTime() + 24 * 60 * MINUTE));

    // The family opens a checkout every 29 minutes and abandons it, for 26 hours; the minute loop's pass runs after each.
    let lastOpenedBeforeEnd: { minute: number; url: string } | undefined;
    for (let minute = 0; minute <= 26 * 60; minute += 29) {
      at(minute);
      const live = await liveCheckouts(event.id);
      const answer = await claimByCard(event.slug, token);
      if (new Date(T0.getTime() + minute * MINUTE) < statedEnd) {
        expect(answer.status).toBe(303);
        // An open checkout is resumed: the same provider page, no new session.
        if (live.length > 0) expect(answer.location).toBe(live[0].provider_url);
        else lastOpenedBeforeEnd = { minute, url: answer.location as string };
      } else {
        expect(answer.status).toBe(409);
        expect(answer.text).toContain('no longer open');
      }
      expect((await liveCheckouts(event.id)).length).toBeLessThanOrEqual(1);
      await runWaitlistPass(harness.ctx, office);
      const entry = await db()('waitlist_entries').where({ id: entryId }).first();
      expect(entry.offer_expires_at).toEqual(statedEnd);
    }

    // Never more than one session open at once: a new one only once the last had expired (every other attempt).
    const opened = await db()('checkout_sessions').where({ event_id: event.id }).orderBy('created_at');
    for (let n = 1; n < opened.length; n += 1) expect(opened[n].created_at.getTime()).toBeGreaterThanOrEqual(opened[n - 1].expires_at.getTime());
    expect(opened.every((row: { created_at: Date }) => row.created_at < statedEnd)).toBe(true);
    expect(opened.length).toBeLessThanOrEqual(Math.ceil((24 * 60) / 31));
    expect(lastOpenedBeforeEnd).toBeDefined();

    // Its places passed to the next family once the offer's time, and the last checkout's, were over.
    expect((await entries(db(), event.id)).map((row) => row.state)).toEqual(['EXPIRED', 'OFFERED']);
  });

  it('a checkout opened just before the end is paid within its own lifetime: its places stay held for it past the end, while the link opens nothing more', async () => {
    const { event, entryId, statedEnd, token } = await offeredFamily({ behind: true });
    const endMinute = (statedEnd.getTime() - T0.getTime()) / MINUTE;
    at(endMinute - 5);
    const started = await claimByCard(event.slug, token);
    expect(started.status).toBe(303);
    const [checkout] = await liveCheckouts(event.id);

    at(endMinute + 10);
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ expired: 0, offered: 0 });
    expect((await entries(db(), event.id)).map((row) => row.state)).toEqual(['OFFERED', 'WAITING']);
    const again = await claimByCard(event.slug, token);
    expect(again.status).toBe(409);
    expect(again.text).toContain('no longer open');
    expect(await db()('checkout_sessions').where({ event_id: event.id })).toHaveLength(1);

    at(endMinute + 20);
    const delivered = await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
    expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'completed' });
    const entry = await db()('waitlist_entries').where({ id: entryId }).first();
    expect(entry).toMatchObject({ state: 'CLAIMED', offer_expires_at: statedEnd });
    expect(await db()('registrations').where({ id: entry.registration_id }).first()).toMatchObject({ status: 'PAID', attendee_count: 2 });
  });

  it('a checkout opened before the end and never paid holds the places only until its own expiry; then the next pass moves them on', async () => {
    const { event, statedEnd, token } = await offeredFamily({ behind: true });
    const endMinute = (statedEnd.getTime() - T0.getTime()) / MINUTE;
    at(endMinute - 5);
    expect((await claimByCard(event.slug, token)).status).toBe(303);
    const [checkout] = await liveCheckouts(event.id);

    harness.ctx.clock.set(new Date(checkout.expires_at.getTime() - MINUTE));
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ expired: 0 });
    harness.ctx.clock.set(checkout.expires_at);
    expect(await runWaitlistPass(harness.ctx, office)).toMatchObject({ expired: 1, offered: 1 });
    expect((await entries(db(), event.id)).map((row) => row.state)).toEqual(['EXPIRED', 'OFFERED']);
  });

  it('two attempts from one claim link at the same moment open one provider session, and both are sent to it', async () => {
    const { event, token } = await offeredFamily();
    const before = harness.provider.sessionCreateCalls().length;
    const paused = harness.provider.pauseNext('/v1/checkout/sessions');
    const first = claimByCard(event.slug, token);
    await paused.reached;
    const second = claimByCard(event.slug, token);
    // The second waits for the first's session instead of opening its own.
    await new Promise((resolve) => setTimeout(resolve, 300));
    paused.release();
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([303, 303]);
    expect(b.location).toBe(a.location);
    expect(harness.provider.sessionCreateCalls().length - before).toBe(1);
    expect(await db()('checkout_sessions').where({ event_id: event.id })).toHaveLength(1);
  });
});

describe('a payment completes into the places its own checkout holds', () => {
  it("a second paid checkout from an offer already claimed never takes the places an innocent payer's open checkout holds: it is kept with an alert, and the innocent payer is registered", async () => {
    const { event, entryId, token } = await offeredFamily();
    expect((await claimByCard(event.slug, token)).status).toBe(303);
    const [first] = await db()('checkout_sessions').where({ event_id: event.id });

    // The first checkout expired unpaid (as far as anyone knew); the family opens another from the same link.
    at(32);
    expect((await claimByCard(event.slug, token)).status).toBe(303);
    const second = await db()('checkout_sessions').where({ event_id: event.id }).whereNot({ id: first.id }).first();
    expect(second).toMatchObject({ places: 0 });

    // The first was paid after all: it claims the offer.
    at(33);
    expect(JSON.parse((await harness.provider.deliver('checkout.session.completed', first.provider_session_id)).body)).toMatchObject({ outcome: 'completed' });
    expect((await db()('waitlist_entries').where({ id: entryId }).first()).state).toBe('CLAIMED');

    // The office adds two places; with nobody waiting, a stranger's card checkout holds them.
    await db()('events').where({ id: event.id }).update({ capacity: 5 });
    const innocent = await fetch(`${harness.server.url}/events/${event.slug}/register`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': '198.51.100.90' },
      body: formBody({ name: 'Innocent Payer', email: 'innocent@example.org', attendee_name: ['Ivy Payer', 'Ike Payer'], attendee_tier: ['adult', 'adult'], payment: 'card' }),
    });
    expect(innocent.status).toBe(303);
    const held = await db()('checkout_sessions').where({ event_id: event.id, places: 2 }).first();
    expect(held).toMatchObject({ status: 'OPEN' });

    // The family's second checkout is paid too: it holds no places, and the only free ones are the stranger's.
    at(35);
    expect(JSON.parse((await harness.provider.deliver('checkout.session.completed', second.provider_session_id)).body)).toMatchObject({ outcome: 'unfulfilled' });
    expect(await db()('checkout_sessions').where({ id: second.id }).first()).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out' });

    at(36);
    expect(JSON.parse((await harness.provider.deliver('checkout.session.completed', held.provider_session_id)).body)).toMatchObject({ outcome: 'completed' });
    const registered = await db()('checkout_sessions').where({ id: held.id }).first();
    expect(registered.status).toBe('COMPLETED');
    expect(await db()('registrations').where({ id: registered.registration_id }).first()).toMatchObject({ status: 'PAID', attendee_count: 2 });
    expect(await db()('operations_alerts').where({ checkout_session_id: held.id })).toEqual([]);
    const taken = await db()('registrations').where({ event_id: event.id }).whereIn('status', ['PENDING', 'PAID']).sum<{ n: string }>({ n: 'attendee_count' }).first();
    expect(Number(taken?.n)).toBe(5);
  });
});
