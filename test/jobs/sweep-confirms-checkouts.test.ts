import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import type { AppContext } from '../../src/context.js';
import type { FixedClock } from '../../src/clock.js';
import { recipientPages } from '../../src/jobs/reminder-sends.js';
import { PROVIDER_CONFIRMS_PER_SWEEP, sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { cardPaymentStateOf } from '../../src/payments/card-payment-state.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import type { TestDatabase } from '../support/db.js';
import type { FakeProvider } from '../support/fake-provider.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { queuedMessages } from '../support/webhook-events.js';

// Rule: the sweep confirms each card checkout past its expiry with the provider, so an abandoned attempt
// never holds pay-now (or the reminders) for the 72 hours its payload is otherwise kept.

const T0 = new Date('2026-11-22T00:00:00Z');
const AFTER_EXPIRY = new Date(T0.getTime() + 40 * 60_000);
let harness: PaymentsHarness;
let tdb: TestDatabase;
let ctx: AppContext & { clock: FixedClock };
let fake: FakeProvider;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: T0 });
  ({ tdb, ctx, provider: fake } = harness);
});
afterAll(async () => {
  expect(fake.refundCalls).toEqual([]);
  await harness.close();
});

const checkout = (id: string) => tdb.db('checkout_sessions').where({ id }).first();
const sessionOf = async (id: string) => (await checkout(id)).provider_session_id as string;

/** A bank-transfer registration whose member opened pay-now at T0 and left the provider's page. */
async function abandonedPayNow() {
  ctx.clock.set(T0);
  const event = await insertEvent(tdb.db, { online_payment: true, reminder_at: new Date(T0.getTime() + 86_400_000) });
  const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank' });
  const started = await startExistingRegistrationCheckout(ctx, { registrationId: registration.id });
  return { event, registration, checkoutId: started.checkoutId };
}

async function reminderAsksForPayment(eventId: string, registrationId: string): Promise<boolean> {
  for await (const page of recipientPages(ctx, eventId, new Date(T0.getTime() + 86_400_000))) {
    const row = page.find((recipient) => recipient.id === registrationId);
    if (row) return !row.card_payment_in_flight;
  }
  throw new Error('the registration is not a reminder recipient');
}

