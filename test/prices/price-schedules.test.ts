import { fromZonedTime } from 'date-fns-tz';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { payNowPath } from '../../src/http/registration-view.js';
import { localDay } from '../../src/local-time.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { insertEvent } from '../support/factories.js';
import { postRegistrationForm } from '../support/form-post.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { fromReferenceNow } from '../support/test-now.js';

const ZONE = 'Australia/Sydney';
let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(async () => {
  await harness.close();
});

/** The church-local day after `day` (yyyy-MM-dd). */
const nextDay = (day: string) => new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
/** The early price ends with this church-local day: three days after the test clock's. */
const earlyUntil = () => localDay(fromReferenceNow({ days: 3 }), ZONE);
/** An instant by the church's wall clock. */
const local = (day: string, time: string) => fromZonedTime(`${day}T${time}`, ZONE);

async function scheduledEvent(overrides: Record<string, unknown> = {}): Promise<EventRecord> {
  const { slug } = await insertEvent(harness.tdb.db, {
    capacity: 50,
    online_payment: true,
    starts_at: fromReferenceNow({ days: 30 }),
    pricing: JSON.stringify({
      tiers: [
        { id: 'adult', label: 'Adult', prices: [{ until: earlyUntil(), price: 30000 }, { price: 35000 }] },
        { id: 'child', label: 'Child', price: 10000 },
      ],
    }),
    ...overrides,
  });
  return (await getEventBySlug(harness.tdb.db, slug)) as EventRecord;
}

const post = (slug: string, fields: Record<string, string | string[]>) => postRegistrationForm(harness.server.url, slug, fields);

const family = (email: string, payment: 'bank' | 'card') => ({
  name: 'Ruth Early',
  email,
  payment,
  attendee_name: ['Ruth Early', 'Tom Early'],
  attendee_tier: ['adult', 'child'],
});

async function registrationOf(email: string) {
  const rows = await harness.tdb.db('registrations').select('*');
  return rows.find((row) => harness.ctx.cipher.decrypt(row.contact_email_enc) === email);
}

describe('prices that change by date', () => {
  it('a registration pays the step in force on the church-local day it is made: through the last minute of "until", the next step from midnight', async () => {
    const event = await scheduledEvent();
    const until = earlyUntil();

    harness.ctx.clock.set(local(until, '23:59:30'));
    expect((await post(event.slug, family('last-minute@example.org', 'bank'))).status).toBe(303);
    expect(await registrationOf('last-minute@example.org')).toMatchObject({ total_minor: 40000, priced_on: until, status: 'PENDING' });

    harness.ctx.clock.set(local(nextDay(until), '00:00:30'));
    expect((await post(event.slug, family('after-midnight@example.org', 'bank'))).status).toBe(303);
    expect(await registrationOf('after-midnight@example.org')).toMatchObject({ total_minor: 45000, priced_on: nextDay(until) });
  });

  it('the event page shows the price now and when it changes, and its live total prices the same step', async () => {
    const event = await scheduledEvent();
    const until = earlyUntil();
    const date = new Intl.DateTimeFormat('en-AU', { day: 'numeric', month: 'long', timeZone: 'UTC' }).format(new Date(`${until}T00:00:00Z`));

    harness.ctx.clock.set(local(until, '12:00:00'));
    const before = await (await fetch(`${harness.server.url}/events/${event.slug}`)).text();
    expect(before).toContain(`$300.00 until ${date}, then $350.00`);
    expect(before).toContain('Adult ($300.00)');
    expect(before.replaceAll('&quot;', '"')).toContain(`"day":"${until}"`);

    harness.ctx.clock.set(local(nextDay(until), '08:00:00'));
    const after = await (await fetch(`${harness.server.url}/events/${event.slug}`)).text();
    expect(after).not.toContain('$300.00');
    expect(after).toContain('Adult ($350.00)');
  });

  it('a card checkout created before the step and paid after it charges and records the price it was created at (the webhook checks the checkout’s amounts, not today’s)', async () => {
    const event = await scheduledEvent();
    const until = earlyUntil();
    harness.ctx.clock.set(local(until, '23:50:00'));
    const started = await post(event.slug, family('card-at-midnight@example.org', 'card'));
    expect(started.status).toBe(303);
    const checkout = await harness.tdb.db('checkout_sessions').where({ event_id: event.id }).first();
    expect(checkout).toMatchObject({ net_minor: 40000, status: 'OPEN' });

    harness.ctx.clock.set(local(nextDay(until), '00:10:00'));
    const delivered = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', checkout.provider_session_id));
    expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'completed' });
    expect(await registrationOf('card-at-midnight@example.org')).toMatchObject({ status: 'PAID', total_minor: 40000, priced_on: until });
    expect(await harness.tdb.db('operations_alerts').where({ checkout_session_id: checkout.id })).toEqual([]);
  });

  it('pay-now after the step charges what the registration was made at, never today’s price', async () => {
    const event = await scheduledEvent();
    const until = earlyUntil();
    harness.ctx.clock.set(local(until, '10:00:00'));
    expect((await post(event.slug, family('pays-later@example.org', 'bank'))).status).toBe(303);
    const registration = await registrationOf('pays-later@example.org');
    expect(registration).toMatchObject({ total_minor: 40000 });

    harness.ctx.clock.set(local(nextDay(until), '10:00:00'));
    const token = payNowPath(harness.ctx.config.authSecret, registration.id, 1);
    const pay = await fetch(`${harness.server.url}${token}`, { method: 'POST', redirect: 'manual' });
    expect(pay.status).toBe(303);
    const checkout = await harness.tdb.db('checkout_sessions').where({ registration_id: registration.id }).first();
    expect(checkout).toMatchObject({ net_minor: 40000, surcharge_minor: 0 });
    expect(harness.provider.sessions.get(checkout.provider_session_id)).toMatchObject({ amount_total: 40000 });
    expect(await registrationOf('pays-later@example.org')).toMatchObject({ total_minor: 40000 });
  });
});
