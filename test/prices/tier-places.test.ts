import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { registerForEvent, TierFullError } from '../../src/signup/register.js';
import { insertEvent } from '../support/factories.js';
import { postRegistrationForm } from '../support/form-post.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { closeGate } from '../support/race-gate.js';
import { fromReferenceNow, referenceNow } from '../support/test-now.js';

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(async () => {
  await harness.close();
});

const TIERS = [
  { id: 'adult', label: 'Adult', price: 12000 },
  { id: 'infant', label: 'Infant', price: 0, capacity: 1 },
];

async function campWithInfantPlaces(overrides: Record<string, unknown> = {}): Promise<EventRecord> {
  harness.ctx.clock.set(referenceNow());
  const { slug } = await insertEvent(harness.tdb.db, { capacity: 50, online_payment: true, pricing: JSON.stringify({ tiers: TIERS }), ...overrides });
  return (await getEventBySlug(harness.tdb.db, slug)) as EventRecord;
}

const family = (n: number, tiers: string[]) => ({
  contact: { name: `Parent ${n}`, email: `parent-${n}@example.org` },
  attendees: tiers.map((tier, index) => ({ name: `Person ${n}-${index}`, tier })),
  family: false,
  payment: 'bank' as const,
});

const post = (slug: string, fields: Record<string, string | string[]>) => postRegistrationForm(harness.server.url, slug, fields);

const formFamily = (email: string, tiers: string[], payment: 'bank' | 'card' = 'bank') => ({
  name: 'Form Parent',
  email,
  payment,
  attendee_name: tiers.map((_, index) => `Form Child ${index}`),
  attendee_tier: tiers,
});

async function infantsHeld(eventId: string): Promise<number> {
  const rows = await harness.tdb.db('registrations').where({ event_id: eventId }).whereIn('status', ['PENDING', 'PAID']).select('attendees');
  return rows.flatMap((row) => row.attendees as Array<{ tier: string }>).filter((attendee) => attendee.tier === 'infant').length;
}

describe('places per ticket type', () => {
  // Protected by the event's row lock (lockEventForSeats), under which the type's places are counted: without it,
  // both have counted the infant place free by the time the gate (at the registration's insert) opens, and both take it.
  it('two families racing for the last infant place: one registers, the other is told the infant places are taken', async () => {
    const event = await campWithInfantPlaces();
    const gate = await closeGate(harness.tdb.db, ['registrations']);
    const racers = [1, 2].map((n) => gate.started(registerForEvent(harness.ctx, event, family(n, ['adult', 'infant']))));
    await gate.waiting(2);
    await gate.open();
    const results = await Promise.allSettled(racers);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(TierFullError);
    expect((refused[0] as TierFullError).message).toBe('Sorry, every Infant place is taken.');
    expect(await infantsHeld(event.id)).toBe(1);
  });

  it('the page shows a full ticket type as full, the form refuses it with the reason, and other types still register', async () => {
    const event = await campWithInfantPlaces();
    const before = await (await fetch(`${harness.server.url}/events/${event.slug}`)).text();
    expect(before).toContain('Infant (Free)');
    expect(before).not.toContain('Free · full');

    expect((await post(event.slug, formFamily('first@example.org', ['infant']))).status).toBe(303);
    const after = await (await fetch(`${harness.server.url}/events/${event.slug}`)).text();
    expect(after).toContain('Free · full');
    expect(after).toContain('Infant (Free, full)');

    const refused = await post(event.slug, formFamily('second@example.org', ['adult', 'infant']));
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('Sorry, every Infant place is taken.');
    expect((await post(event.slug, formFamily('third@example.org', ['adult']))).status).toBe(303);
    expect(await infantsHeld(event.id)).toBe(1);
  });

  it('a card checkout holds the infant place while it is open; once it expires the place is free, and its late payment is kept with an alert', async () => {
    const event = await campWithInfantPlaces();
    expect((await post(event.slug, formFamily('card@example.org', ['adult', 'infant'], 'card'))).status).toBe(303);
    const checkout = await harness.tdb.db('checkout_sessions').where({ event_id: event.id }).first();
    expect(checkout.tier_places).toEqual({ infant: 1 });

    expect((await post(event.slug, formFamily('bank-while-held@example.org', ['infant']))).status).toBe(409);

    harness.ctx.clock.set(fromReferenceNow({ minutes: 32 }));
    expect((await post(event.slug, formFamily('bank-after-expiry@example.org', ['infant']))).status).toBe(303);

    const delivered = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', checkout.provider_session_id));
    expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'unfulfilled' });
    expect(await harness.tdb.db('checkout_sessions').where({ id: checkout.id }).first()).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out' });
    const [alert] = await harness.tdb.db('operations_alerts').where({ checkout_session_id: checkout.id });
    expect(alert).toMatchObject({ kind: 'sold_out' });
    expect(alert.reason).toContain('1 Infant place paid for but only 0 left');
    expect(await infantsHeld(event.id)).toBe(1);
  });

  it('a family waiting for the infant type is offered a freed infant place before the public can take it, and registers it through the offer', async () => {
    const event = await campWithInfantPlaces({ waitlist_enabled: true, waitlist_offer_hours: 24 });
    const first = await registerForEvent(harness.ctx, event, family(10, ['infant']));
    if (first.kind !== 'registered') throw new Error('expected a registration');
    const joined = await addToWaitingList(harness.ctx, event, { contact: { name: 'Waiting Parent', email: 'waits-infant@example.org' }, places: 1, tier: 'infant' }, { actor: 'test' });
    // Places of the event are free: nobody waits for those, so adults still register publicly.
    expect((await registerForEvent(harness.ctx, event, family(11, ['adult']))).kind).toBe('registered');

    await cancelRegistration(harness.ctx, { registration: first.registrationId, actor: 'office' });
    await expect(registerForEvent(harness.ctx, event, family(12, ['infant']))).rejects.toBeInstanceOf(TierFullError);
    expect(await runWaitlistPass(harness.ctx, { actor: 'test' })).toMatchObject({ offered: 1 });
    const entry = await harness.tdb.db('waitlist_entries').where({ id: joined.entryId }).first();
    expect(entry).toMatchObject({ state: 'OFFERED', tier: 'infant', places: 1 });
    await expect(registerForEvent(harness.ctx, event, family(13, ['infant']))).rejects.toBeInstanceOf(TierFullError);

    const claimed = await registerForEvent(harness.ctx, event, { ...family(14, ['infant']), waitlistOffer: { entryId: entry.id, offerSeq: entry.offer_seq } });
    expect(claimed.kind).toBe('registered');
    expect(await harness.tdb.db('waitlist_entries').where({ id: joined.entryId }).first()).toMatchObject({ state: 'CLAIMED' });
    expect(await infantsHeld(event.id)).toBe(1);
  });
});
