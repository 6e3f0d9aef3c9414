import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { EventFileError, parseEventFile } from '../../src/office/event-file.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { AddonSoldOutError } from '../../src/registrations/addon-stock.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { registerForEvent } from '../../src/signup/register.js';
import { insertEvent } from '../support/factories.js';
import { postRegistrationForm } from '../support/form-post.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { closeGate } from '../support/race-gate.js';
import { queuedMessages } from '../support/webhook-events.js';
import { fromReferenceNow, referenceNow } from '../support/test-now.js';

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(async () => {
  await harness.close();
});
beforeEach(async () => {
  await harness.tdb.db('rate_limits').delete();
});

const TIERS = [
  { id: 'adult', label: 'Adult', price: 12000 },
  { id: 'infant', label: 'Infant', price: 0 },
];
const ADDONS = [
  { id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee', stock: 1, tiers: ['adult'] },
  { id: 'tshirt', label: 'T-shirt', price: 1500, per: 'attendee', options: ['S', 'M', 'L'], maxPerAttendee: 2 },
  { id: 'lodge', label: 'Lodge room', price: 9000, per: 'registration' },
];

async function camp(overrides: Record<string, unknown> = {}, pricing: Record<string, unknown> = {}): Promise<EventRecord> {
  harness.ctx.clock.set(referenceNow());
  const { slug } = await insertEvent(harness.tdb.db, { capacity: 50, online_payment: true, pricing: JSON.stringify({ tiers: TIERS, addons: ADDONS, ...pricing }), ...overrides });
  return (await getEventBySlug(harness.tdb.db, slug)) as EventRecord;
}

const post = (slug: string, fields: Record<string, string | string[]>) => postRegistrationForm(harness.server.url, slug, fields);

const busFamily = (n: number) => ({
  contact: { name: `Parent ${n}`, email: `parent-${n}@example.org` },
  attendees: [{ name: `Rider ${n}`, tier: 'adult', addons: [{ addon: 'bus' }] }],
  family: false,
  payment: 'bank' as const,
});

async function busSeatsHeld(eventId: string): Promise<number> {
  const row = await harness.tdb.db('registration_addons as a')
    .join('registrations as r', 'r.id', 'a.registration_id')
    .where({ 'r.event_id': eventId, 'a.addon_id': 'bus' })
    .whereIn('r.status', ['PENDING', 'PAID'])
    .count<{ count: string }>({ count: '*' })
    .first();
  return Number(row?.count ?? 0);
}

function fileProblems(addons: unknown[]): string[] {
  try {
    parseEventFile({ slug: 'camp', title: 'Camp', startsAt: '2030-03-12T18:00:00+11:00', capacity: 50, pricing: { tiers: TIERS, addons } });
  } catch (error) {
    if (error instanceof EventFileError) return error.problems;
    throw error;
  }
  return [];
}

describe('add-ons in the event file', () => {
  it('are checked key by key: unknown keys, tiers the event lacks, a per-registration add-on per tier, a group that is half required', () => {
    expect(fileProblems(ADDONS)).toEqual([]);
    expect(fileProblems([{ id: 'bus', label: 'Bus', price: 2000, per: 'attendee', seats: 40 }])).toEqual(['unknown key "pricing.addons.0.seats"']);
    expect(fileProblems([{ id: 'bus', label: 'Bus', price: 2000, per: 'person' }])).toEqual(['pricing.addons.0.per: "attendee" (chosen for each attendee) or "registration" (chosen once)']);
    expect(fileProblems([{ id: 'bus', label: 'Bus', price: 2000, per: 'attendee', tiers: ['child'] }])).toEqual(['pricing.addons.0.tiers: no tier "child" in pricing.tiers']);
    expect(fileProblems([{ id: 'lodge', label: 'Lodge', price: 9000, per: 'registration', tiers: ['adult'] }])).toEqual(['pricing.addons.0.tiers: only per-attendee add-ons are offered per tier']);
    expect(
      fileProblems([
        { id: 'bus', label: 'Bus', price: 2000, per: 'attendee', group: 'travel', required: true },
        { id: 'own', label: 'Own way', price: 0, per: 'attendee', group: 'travel' },
        { id: 'bus', label: 'Bus again', price: 0, per: 'attendee' },
      ]),
    ).toEqual([
      'pricing.addons.1.required: the same as "bus", the first add-on of group "travel" (a group is required or not as a whole)',
      'pricing.addons.2.id: duplicate add-on id "bus"',
    ]);
    expect(fileProblems([{ id: 'x:1', label: 'X', price: 1, per: 'attendee' }])[0]).toContain('pricing.addons.0.id: a letter');
  });
});

describe('add-ons on the registration form', () => {
  it('are priced as their own lines, which no code or discount reaches, stored as rows of the registration at the price it was made at', async () => {
    const event = await camp({}, { discount: { percent: 50 } });
    const response = await post(event.slug, {
      name: 'Ruth Parent',
      email: 'ruth@example.org',
      payment: 'bank',
      attendee_name: ['Ruth', 'Baby'],
      attendee_tier: ['adult', 'infant'],
      'addon.0.bus': 'yes',
      'addon.0.tshirt': ['M', 'L'],
      'addon.1.tshirt': 'S',
      'addon.lodge': 'yes',
    });
    expect(response.status).toBe(303);
    const registration = await harness.tdb.db('registrations').where({ event_id: event.id }).first();
    // Tickets 12000 at 50% off, then 2000 + 3 × 1500 + 9000 of add-ons at their own price.
    expect(registration.total_minor).toBe(6000 + 2000 + 4500 + 9000);
    expect(registration.line_items).toEqual([
      { label: 'Registration', amount: 6000, kind: 'registration' },
      { label: 'Bus seat — Ruth', amount: 2000, kind: 'addon' },
      { label: 'T-shirt (M) — Ruth', amount: 1500, kind: 'addon' },
      { label: 'T-shirt (L) — Ruth', amount: 1500, kind: 'addon' },
      { label: 'T-shirt (S) — Baby', amount: 1500, kind: 'addon' },
      { label: 'Lodge room', amount: 9000, kind: 'addon' },
    ]);
    expect(registration.attendees).toEqual([{ name: 'Ruth', tier: 'adult' }, { name: 'Baby', tier: 'infant' }]);
    const rows = await harness.tdb.db('registration_addons').where({ registration_id: registration.id }).orderByRaw('attendee_index NULLS LAST, addon_id, option');
    expect(rows.map((r) => [r.attendee_index, r.addon_id, r.option, r.price_minor])).toEqual([
      [0, 'bus', null, 2000],
      [0, 'tshirt', 'L', 1500],
      [0, 'tshirt', 'M', 1500],
      [1, 'tshirt', 'S', 1500],
      [null, 'lodge', null, 9000],
    ]);
    // The confirmation lists them as the order does.
    const confirmation = (await queuedMessages(harness.ctx)).find((message) => message.to.includes('ruth@example.org'));
    expect(confirmation?.text).toContain('Bus seat — Ruth');
    expect(confirmation?.text).toContain('T-shirt (S) — Baby');
    expect(confirmation?.text).toContain('Lodge room');
  });

  it('refuses an extra without a ticket, one not offered with the ticket, a missing option, and more than maxPerAttendee; nothing is registered', async () => {
    const event = await camp();
    const base = { name: 'Form Parent', email: 'form@example.org', payment: 'bank', attendee_name: ['Ruth', ''], attendee_tier: ['adult', 'adult'] };
    const refusals: Array<[Record<string, string | string[]>, string]> = [
      [{ 'addon.1.bus': 'yes' }, 'Attendee 2 extras: an extra needs an attendee with a name and a ticket'],
      [{ attendee_tier: ['infant', 'adult'], 'addon.0.bus': 'yes' }, 'Attendee 1 extras: choose one of the extras offered with this ticket'],
      [{ 'addon.0.tshirt': 'XL' }, 'Attendee 1 extras: choose T-shirt: S, M, L'],
      [{ 'addon.0.tshirt': ['S', 'M', 'L'] }, 'Attendee 1 extras: at most 2 T-shirt'],
      [{ 'addon.0.lodge': 'yes' }, 'Attendee 1 extras: choose one of the extras offered with this ticket'],
    ];
    for (const [fields, message] of refusals) {
      const response = await post(event.slug, { ...base, ...fields });
      expect(response.status).toBe(400);
      expect(await response.text()).toContain(message);
    }
    expect(await harness.tdb.db('registrations').where({ event_id: event.id })).toHaveLength(0);
    // The database keeps an add-on from naming an attendee its registration does not have.
    const ok = await post(event.slug, { ...base, 'addon.0.bus': 'yes' });
    expect(ok.status).toBe(303);
    const registration = await harness.tdb.db('registrations').where({ event_id: event.id }).first();
    await expect(
      harness.tdb.db('registration_addons').insert({ registration_id: registration.id, attendee_index: 1, addon_id: 'bus', price_minor: 2000, created_at: referenceNow() }),
    ).rejects.toThrow(/has no attendee 2/);
  });

  it('a required group: every attendee it reaches chooses one of it, and only one', async () => {
    const event = await camp({}, {
      addons: [
        { id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee', group: 'travel', required: true },
        { id: 'own', label: 'Own transport', price: 0, per: 'attendee', group: 'travel', required: true },
      ],
    });
    const base = { name: 'P', email: 'group@example.org', payment: 'bank', attendee_name: ['Ruth', 'Sam'], attendee_tier: ['adult', 'adult'] };
    const missing = await post(event.slug, { ...base, 'addon.0.bus': 'yes' });
    expect(missing.status).toBe(400);
    expect(await missing.text()).toContain('Attendee 2 extras: choose one of Bus seat or Own transport');
    const both = await post(event.slug, { ...base, 'addon.0.bus': 'yes', 'addon.1.bus': 'yes', 'addon.1.own': 'yes' });
    expect(await both.text()).toContain('Attendee 2 extras: choose one of Bus seat or Own transport, not both');
    expect((await post(event.slug, { ...base, 'addon.0.bus': 'yes', 'addon.1.own': 'yes' })).status).toBe(303);
  });
});

describe('add-on stock', () => {
  // Protected by the event's row lock (lockEventForSeats), under which the stock is counted: without it, both have
  // counted the last bus seat free by the time the gate (at the registration's insert) opens, and both take it.
  it('two families racing for the last bus seat: one registers, the other is told the bus is sold out', async () => {
    const event = await camp({ capacity: null });
    const gate = await closeGate(harness.tdb.db, ['registrations']);
    const racers = [1, 2].map((n) => gate.started(registerForEvent(harness.ctx, event, busFamily(n))));
    await gate.waiting(2);
    await gate.open();
    const results = await Promise.allSettled(racers);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(refused[0]).toBeInstanceOf(AddonSoldOutError);
    expect((refused[0] as AddonSoldOutError).message).toBe('Sorry, Bus seat is sold out. Choose without it.');
    expect(await busSeatsHeld(event.id)).toBe(1);
  });

  it('a cancellation gives the seat back by its state, once; the form says sold out and charges nothing meanwhile', async () => {
    const event = await camp();
    const first = await registerForEvent(harness.ctx, event, busFamily(20));
    if (first.kind !== 'registered') throw new Error('expected a registration');
    const refused = await post(event.slug, { name: 'Late', email: 'late@example.org', payment: 'card', attendee_name: ['Late'], attendee_tier: ['adult'], 'addon.0.bus': 'yes' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('Sorry, Bus seat is sold out.');
    expect(await harness.tdb.db('checkout_sessions').where({ event_id: event.id })).toHaveLength(0);

    await cancelRegistration(harness.ctx, { registration: first.registrationId, actor: 'office' });
    expect(await busSeatsHeld(event.id)).toBe(0);
    expect((await registerForEvent(harness.ctx, event, busFamily(21))).kind).toBe('registered');
    await expect(registerForEvent(harness.ctx, event, busFamily(22))).rejects.toBeInstanceOf(AddonSoldOutError);
  });

  it('a card checkout holds the bus seat; paid on time it becomes the registration\'s row, paid after expiry and resale it is kept UNFULFILLED with an alert', async () => {
    const event = await camp();
    const card = (email: string) => post(event.slug, { name: 'Card', email, payment: 'card', attendee_name: ['Rider'], attendee_tier: ['adult'], 'addon.0.bus': 'yes' });
    expect((await card('card@example.org')).status).toBe(303);
    const checkout = await harness.tdb.db('checkout_sessions').where({ event_id: event.id }).first();
    expect(checkout).toMatchObject({ addon_units: { bus: 1 }, net_minor: 14000 });
    expect((await post(event.slug, { name: 'B', email: 'bank-while-held@example.org', payment: 'bank', attendee_name: ['B'], attendee_tier: ['adult'], 'addon.0.bus': 'yes' })).status).toBe(409);

    harness.ctx.clock.set(fromReferenceNow({ minutes: 32 }));
    expect((await registerForEvent(harness.ctx, event, busFamily(30))).kind).toBe('registered');
    const late = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', checkout.provider_session_id));
    expect(JSON.parse(late.body)).toMatchObject({ outcome: 'unfulfilled' });
    expect(await harness.tdb.db('checkout_sessions').where({ id: checkout.id }).first()).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out' });
    const [alert] = await harness.tdb.db('operations_alerts').where({ checkout_session_id: checkout.id });
    expect(alert.reason).toContain('1 Bus seat paid for but only 0 left: that add-on sold out during checkout');
    expect(await busSeatsHeld(event.id)).toBe(1);

    // On time: the payment becomes the registration with its add-on row at the price staged.
    const other = await camp({}, { addons: [{ ...ADDONS[0], stock: 5 }] });
    harness.ctx.clock.set(referenceNow());
    expect((await post(other.slug, { name: 'Card', email: 'ontime@example.org', payment: 'card', attendee_name: ['Rider'], attendee_tier: ['adult'], 'addon.0.bus': 'yes' })).status).toBe(303);
    const paid = await harness.tdb.db('checkout_sessions').where({ event_id: other.id }).first();
    const done = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', paid.provider_session_id));
    expect(JSON.parse(done.body)).toMatchObject({ outcome: 'completed' });
    const registration = await harness.tdb.db('registrations').where({ event_id: other.id }).first();
    expect(registration.total_minor).toBe(14000);
    const receipt = (await queuedMessages(harness.ctx)).find((message) => message.to.includes('ontime@example.org'));
    expect(receipt?.text).toContain('Bus seat — Rider');
    expect(await harness.tdb.db('registration_addons').where({ registration_id: registration.id }).select('attendee_index', 'addon_id', 'price_minor')).toEqual([
      { attendee_index: 0, addon_id: 'bus', price_minor: 2000 },
    ]);
  });

  it('a family taken from the waiting list chooses its extras when it claims the offer', async () => {
    const event = await camp({ capacity: 1, waitlist_enabled: true, waitlist_offer_hours: 24 }, { addons: [{ ...ADDONS[0], stock: 5 }, ADDONS[1]] });
    const first = await registerForEvent(harness.ctx, event, { ...busFamily(40), attendees: [{ name: 'Rider', tier: 'adult' }] });
    if (first.kind !== 'registered') throw new Error('expected a registration');
    const joined = await addToWaitingList(harness.ctx, event, { contact: { name: 'Waiting Parent', email: 'waits@example.org' }, places: 1 }, { actor: 'test' });
    await cancelRegistration(harness.ctx, { registration: first.registrationId, actor: 'office' });
    expect(await runWaitlistPass(harness.ctx, { actor: 'test' })).toMatchObject({ offered: 1 });
    const entry = await harness.tdb.db('waitlist_entries').where({ id: joined.entryId }).first();
    const claimed = await registerForEvent(harness.ctx, event, {
      ...busFamily(41),
      attendees: [{ name: 'Waiter', tier: 'adult', addons: [{ addon: 'bus' }, { addon: 'tshirt', option: 'M' }] }],
      waitlistOffer: { entryId: entry.id, offerSeq: entry.offer_seq },
    });
    if (claimed.kind !== 'registered') throw new Error('expected a registration');
    expect(claimed.priced.total).toBe(12000 + 2000 + 1500);
    expect(await harness.tdb.db('registration_addons').where({ registration_id: claimed.registrationId })).toHaveLength(2);
  });
});
