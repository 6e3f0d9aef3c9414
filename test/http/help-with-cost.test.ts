import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { releaseUnpaidHolds } from '../../src/jobs/unpaid-holds.js';
import { EventFileError, parseEventFile } from '../../src/office/event-file.js';
import { creditRegistration } from '../../src/office/registrations/credit.js';
import { decideHelpRequest } from '../../src/office/registrations/help.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { insertEvent } from '../support/factories.js';
import { postRegistrationForm } from '../support/form-post.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { fromReferenceNow, referenceNow } from '../support/test-now.js';
import { queuedMessages } from '../support/webhook-events.js';

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(async () => {
  await harness.close();
});
beforeEach(async () => {
  harness.ctx.clock.set(referenceNow());
  await harness.tdb.db('rate_limits').delete();
});

const DAY = 24 * 3600_000;
const money = moneyFormatter({ locale: 'en-AU', currency: 'AUD' });
const OFFICE = { actor: 'office-test' };

/** An event whose unpaid bank-transfer registrations hold their places for one day. */
const camp = (helpWithCost: boolean) =>
  insertEvent(harness.tdb.db, { capacity: 50, online_payment: true, unpaid_hold_days: 1, starts_at: fromReferenceNow({ days: 30 }), help_with_cost: helpWithCost });

const form = (email: string, payment: 'bank' | 'card', help: boolean) => ({
  name: 'Help Parent',
  email,
  payment,
  attendee_name: ['Help Parent', 'Help Child'],
  attendee_tier: ['adult', 'adult'],
  ...(help ? { help_with_cost: 'on' } : {}),
});

async function registrationOf(email: string) {
  const rows = await harness.tdb.db('registrations').select('*');
  return rows.find((row) => harness.ctx.cipher.decrypt(row.contact_email_enc) === email);
}

const helpAlerts = (registrationId: string) => harness.tdb.db('operations_alerts').where({ kind: 'help_requested' }).whereRaw(`details->>'registrationId' = ?`, [registrationId]);

describe('the event file option helpWithCost', () => {
  const file = (extra: Record<string, unknown>) => ({
    slug: 'camp',
    title: 'Camp',
    startsAt: fromReferenceNow({ days: 30 }).toISOString().replace('Z', '+00:00'),
    capacity: 50,
    pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] },
    ...extra,
  });
  it('is true or false, nothing else', () => {
    expect(parseEventFile(file({ helpWithCost: true })).helpWithCost).toBe(true);
    expect(() => parseEventFile(file({ helpWithCost: 'yes' }))).toThrow(EventFileError);
    try {
      parseEventFile(file({ helpWithCost: 1 }));
    } catch (error) {
      expect((error as EventFileError).problems.join('\n')).toContain('helpWithCost');
    }
  });
});

describe('a family asks to talk about help with the cost', () => {
  it('the form offers the checkbox only on an event whose file asks for it', async () => {
    const offered = await camp(true);
    const plain = await camp(false);
    const page = async (slug: string) => (await fetch(`${harness.server.url}/events/${slug}`)).text();
    expect(await page(offered.slug)).toContain('We would like to talk about help with the cost');
    expect(await page(plain.slug)).not.toContain('help_with_cost');
  });

  it('ticked with card chosen: registered awaiting payment with nothing charged, no checkout, and the office alerted by email', async () => {
    const event = await camp(true);
    const mailBefore = (await queuedMessages(harness.ctx, 'operations-alert')).length;
    const response = await postRegistrationForm(harness.server.url, event.slug, form('help-card@example.org', 'card', true));
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).not.toContain(harness.provider.apiBase);
    expect(await harness.tdb.db('checkout_sessions').where({ event_id: event.id })).toEqual([]);
    const registration = await registrationOf('help-card@example.org');
    expect(registration).toMatchObject({ status: 'PENDING', payment_method: 'bank', total_minor: 24000, help_decided_at: null });
    expect(registration.help_requested_at).toEqual(referenceNow());
    const [alert] = await helpAlerts(registration.id);
    expect(alert).toMatchObject({ kind: 'help_requested', resolved_at: null });
    expect(alert.reason).toContain('would like to talk about help with the cost');
    const mails = (await queuedMessages(harness.ctx, 'operations-alert')).slice(mailBefore);
    expect(mails.length).toBeGreaterThan(0);
    expect(mails[0]?.text).toContain('help with the cost');
  });

  it('ticked on an event that does not offer it: ignored, the card checkout starts as usual', async () => {
    const event = await camp(false);
    expect((await postRegistrationForm(harness.server.url, event.slug, form('no-offer@example.org', 'card', true))).status).toBe(303);
    expect(await harness.tdb.db('checkout_sessions').where({ event_id: event.id })).toHaveLength(1);
    expect(await harness.tdb.db('operations_alerts').where({ kind: 'help_requested' }).whereRaw(`details->>'eventId' = ?`, [event.id])).toEqual([]);
  });

  it('an open request is never released by the unpaid hold; once decided, the hold runs again from the decision', async () => {
    const event = await camp(true);
    await postRegistrationForm(harness.server.url, event.slug, form('plain-hold@example.org', 'bank', false));
    await postRegistrationForm(harness.server.url, event.slug, form('asks-help@example.org', 'bank', true));
    const asked = await registrationOf('asks-help@example.org');

    harness.ctx.clock.advance(3 * DAY);
    expect(await releaseUnpaidHolds(harness.ctx, harness.ctx.clock.now())).toBe(1);
    expect(await registrationOf('plain-hold@example.org')).toMatchObject({ status: 'CANCELLED' });
    expect(await registrationOf('asks-help@example.org')).toMatchObject({ status: 'PENDING' });

    await decideHelpRequest(harness.ctx, { registration: asked.id, note: 'they will pay', ...OFFICE });
    expect(await helpAlerts(asked.id).whereNotNull('resolved_at')).toHaveLength(1);
    // Not released the moment it is decided: the family gets the event's hold from the decision.
    expect(await releaseUnpaidHolds(harness.ctx, harness.ctx.clock.now())).toBe(0);
    harness.ctx.clock.advance(DAY + 60_000);
    expect(await releaseUnpaidHolds(harness.ctx, harness.ctx.clock.now())).toBe(1);
    expect(await registrationOf('asks-help@example.org')).toMatchObject({ status: 'CANCELLED' });
  });

  it('a credit or a payment recorded decides the request and resolves its alert', async () => {
    const event = await camp(true);
    await postRegistrationForm(harness.server.url, event.slug, form('credited@example.org', 'bank', true));
    await postRegistrationForm(harness.server.url, event.slug, form('pays-part@example.org', 'bank', true));
    const credited = await registrationOf('credited@example.org');
    const paying = await registrationOf('pays-part@example.org');

    await creditRegistration(harness.ctx, { registration: credited.id, amountMinor: 10000, fund: 'Camp scholarships', ...OFFICE }, money);
    await markRegistrationPaid(harness.ctx, { registration: paying.id, amountMinor: 5000, method: 'bank', partial: true, ...OFFICE }, money);
    for (const email of ['credited@example.org', 'pays-part@example.org']) {
      const row = await registrationOf(email);
      expect(row).toMatchObject({ status: 'PENDING', help_decided_by: 'office-test' });
      expect(await helpAlerts(row.id).whereNull('resolved_at')).toEqual([]);
    }
    await expect(decideHelpRequest(harness.ctx, { registration: credited.id, ...OFFICE })).rejects.toThrow(/was decided on/);
  });
});
