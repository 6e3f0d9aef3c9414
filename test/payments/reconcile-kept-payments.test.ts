import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug, type EventRecord } from '../../src/admin/events.js';
import { reconcileCheckouts } from '../../src/jobs/reconcile.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

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
    const { slug } = await insertEvent(db(), { online_payment: true, capacity: 1 });
    const event = (await getEventBySlug(db(), slug)) as EventRecord;
    // Two payers for the last seat: the second payment is kept without a registration, with its sold_out alert.
    const first = await checkout(event, 'First Payer');
    const second = await checkout(event, 'Second Payer');
    await harness.provider.deliver('checkout.session.completed', first.sessionId);
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

    expect(report.rows?.find((row) => row.session === second.sessionId)).toMatchObject({ action: 'reverse', result: 'alerted', unresolved: false });
    expect(await db()('operations_alerts').where({ payment_intent_id: paymentIntent }).orderBy('id')).toEqual([
      expect.objectContaining({ kind: 'sold_out' }),
      expect.objectContaining({ kind: 'reversal_unfulfilled', checkout_session_id: second.checkoutId, details: expect.objectContaining({ reversal: 'refund' }) }),
    ]);
    // Told: later runs do not read it again, and the provider's own late delivery adds nothing.
    const again = await reconcile();
    expect(again.rows?.some((row) => row.session === second.sessionId)).toBe(false);
    const late = await harness.provider.deliverEvent(lostRefund);
    expect(JSON.parse(late.body)).toMatchObject({ outcome: 'already_alerted' });
    expect(await db()('operations_alerts').where({ payment_intent_id: paymentIntent, kind: 'reversal_unfulfilled' })).toHaveLength(1);
    expect(await staging(second.checkoutId)).toMatchObject({ status: 'UNFULFILLED' });
    expect(harness.provider.refundCalls).toEqual([]);
  });
});
