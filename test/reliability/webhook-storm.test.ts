import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { OUTAGE_MS, runWebhookStorm, type StormReport } from '../../soak/cases/webhook-storm.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

/** Fixed so the scenario mix is the same every run; the interleaving of the concurrent deliveries still varies. */
const SEED = 20261122;

let harness: PaymentsHarness;
let report: StormReport;

beforeAll(async () => {
  harness = await startPaymentsHarness();
  report = await runWebhookStorm(harness, { sessions: 50, deliveries: 300, events: 12, concurrency: 16, seed: SEED, outageMs: OUTAGE_MS });
}, 60_000);
afterAll(async () => {
  await harness.close();
});

describe('webhook storm: 50 staged checkouts, 300 shuffled concurrent deliveries with redeliveries, refunds, disputes and an outage window', () => {
  it('exercises every scenario through the real server', () => {
    expect(report.sessions.length).toBe(50);
    expect(report.deliveries).toBe(300);
    expect(report.redeliveries).toBeGreaterThan(100);
    expect(new Set(report.sessions.map((s) => s.scenario)).size).toBeGreaterThanOrEqual(7);
    expect(report.sessions.some((s) => s.payNowRegistrationId)).toBe(true);
  });

  it('a 3-hour webhook outage holds back a third of the deliveries; payments made meanwhile are completed by the sweep asking the provider, or when the late delivery arrives', () => {
    expect(report.withheld).toBe(100);
    expect(report.completedBySweep + report.lateCompleted, `seed ${report.seed}`).toBeGreaterThan(0);
  });

  it('answers every signed delivery 200 and records each event id once', () => {
    expect(report.statuses, `seed ${report.seed}`).toEqual({ 200: 300 });
    expect(report.violations.filter((v) => v.rule === 'each_event_recorded_once')).toEqual([]);
  });

  it('keeps every invariant: one registration per checkout, capacity, every charge registered or alerted, no refunds', () => {
    expect(report.violations, `seed ${report.seed}`).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.duplicates).toBe(0);
    expect(report.refundCalls).toBe(0);
  });

  it('payments that cannot be honoured (sold out, event deleted, wrong amount) end UNFULFILLED with one alert each', async () => {
    const unfulfilled = await harness.tdb.db('checkout_sessions').where({ status: 'UNFULFILLED' }).select<Array<{ id: string; unfulfilled_reason: string }>>('id', 'unfulfilled_reason');
    expect(new Set(unfulfilled.map((r) => r.unfulfilled_reason))).toEqual(new Set(['sold_out', 'event_deleted', 'amount_mismatch']));
    const alerts = await harness.tdb.db('operations_alerts').whereIn('checkout_session_id', unfulfilled.map((r) => r.id)).whereIn('kind', ['sold_out', 'event_deleted', 'amount_mismatch']);
    expect(alerts).toHaveLength(unfulfilled.length);
  });
});

describe('a reversal that overtakes a payment which then cannot be honoured', () => {
  it('is reported with the UNFULFILLED payment, not left waiting: sold_out and reversal_unfulfilled alerts, nothing pending', async () => {
    const { tdb, ctx, provider } = harness;
    const full = await insertEvent(tdb.db, { online_payment: true, capacity: 1 });
    const event = (await getEventBySlug(tdb.db, full.slug)) as EventRecord;
    const started = await startEventCheckout(ctx, {
      event,
      contact: { name: 'Late Payer', email: 'late.payer@example.org' },
      attendees: [{ name: 'Late Payer', tier: 'adult' }],
      family: false,
    });
    await insertRegistration(tdb.db, ctx.cipher, full.id);
    const session = (await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first<{ provider_session_id: string }>()).provider_session_id;
    const completed = provider.buildEvent('checkout.session.completed', session);
    const refund = provider.buildEvent('charge.refunded', session);

    expect((await provider.deliverEvent(refund)).status).toBe(200);
    expect((await provider.deliverEvent(completed)).status).toBe(200);

    const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first<{ status: string; unfulfilled_reason: string }>();
    expect(row).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out' });
    const kinds = (await tdb.db('operations_alerts').where({ checkout_session_id: started.checkoutId }).orderBy('id')).map((a: { kind: string }) => a.kind);
    expect(kinds).toEqual(['sold_out', 'reversal_unfulfilled']);
    expect(await tdb.db('pending_reversals')).toEqual([]);
  });
});