describe('sweep-checkouts asks the card provider about checkouts past their expiry', () => {
  it('a session the provider still reports open is expired there, recorded confirmed unpaid and scrubbed at once; reminders ask for payment again', async () => {
    const { event, registration, checkoutId } = await abandonedPayNow();
    const sessionId = await sessionOf(checkoutId);
    expect(await reminderAsksForPayment(event.id, registration.id)).toBe(false);

    ctx.clock.set(AFTER_EXPIRY);
    const summary = await sweepExpiredCheckouts(ctx, { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', expired: 1, confirmed: 1, awaitingProvider: 0 });
    expect(fake.sessions.get(sessionId)?.status).toBe('expired');
    expect(fake.sessionExpireCalls().map((call) => call.path)).toContain(`/v1/checkout/sessions/${sessionId}/expire`);
    expect(await checkout(checkoutId)).toMatchObject({ status: 'EXPIRED', payload_enc: null, scrubbed_at: AFTER_EXPIRY, unpaid_confirmed_at: AFTER_EXPIRY });
    expect(await cardPaymentStateOf(tdb.db, registration.id, AFTER_EXPIRY)).toBe('confirmed_unpaid');
    expect(await reminderAsksForPayment(event.id, registration.id)).toBe(true);
    // The provider's own expiry notice, delivered later, changes nothing.
    const late = await fake.deliver('checkout.session.expired', sessionId);
    expect(JSON.parse(late.body)).toMatchObject({ outcome: 'already_handled' });
  });

  it('a new registration the payer paid (its completion never delivered) is registered now, once: the delivery that follows changes nothing', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true, pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] }) });
    const email = 'late.payer@example.org';
    const started = await startEventCheckout(ctx, {
      event: (await getEventBySlug(tdb.db, event.slug))!,
      contact: { name: 'Late Payer', email },
      attendees: [{ name: 'Late Payer', tier: 'adult' }],
      family: false,
    });
    const sessionId = await sessionOf(started.checkoutId);
    fake.completeSession(sessionId);

    ctx.clock.set(AFTER_EXPIRY);
    const summary = await sweepExpiredCheckouts(ctx, { trigger: 'cli' });

    expect(summary).toMatchObject({ confirmed: 1, awaitingProvider: 0 });
    expect(await checkout(started.checkoutId)).toMatchObject({ status: 'COMPLETED', payload_enc: null });
    const registrations = await tdb.db('registrations').where({ event_id: event.id });
    expect(registrations).toEqual([expect.objectContaining({ status: 'PAID', payment_method: 'card' })]);
    const delivered = await fake.deliver('checkout.session.completed', sessionId);
    expect(delivered.status).toBe(200);
    expect(await tdb.db('registrations').where({ event_id: event.id })).toHaveLength(1);
    expect((await queuedMessages(ctx, 'receipt')).filter((message) => message.to.includes(email))).toHaveLength(1);
  });

  it('with the provider out of reach nothing changes, and the next sweep confirms it', async () => {
    const { registration, checkoutId } = await abandonedPayNow();
    const sessionId = await sessionOf(checkoutId);
    ctx.clock.set(AFTER_EXPIRY);
    fake.failPath(`/v1/checkout/sessions/${sessionId}`, 503);
    try {
      const down = await sweepExpiredCheckouts(ctx, { trigger: 'cli' });
      expect(down).toMatchObject({ outcome: 'ok', expired: 1, confirmed: 0, awaitingProvider: 1 });
      const kept = await checkout(checkoutId);
      expect(kept).toMatchObject({ status: 'EXPIRED', scrubbed_at: null, unpaid_confirmed_at: null });
      expect(kept.payload_enc).toBeNull(); // a pay-now row stages nothing; what matters is that it is still kept
      expect(fake.sessions.get(sessionId)?.status).toBe('open');
      expect(await cardPaymentStateOf(tdb.db, registration.id, AFTER_EXPIRY)).toBe('in_flight');
    } finally {
      fake.failPath(`/v1/checkout/sessions/${sessionId}`, undefined);
    }
    expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ confirmed: 1, awaitingProvider: 0 });
    expect(await checkout(checkoutId)).toMatchObject({ status: 'EXPIRED', unpaid_confirmed_at: AFTER_EXPIRY });
  });

  it(`asks about at most ${PROVIDER_CONFIRMS_PER_SWEEP} checkouts per sweep and says how many still await the provider`, async () => {
    ctx.clock.set(AFTER_EXPIRY);
    const event = await insertEvent(tdb.db, { online_payment: true });
    // Sessions the provider does not know: each is asked about and stays awaiting its word.
    for (let i = 0; i < PROVIDER_CONFIRMS_PER_SWEEP + 5; i += 1) {
      await insertCheckoutSession(tdb.db, ctx.cipher, event.id, { status: 'EXPIRED', expires_at: new Date(T0.getTime() + 31 * 60_000) });
    }
    const reads = () => fake.requests.filter((r) => r.authorized && r.method === 'GET' && /^\/v1\/checkout\/sessions\/[^/]+$/.test(r.path)).length;
    const before = reads();

    const summary = await sweepExpiredCheckouts(ctx, { trigger: 'cli' });

    expect(reads() - before).toBe(PROVIDER_CONFIRMS_PER_SWEEP);
    expect(summary).toMatchObject({ confirmed: 0, awaitingProvider: PROVIDER_CONFIRMS_PER_SWEEP + 5 });
    await tdb.db('checkout_sessions').where({ event_id: event.id }).update({ scrubbed_at: AFTER_EXPIRY, payload_enc: null });
  });
});
