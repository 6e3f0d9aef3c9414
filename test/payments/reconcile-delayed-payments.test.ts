import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { reconcileCheckouts } from '../../src/jobs/reconcile.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { openCardEventHarness } from '../support/card-event-harness.js';
import type { PaymentsHarness } from '../support/payments-harness.js';
import { queuedMessages } from '../support/webhook-events.js';

// Slow direct debits (SEPA takes up to 14 business days): a checkout the provider still reports as
// settling is kept open past the first 14-day extension, up to 30 days after it was created.

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
const staging = (id: string) => db()('checkout_sessions').where({ id }).first();

/** A checkout paid by direct debit: its unpaid completion is delivered and extends it for 14 days. */
async function debitSettling(email: string) {
  harness.ctx.clock.set(T0);
  const started = await startEventCheckout(harness.ctx, {
    event,
    contact: { name: 'Sam Debit', email },
    attendees: [{ name: 'Sam Debit', tier: 'adult' }],
    family: false,
  });
  const sessionId = (await staging(started.checkoutId)).provider_session_id as string;
  const settling = await harness.provider.deliver('checkout.session.completed', sessionId, { payment_status: 'unpaid' });
  expect(JSON.parse(settling.body)).toMatchObject({ outcome: 'extended' });
  expect((await staging(started.checkoutId)).expires_at).toEqual(new Date(T0.getTime() + 14 * DAY));
  return { checkoutId: started.checkoutId, sessionId, paymentIntent: harness.provider.sessions.get(sessionId)?.payment_intent as string };
}

/** The daily sweep and reconcile, from day `from` to day `to`; the row reconcile reported for `sessionId` each day. */
async function daily(from: number, to: number, sessionId: string) {
  const rows = [];
  for (let day = from; day <= to; day += 1) {
    harness.ctx.clock.set(new Date(T0.getTime() + day * DAY));
    await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' });
    const report = await reconcileCheckouts(harness.ctx, { trigger: 'cli' });
    rows.push({ day, row: report.rows?.find((row) => row.session === sessionId) });
  }
  return rows;
}

describe('a delayed payment still settling at the provider', () => {
  it('is extended again by reconcile while the provider says processing, so a SEPA debit settling on day 20 is registered with its receipt and no alert', async () => {
    const email = 'sepa-day-twenty@example.org';
    const debit = await debitSettling(email);

    const runs = await daily(1, 19, debit.sessionId);

    // Extended again once its expiry is less than 3 days off (day 12), to 14 days from then; never expired meanwhile.
    const extensions = runs.filter(({ row }) => row?.action === 'extend');
    expect(extensions.map(({ day }) => day)).toEqual([12]);
    expect(extensions[0]?.row).toMatchObject({ ours: 'OPEN', provider: 'complete/unpaid', result: 'extended', unresolved: false });
    const kept = await staging(debit.checkoutId);
    expect(kept).toMatchObject({ status: 'OPEN', scrubbed_at: null });
    expect(kept.payload_enc).not.toBeNull();
    expect(kept.expires_at).toEqual(new Date(T0.getTime() + 26 * DAY));

    // The debit settles on day 20 and that webhook is lost: reconcile registers it.
    harness.provider.buildEvent('checkout.session.async_payment_succeeded', debit.sessionId);
    const [settled] = await daily(20, 20, debit.sessionId);

    expect(settled?.row).toMatchObject({ action: 'complete', result: 'completed', unresolved: false });
    const row = await staging(debit.checkoutId);
    expect(row.status).toBe('COMPLETED');
    expect(await db()('registrations').where({ payment_intent_id: debit.paymentIntent })).toEqual([expect.objectContaining({ id: row.registration_id, status: 'PAID' })]);
    expect((await queuedMessages(harness.ctx, 'receipt')).filter((m) => m.to.includes(email))).toHaveLength(1);
    expect(await db()('operations_alerts').where({ payment_intent_id: debit.paymentIntent })).toEqual([]);
  });

  it('is waited for at most 30 days from its checkout: no extension reaches past that, and a debit settling after the payload is gone is kept with a checkout_expired alert, never silently', async () => {
    const debit = await debitSettling('sepa-too-slow@example.org');

    const runs = await daily(1, 29, debit.sessionId);

    expect(runs.filter(({ row }) => row?.action === 'extend').map(({ day }) => day)).toEqual([12, 24]);
    // The second extension stops at the limit, 6 days on instead of 14.
    expect((await staging(debit.checkoutId)).expires_at).toEqual(new Date(T0.getTime() + 30 * DAY));

    // Still processing at the provider on day 30: expired by the sweep, and not extended again; scrubbed 72 hours later.
    const after = await daily(30, 34, debit.sessionId);
    expect(after.every(({ row }) => row?.action === 'none')).toBe(true);
    expect(await staging(debit.checkoutId)).toMatchObject({ status: 'EXPIRED', payload_enc: null, unpaid_confirmed_at: null });

    harness.provider.buildEvent('checkout.session.async_payment_succeeded', debit.sessionId);
    const [settled] = await daily(35, 35, debit.sessionId);

    expect(settled?.row).toMatchObject({ action: 'complete', result: 'unfulfilled', unresolved: false });
    expect(await staging(debit.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'checkout_expired' });
    expect(await db()('operations_alerts').where({ payment_intent_id: debit.paymentIntent })).toEqual([
      expect.objectContaining({ kind: 'checkout_expired', checkout_session_id: debit.checkoutId }),
    ]);
    expect(harness.provider.refundCalls).toEqual([]);
  });
});
