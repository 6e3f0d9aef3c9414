import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { reconcileCheckouts } from '../../src/jobs/reconcile.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { openCardEventHarness } from '../support/card-event-harness.js';
import { captureLogger, type PaymentsHarness } from '../support/payments-harness.js';
import { buildCharge, buildDispute, providerId } from '../support/provider-fixtures.js';

// Refunds and disputes made at the provider after reconcile's 72-hour session listing, whose webhooks
// were lost: reconcile reads the provider's own event list (30 days) and applies each event the webhook
// never handled, as its delivery would have, under the provider's event id.

const T0 = new Date('2026-11-22T00:00:00Z');
const DAY = 86_400_000;
let harness: PaymentsHarness;
let event: EventRecord;

beforeAll(async () => {
  ({ harness, event } = await openCardEventHarness(T0));
});
afterAll(async () => {
  await harness.close();
});

const db = () => harness.tdb.db;
const reconcile = (apply = true) => reconcileCheckouts(harness.ctx, { trigger: 'cli', dryRun: !apply });
const staging = (id: string) => db()('checkout_sessions').where({ id }).first();

/** A card registration paid at T0 and registered by its delivered webhook. */
async function paidRegistration(forEvent = event) {
  harness.ctx.clock.set(T0);
  const name = `Payer ${providerId('n')}`;
  const started = await startEventCheckout(harness.ctx, {
    event: forEvent,
    contact: { name, email: `${name.replace(/\W+/g, '.').toLowerCase()}@example.org` },
    attendees: [{ name, tier: 'adult' }],
    family: false,
  });
  const row = await staging(started.checkoutId);
  const delivered = await harness.provider.deliver('checkout.session.completed', row.provider_session_id as string);
  expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'completed' });
  const registrationId = (await staging(started.checkoutId)).registration_id as string;
  return { sessionId: row.provider_session_id as string, registrationId, checkoutId: started.checkoutId };
}

const registration = (id: string) => db()('registrations').where({ id }).first();
const alertsOf = (sessionId: string) =>
  db()('operations_alerts').where({ payment_intent_id: harness.provider.sessions.get(sessionId)?.payment_intent as string }).orderBy('id');

