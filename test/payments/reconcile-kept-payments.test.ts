import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { reconcileCheckouts } from '../../src/jobs/reconcile.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { buildCheckoutSession, providerId } from '../support/provider-fixtures.js';
import { queuedMessages } from '../support/webhook-events.js';

// Payments kept without a registration (UNFULFILLED, or for a checkout we have no record of), against
// the provider: what the webhook would have told the administrators, reconcile tells them, once.

const T0 = new Date('2026-11-22T00:00:00Z');
const DAY = 86_400_000;
let harness: PaymentsHarness;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: T0 });
});
afterAll(async () => {
  await harness.close();
});

const db = () => harness.tdb.db;
const reconcile = (apply = true) => reconcileCheckouts(harness.ctx, { trigger: 'cli', dryRun: !apply });
const staging = (id: string) => db()('checkout_sessions').where({ id }).first();

async function checkout(event: EventRecord, name: string) {
  const email = `${name.toLowerCase().replace(/\W+/g, '.')}@example.org`;
  const started = await startEventCheckout(harness.ctx, { event, contact: { name, email }, attendees: [{ name, tier: 'adult' }], family: false });
  return { checkoutId: started.checkoutId, sessionId: (await staging(started.checkoutId)).provider_session_id as string };
}

describe('reconcile and the refund of a payment kept without a registration', () => {
  it('a refund made in the dashboard days after the alert, its webhook lost, raises the reversal_unfulfilled alert the webhook would have, once', async () => {
    harness.ctx.clock.set(T0);
    const { slug } = await insertEvent(db(), { online_payment: true, capacity: 2 });
    const event = (await getEventBySlug(db(), slug)) as EventRecord;
    // Two payers hold the last two places; once the first has paid the office lowers the capacity to one:
    // the second payment is kept without a registration, with its sold_out alert.
    const first = await checkout(event, 'First Payer');
    const second = await checkout(event, 'Second Payer');
    await harness.provider.deliver('checkout.session.completed', first.sessionId);
    await db()('events').where({ slug }).update({ capacity: 1 });
    const kept = await harness.provider.deliver('checkout.session.completed', second.sessionId);
    expect(JSON.parse(kept.body)).toMatchObject({ outcome: 'unfulfilled' });
    const paymentIntent = harness.provider.sessions.get(second.sessionId)?.payment_intent as string;
    expect(await staging(second.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out', payment_intent_id: paymentIntent });

    // Five days on (beyond reconcile's 72-hour listing) the office refunds it in the dashboard; the webhook is lost.
    harness.ctx.clock.set(new Date(T0.getTime() + 5 * DAY));
    const lostRefund = harness.provider.buildEvent('charge.refunded', second.sessionId);

    const dry = await reconcile(false);
    expect(dry.rows?.find((row) => row.session === second.sessionId)).toMatchObject({ ours: 'UNFULFILLED', action: 'reverse', unresolved: true });
    const report = await reconcile();

    // The refund's own event, replayed from the provider's list, raises it; the kept payment's session is then told and not read again.
    expect(report.rows?.find((row) => row.session === lostRefund.id)).toMatchObject({ action: 'replay', result: 'alerted', unresolved: false });
    expect(report.rows?.some((row) => row.session === second.sessionId && row.action !== 'none')).toBe(false);
    expect(await db()('operations_alerts').where({ payment_intent_id: paymentIntent }).orderBy('id')).toEqual([
      expect.objectContaining({ kind: 'sold_out' }),
      expect.objectContaining({ kind: 'reversal_unfulfilled', checkout_session_id: second.checkoutId, details: expect.objectContaining({ reversal: 'refund' }) }),
    ]);
    // Told: later runs do not read it again, and the provider's own late delivery adds nothing (reconcile
    // also met the refund's own event in the provider's list and recorded it as handled).
    const again = await reconcile();
    expect(again.rows?.some((row) => row.session === second.sessionId || row.session === lostRefund.id)).toBe(false);
    const late = await harness.provider.deliverEvent(lostRefund);
    expect(JSON.parse(late.body)).toMatchObject({ outcome: 'duplicate_event' });
    expect(await db()('operations_alerts').where({ payment_intent_id: paymentIntent, kind: 'reversal_unfulfilled' })).toHaveLength(1);
    expect(await staging(second.checkoutId)).toMatchObject({ status: 'UNFULFILLED' });
    expect(harness.provider.refundCalls).toEqual([]);
  });
});

describe('a payment for a checkout carrying our id that we have no record of', () => {
  /** A session of ours at the provider, paid, whose staging row is gone (a database restored from an older backup). */
  function paidUnknownSession(checkoutId: string): string {
    const id = providerId('cs_test');
    harness.provider.sessions.set(
      id,
      buildCheckoutSession({ id, created: Math.floor(harness.ctx.clock.now().getTime() / 1000), amount_total: 4500, metadata: { eventops_checkout_id: checkoutId } }),
    );
    harness.provider.completeSession(id);
    return id;
  }
  const alertsOf = (sessionId: string) => db()('operations_alerts').where({ kind: 'unknown_checkout', provider_session_id: sessionId });

  it('raises one unknown_checkout alert per session, however many deliveries and reconcile runs see it, in whichever order', async () => {
    harness.ctx.clock.set(T0);
    const deliveredFirst = paidUnknownSession('00000000-0000-4000-8000-00000000a001');
    const reconciledFirst = paidUnknownSession('00000000-0000-4000-8000-00000000a002');

    const first = await harness.provider.deliver('checkout.session.completed', deliveredFirst);
    // The same payment under other event ids: its async success, and a redelivery the provider built anew.
    const success = await harness.provider.deliver('checkout.session.async_payment_succeeded', deliveredFirst);
    const again = await harness.provider.deliver('checkout.session.completed', deliveredFirst);
    const runs = [await reconcile(), await reconcile()];
    const late = await harness.provider.deliver('checkout.session.completed', reconciledFirst);

    expect(JSON.parse(first.body)).toMatchObject({ outcome: 'unknown_checkout' });
    expect(JSON.parse(success.body)).toMatchObject({ outcome: 'already_alerted' });
    expect(JSON.parse(again.body)).toMatchObject({ outcome: 'already_alerted' });
    expect(runs[0]?.rows?.find((row) => row.session === reconciledFirst)).toMatchObject({ ours: 'missing', action: 'complete', result: 'unknown_checkout' });
    for (const run of runs) {
      expect(run.rows?.find((row) => row.session === deliveredFirst)).toMatchObject({ action: 'none', why: expect.stringContaining('alert was raised'), unresolved: false });
    }
    expect(runs[1]?.rows?.find((row) => row.session === reconciledFirst)).toMatchObject({ action: 'none', unresolved: false });
    expect(JSON.parse(late.body)).toMatchObject({ outcome: 'already_alerted' });
    for (const sessionId of [deliveredFirst, reconciledFirst]) {
      expect(await alertsOf(sessionId)).toEqual([expect.objectContaining({ amount_minor: 4500, resolved_at: null })]);
      const mails = (await queuedMessages(harness.ctx, 'operations-alert')).filter((m) => m.text.includes(sessionId));
      expect(mails).toHaveLength(1);
    }
  });
});