describe('reconcile applies the refunds and disputes whose webhooks were lost, from the provider event list', () => {
  it('a PAID registration refunded five days later: reported without --apply, cancelled with it, and the late delivery or the next run adds nothing', async () => {
    const paid = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + 5 * DAY));
    const lost = harness.provider.buildEvent('charge.refunded', paid.sessionId); // made in the dashboard, never delivered

    const dry = await reconcile(false);
    expect(dry.rows).toContainEqual(expect.objectContaining({ session: lost.id, action: 'replay', result: 'would be cancelled', unresolved: true }));
    expect(dry.outcome).toBe('partial');
    expect(await registration(paid.registrationId)).toMatchObject({ status: 'PAID' });
    expect(await db()('processed_webhook_events').where({ event_id: lost.id as string })).toEqual([]);

    const applied = await reconcile();
    expect(applied.rows).toContainEqual(expect.objectContaining({ session: lost.id, action: 'replay', result: 'cancelled', unresolved: false }));
    expect(applied.outcome).toBe('ok');
    expect(await registration(paid.registrationId)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund' });
    expect(harness.provider.eventListCalls().length).toBeGreaterThan(0);

    const again = await reconcile();
    expect(again.rows?.some((row) => row.session === lost.id)).toBe(false);
    const late = await harness.provider.deliverEvent(lost);
    expect(JSON.parse(late.body)).toMatchObject({ outcome: 'duplicate_event' });
    expect(harness.provider.refundCalls).toEqual([]);
  });

  it('a registration the office cancelled, refunded at the provider a week later: the refund is recorded, so it stops counting as paid', async () => {
    const paid = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + DAY));
    await cancelRegistration(harness.ctx, { registration: paid.registrationId, actor: 'office@example.org' });
    harness.ctx.clock.set(new Date(T0.getTime() + 8 * DAY));
    const lost = harness.provider.buildEvent('charge.refunded', paid.sessionId);

    const applied = await reconcile();

    expect(applied.rows).toContainEqual(expect.objectContaining({ session: lost.id, action: 'replay', result: 'refund_recorded' }));
    expect(await registration(paid.registrationId)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund' });
    expect(await db()('registration_history').where({ registration_id: paid.registrationId, action: 'refunded' })).toHaveLength(1);
  });

  it('a kept payment both disputed and refunded, neither delivered: both reversal_unfulfilled alerts, once each', async () => {
    harness.ctx.clock.set(T0);
    const { slug } = await insertEvent(db(), { online_payment: true, capacity: 2 });
    const full = (await getEventBySlug(db(), slug)) as EventRecord;
    // Two payers hold the last two places; once the first has paid the office lowers the capacity to one:
    // the second payment is kept without a registration.
    const [first, second] = await Promise.all(
      ['First Payer', 'Late Payer'].map((name) =>
        startEventCheckout(harness.ctx, { event: full, contact: { name, email: `${name.replace(' ', '.').toLowerCase()}@example.org` }, attendees: [{ name, tier: 'adult' }], family: false }),
      ),
    );
    await harness.provider.deliver('checkout.session.completed', (await staging(first!.checkoutId)).provider_session_id as string);
    await db()('events').where({ slug }).update({ capacity: 1 });
    const sessionId = (await staging(second!.checkoutId)).provider_session_id as string;
    const kept = await harness.provider.deliver('checkout.session.completed', sessionId);
    expect(JSON.parse(kept.body)).toMatchObject({ outcome: 'unfulfilled' });
    harness.ctx.clock.set(new Date(T0.getTime() + 10 * DAY));
    harness.provider.buildEvent('charge.refunded', sessionId);
    harness.provider.buildEvent('charge.dispute.created', sessionId);

    await reconcile();
    await reconcile();

    const reversals = (await alertsOf(sessionId)).filter((alert) => alert.kind === 'reversal_unfulfilled');
    expect(reversals.map((alert) => alert.details.reversal).sort()).toEqual(['dispute', 'refund']);
  });

  it('a dispute opened and won before we heard of either leaves the registration PAID and tells nobody; a lost inquiry is raised once', async () => {
    const won = await paidRegistration();
    const inquired = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + 6 * DAY));
    const opened = harness.provider.buildEvent('charge.dispute.created', won.sessionId);
    harness.ctx.clock.set(new Date(T0.getTime() + 20 * DAY));
    const closed = harness.provider.buildEvent('charge.dispute.closed', won.sessionId, { status: 'won' });
    const inquiry = harness.provider.buildEvent('charge.dispute.created', inquired.sessionId, { status: 'warning_needs_response' });

    const applied = await reconcile();
    await reconcile();

    expect(await registration(won.registrationId)).toMatchObject({ status: 'PAID', cancel_reason: null });
    expect(await alertsOf(won.sessionId)).toEqual([]);
    expect(applied.rows?.some((row) => row.session === opened.id || row.session === closed.id)).toBe(false);
    expect(await db()('processed_webhook_events').whereIn('event_id', [opened.id as string, closed.id as string])).toHaveLength(2);
    expect(await registration(inquired.registrationId)).toMatchObject({ status: 'PAID' });
    expect(applied.rows).toContainEqual(expect.objectContaining({ session: inquiry.id, action: 'replay', result: 'alerted' }));
    expect((await alertsOf(inquired.sessionId)).map((alert) => alert.kind)).toEqual(['dispute_inquiry']);
  });

  it("a dispute won after its opening was delivered is replayed: the cancelled registration's payer is to be settled with by hand", async () => {
    const paid = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + 4 * DAY));
    const opened = await harness.provider.deliver('charge.dispute.created', paid.sessionId);
    expect(JSON.parse(opened.body)).toMatchObject({ outcome: 'cancelled' });
    harness.ctx.clock.set(new Date(T0.getTime() + 25 * DAY));
    const closed = harness.provider.buildEvent('charge.dispute.closed', paid.sessionId, { status: 'won' });

    const applied = await reconcile();

    expect(applied.rows).toContainEqual(expect.objectContaining({ session: closed.id, result: 'alerted' }));
    expect((await alertsOf(paid.sessionId)).map((alert) => alert.kind)).toEqual(['dispute_won']);
  });

  it('a dispute won 40 days after it opened (its opening no longer listed), the won webhook lost: the alert is raised, from our record of the dispute', async () => {
    const paid = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + 2 * DAY));
    expect(JSON.parse((await harness.provider.deliver('charge.dispute.created', paid.sessionId)).body)).toMatchObject({ outcome: 'cancelled' });
    harness.ctx.clock.set(new Date(T0.getTime() + 42 * DAY));
    const won = harness.provider.buildEvent('charge.dispute.closed', paid.sessionId, { status: 'won' });

    const applied = await reconcile();

    expect(applied.rows).toContainEqual(expect.objectContaining({ session: won.id, action: 'replay', result: 'alerted' }));
    expect((await alertsOf(paid.sessionId)).map((alert) => alert.kind)).toEqual(['dispute_won']);
  });

  it('an inquiry whose escalation and win were both lost changed nothing for good: the registration stays PAID and nobody is asked to re-register the payer', async () => {
    const paid = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + 2 * DAY));
    await harness.provider.deliver('charge.dispute.created', paid.sessionId, { status: 'warning_needs_response' });
    harness.ctx.clock.set(new Date(T0.getTime() + 8 * DAY));
    const withdrawn = harness.provider.buildEvent('charge.dispute.funds_withdrawn', paid.sessionId);
    harness.ctx.clock.set(new Date(T0.getTime() + 20 * DAY));
    const won = harness.provider.buildEvent('charge.dispute.closed', paid.sessionId, { status: 'won' });

    const applied = await reconcile();

    expect(await registration(paid.registrationId)).toMatchObject({ status: 'PAID', cancel_reason: null });
    expect((await alertsOf(paid.sessionId)).map((alert) => alert.kind)).toEqual(['dispute_inquiry']);
    expect(applied.rows?.some((row) => row.session === withdrawn.id || row.session === won.id)).toBe(false);
    expect(await db()('processed_webhook_events').whereIn('event_id', [withdrawn.id as string, won.id as string])).toHaveLength(2);
  });

  it('an inquiry escalated to a chargeback weeks later, its funds_withdrawn lost: reconcile cancels the registration', async () => {
    const paid = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + 2 * DAY));
    const inquiry = await harness.provider.deliver('charge.dispute.created', paid.sessionId, { status: 'warning_needs_response' });
    expect(JSON.parse(inquiry.body)).toMatchObject({ outcome: 'alerted' });
    harness.ctx.clock.set(new Date(T0.getTime() + 12 * DAY));
    const withdrawn = harness.provider.buildEvent('charge.dispute.funds_withdrawn', paid.sessionId);

    const applied = await reconcile();

    expect(applied.rows).toContainEqual(expect.objectContaining({ session: withdrawn.id, action: 'replay', result: 'cancelled' }));
    expect(await registration(paid.registrationId)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });
  });

  it('a refund that failed at the provider days later, its webhook lost: reconcile raises the refund_failed alert', async () => {
    const paid = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + 3 * DAY));
    await harness.provider.deliver('charge.refunded', paid.sessionId);
    harness.ctx.clock.set(new Date(T0.getTime() + 9 * DAY));
    const failed = harness.provider.buildEvent('refund.failed', paid.sessionId);

    const applied = await reconcile();

    expect(applied.rows).toContainEqual(expect.objectContaining({ session: failed.id, action: 'replay', result: 'alerted' }));
    expect((await alertsOf(paid.sessionId)).map((alert) => alert.kind)).toEqual(['refund_failed']);
    expect(await registration(paid.registrationId)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund_failed' });
  });

  it('a refund made while the completion was lost, then failed with its webhook lost too: reconcile registers the payment PAID and alerts once', async () => {
    harness.ctx.clock.set(T0);
    const started = await startEventCheckout(harness.ctx, { event, contact: { name: 'Kept Payer', email: 'kept.payer@example.org' }, attendees: [{ name: 'Kept Payer', tier: 'adult' }], family: false });
    const sessionId = (await staging(started.checkoutId)).provider_session_id as string;
    harness.provider.buildEvent('checkout.session.completed', sessionId); // paid; its webhook lost
    harness.ctx.clock.set(new Date(T0.getTime() + 3_600_000));
    expect(JSON.parse((await harness.provider.deliver('charge.refunded', sessionId)).body)).toMatchObject({ outcome: 'reversal_pending' });
    harness.provider.buildEvent('refund.failed', sessionId); // lost

    await reconcile();
    await reconcile();

    const registered = await db()('registrations').where({ id: (await staging(started.checkoutId)).registration_id }).first();
    expect(registered).toMatchObject({ status: 'PAID', cancel_reason: null });
    expect((await alertsOf(sessionId)).map((alert) => alert.kind)).toEqual(['refund_failed']);
  });

  it('a dispute of a payment whose completion was lost too: one run completes the payment, then applies the dispute', async () => {
    harness.ctx.clock.set(T0);
    const started = await startEventCheckout(harness.ctx, { event, contact: { name: 'Disputed Payer', email: 'disputed.payer@example.org' }, attendees: [{ name: 'Disputed Payer', tier: 'adult' }], family: false });
    const sessionId = (await staging(started.checkoutId)).provider_session_id as string;
    harness.provider.buildEvent('checkout.session.completed', sessionId); // paid; its webhook lost
    harness.ctx.clock.set(new Date(T0.getTime() + 3_600_000));
    const dispute = harness.provider.buildEvent('charge.dispute.created', sessionId); // lost too

    const applied = await reconcile();

    expect(applied.rows).toContainEqual(expect.objectContaining({ session: sessionId, action: 'complete', result: 'completed' }));
    const registered = await db()('registrations').where({ id: (await staging(started.checkoutId)).registration_id }).first();
    expect(registered).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });
    // The dispute's own event is then handled in the same run (found in place), so its late delivery is a duplicate.
    expect(await db()('processed_webhook_events').where({ event_id: dispute.id as string })).toHaveLength(1);
    expect(applied.outcome).toBe('ok');
  });

  it("a provider that will not list its events leaves that part unresolved (exit 1), and the sessions are still repaired", async () => {
    harness.ctx.clock.set(T0);
    const started = await startEventCheckout(harness.ctx, { event, contact: { name: 'Lost Webhook', email: 'lost.webhook@example.org' }, attendees: [{ name: 'Lost Webhook', tier: 'adult' }], family: false });
    const sessionId = (await staging(started.checkoutId)).provider_session_id as string;
    harness.provider.completeSession(sessionId); // paid, its webhook lost
    harness.provider.failPath('/v1/events', 500);
    try {
      const report = await reconcile();

      expect(report.outcome).toBe('partial');
      expect(report.rows).toContainEqual(expect.objectContaining({ action: 'replay', unresolved: true, result: expect.stringContaining("could not list the provider's events") }));
      expect(report.rows).toContainEqual(expect.objectContaining({ session: sessionId, action: 'complete', result: 'completed' }));
      expect(await staging(started.checkoutId)).toMatchObject({ status: 'COMPLETED' });
    } finally {
      harness.provider.failPath('/v1/events', undefined);
    }
    expect((await reconcile()).outcome).toBe('ok');
  });

  it('a dry run leaves out an event whose effect is already in place (reconcile applied the refund under its own id): it reports no difference', async () => {
    const paid = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + DAY));
    const refund = harness.provider.buildEvent('charge.refunded', paid.sessionId); // lost; the session still in the 72-hour window
    harness.provider.failPath('/v1/events', 500);
    try {
      const applied = await reconcile();
      expect(applied.rows).toContainEqual(expect.objectContaining({ session: paid.sessionId, action: 'reverse', result: 'cancelled' }));
    } finally {
      harness.provider.failPath('/v1/events', undefined);
    }

    const dry = await reconcile(false);

    expect(dry.rows?.some((row) => row.session === refund.id)).toBe(false);
    expect(dry.outcome).toBe('ok');
  });

  it('a lost dispute of a payment known only by its registration (registered by hand from its alert) is applied', async () => {
    harness.ctx.clock.set(new Date(T0.getTime() + 3 * DAY));
    const paymentIntentId = providerId('pi_test');
    const registered = await insertRegistration(db(), harness.ctx.cipher, event.id, { status: 'PAID', payment_method: 'card', payment_intent_id: paymentIntentId, paid_at: T0 });
    const dispute = harness.provider.buildEvent('charge.dispute.created', buildDispute({ amount: 12000, payment_intent: paymentIntentId }));
    harness.provider.events.push(dispute); // at the provider, never delivered

    const applied = await reconcile();

    expect(applied.rows).toContainEqual(expect.objectContaining({ session: dispute.id, action: 'replay', result: 'cancelled' }));
    expect(await registration(registered.id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });
  });

  it("a dry run's trial of an event that would raise an alert logs no alert: it was rolled back", async () => {
    const paid = await paidRegistration();
    harness.ctx.clock.set(new Date(T0.getTime() + 5 * DAY));
    const inquiry = harness.provider.buildEvent('charge.dispute.created', paid.sessionId, { status: 'warning_needs_response' });
    const { logger, logs } = captureLogger('info');
    const withLogs = { ...harness.ctx, logger };

    const dry = await reconcileCheckouts(withLogs, { trigger: 'cli', dryRun: true });

    expect(dry.rows).toContainEqual(expect.objectContaining({ session: inquiry.id, result: 'would be alerted' }));
    expect(await alertsOf(paid.sessionId)).toEqual([]);
    expect(logs.text()).not.toContain('dispute_inquiry');
    await reconcileCheckouts(withLogs, { trigger: 'cli' });
    expect(logs.text()).toContain('dispute_inquiry');
  });

  it("another integration's refund on the same account is left alone: no row, nothing kept waiting", async () => {
    harness.ctx.clock.set(new Date(T0.getTime() + 3 * DAY));
    const foreignIntent = providerId('pi_test');
    const charge = buildCharge({ id: providerId('ch_test'), amount: 4200, amount_refunded: 4200, refunded: true, payment_intent: foreignIntent, metadata: {} });
    const foreign = harness.provider.buildEvent('charge.refunded', charge);
    harness.provider.events.push(foreign); // an event of the account, not built from one of our sessions

    const report = await reconcile(false);

    expect(report.rows?.some((row) => row.session === foreign.id)).toBe(false);
    await reconcile();
    expect(await db()('pending_reversals').where({ payment_intent_id: foreignIntent })).toEqual([]);
  });
});
