import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.js';
import type { TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';
import type { TestServer } from '../support/http.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { completedSession, postWebhook, queuedMessages, signedDelivery, stageNewRegistrationCheckout } from '../support/webhook-events.js';
import { providerId } from '../support/provider-fixtures.js';

let tdb: TestDatabase;
let ctx: AppContext;
let server: TestServer;
let harness: PaymentsHarness;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: new Date('2026-11-22T00:00:00Z') });
  ({ tdb, ctx, server } = harness);
});
afterAll(() => harness.close());

/** Resolves once a completion is waiting for an event's shared lock (held by an uncommitted edit). */
async function untilACompletionWaitsForTheEventLock(): Promise<void> {
  for (;;) {
    const waiting = await tdb.db.raw<{ rows: unknown[] }>(
      `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%from "events"%for share%'`,
    );
    if (waiting.rows.length > 0) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('webhook under concurrent deliveries (real PostgreSQL)', () => {
  it('20 parallel deliveries of one completion under distinct event ids create exactly one registration and one receipt', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    const session = completedSession({ ...staged, amountTotal: staged.amount });
    const deliveries = Array.from({ length: 20 }, () => signedDelivery('checkout.session.completed', session));

    const responses = await Promise.all(deliveries.map((delivery) => postWebhook(server.url, delivery)));

    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    const outcomes = responses.map((r) => (r.body as { outcome: string }).outcome).sort();
    expect(outcomes).toEqual(['completed', ...Array(19).fill('already_handled')].sort());
    expect(await tdb.db('registrations').where({ event_id: event.id })).toHaveLength(1);
    expect((await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email))).toHaveLength(1);
    expect(await tdb.db('processed_webhook_events').whereIn('event_id', deliveries.map((d) => d.eventId))).toHaveLength(20);
  });

  it('capacity 1 with 10 paid sessions completing at once: one PAID, nine UNFULFILLED sold_out with nine alerts', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, capacity: 1 });
    const checkouts = await Promise.all(Array.from({ length: 10 }, () => stageNewRegistrationCheckout(ctx, event)));

    const responses = await Promise.all(
      checkouts.map((staged) =>
        postWebhook(server.url, signedDelivery('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }))),
      ),
    );

    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(200));
    const registrations = await tdb.db('registrations').where({ event_id: event.id });
    expect(registrations.map((r) => r.status)).toEqual(['PAID']);
    const rows = await tdb.db('checkout_sessions').whereIn('id', checkouts.map((c) => c.checkoutId));
    expect(rows.filter((r) => r.status === 'COMPLETED')).toHaveLength(1);
    const unfulfilled = rows.filter((r) => r.status === 'UNFULFILLED');
    expect(unfulfilled).toHaveLength(9);
    expect(new Set(unfulfilled.map((r) => r.unfulfilled_reason))).toEqual(new Set(['sold_out']));
    const alerts = await tdb.db('operations_alerts').whereIn('checkout_session_id', unfulfilled.map((r) => r.id));
    expect(alerts).toHaveLength(9);
    expect(new Set(alerts.map((a) => a.kind))).toEqual(new Set(['sold_out']));
    const alertMail = await queuedMessages(ctx, 'operations-alert');
    expect(alertMail.filter((m) => unfulfilled.some((r) => m.text.includes(r.provider_session_id as string)))).toHaveLength(9);
  });

  it('completions for an event without a capacity do not wait for each other: one held open does not block another', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, capacity: null });
    const [first, second] = await Promise.all([stageNewRegistrationCheckout(ctx, event), stageNewRegistrationCheckout(ctx, event)]);
    // Hold the event the way an unfinished completion does (a shared lock), in a transaction left open.
    const holder = await tdb.db.transaction();
    try {
      await holder('events').where({ id: event.id }).forShare().first();
      const response = await postWebhook(
        server.url,
        signedDelivery('checkout.session.completed', completedSession({ ...second!, amountTotal: second!.amount })),
      );
      expect(response.status).toBe(200);
      expect((response.body as { outcome: string }).outcome).toBe('completed');
    } finally {
      await holder.rollback();
    }
    const done = await postWebhook(server.url, signedDelivery('checkout.session.completed', completedSession({ ...first!, amountTotal: first!.amount })));
    expect((done.body as { outcome: string }).outcome).toBe('completed');
    expect(await tdb.db('registrations').where({ event_id: event.id, status: 'PAID' })).toHaveLength(2);
  });

  it('an event given a capacity while a payment completes is checked under the seat lock: the last seat is not sold twice', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, capacity: null });
    const [taken, late] = await Promise.all([stageNewRegistrationCheckout(ctx, event), stageNewRegistrationCheckout(ctx, event)]);
    const first = await postWebhook(server.url, signedDelivery('checkout.session.completed', completedSession({ ...taken!, amountTotal: taken!.amount })));
    expect((first.body as { outcome: string }).outcome).toBe('completed');
    const seatsTaken = (await tdb.db('registrations').where({ event_id: event.id }).first<{ attendee_count: number }>())!.attendee_count;

    // An administrator limits the event to the seats already taken, in a transaction not yet committed.
    const admin = await tdb.db.transaction();
    await admin('events').where({ id: event.id }).update({ capacity: seatsTaken });
    const delivery = postWebhook(server.url, signedDelivery('checkout.session.completed', completedSession({ ...late!, amountTotal: late!.amount })));
    // The completion read the event as unlimited and now waits for the admin's row lock.
    await untilACompletionWaitsForTheEventLock();
    await admin.commit();

    const response = await delivery;
    expect(response.status).toBe(200);
    expect((response.body as { outcome: string }).outcome).toBe('unfulfilled');
    const row = await tdb.db('checkout_sessions').where({ id: late!.checkoutId }).first();
    expect(row).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out' });
    expect(await tdb.db('registrations').where({ event_id: event.id })).toHaveLength(1);
    expect(await tdb.db('operations_alerts').where({ checkout_session_id: late!.checkoutId, kind: 'sold_out' })).toHaveLength(1);
  });
  it("an event retitled and moved while a completion waits for its lock: the receipt names the event as it now is", async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, capacity: null, title: 'Harvest Picnic' });
    const staged = (await stageNewRegistrationCheckout(ctx, event))!;

    const admin = await tdb.db.transaction();
    await admin('events').where({ id: event.id }).update({ title: 'Harvest Dinner', starts_at: new Date('2026-12-19T08:00:00Z') });
    const delivery = postWebhook(server.url, signedDelivery('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount })));
    // The completion read the event before the edit and now waits for the admin's row lock.
    await untilACompletionWaitsForTheEventLock();
    await admin.commit();

    const response = await delivery;
    expect((response.body as { outcome: string }).outcome).toBe('completed');
    const [receipt] = (await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email));
    expect(receipt?.text).toContain('Harvest Dinner');
    expect(receipt?.text).not.toContain('Harvest Picnic');
    expect(receipt?.text).toContain('19 December 2026');
  });

  it('the same delivery posted five times at once is handled once: one completion, four duplicates, one receipt', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    const delivery = signedDelivery('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }));

    const responses = await Promise.all(Array.from({ length: 5 }, () => postWebhook(server.url, delivery)));

    expect(responses.map((r) => r.status)).toEqual(Array(5).fill(200));
    const outcomes = responses.map((r) => (r.body as { outcome: string }).outcome).sort();
    expect(outcomes).toEqual(['completed', ...Array(4).fill('duplicate_event')].sort());
    expect(await tdb.db('registrations').where({ event_id: event.id })).toHaveLength(1);
    expect((await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email))).toHaveLength(1);
  });

  it('a refund committed while the completion waits for the payment lock is seen by it: the registration is cancelled and no receipt is queued', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    const paymentIntentId = providerId('pi_test');
    // A refund of this payment being handled: it holds the payment's lock and, finding no registration yet, keeps the refund waiting.
    const refund = await tdb.db.transaction();
    await refund.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`payment_intent:${paymentIntentId}`]);
    await refund('pending_reversals').insert({ payment_intent_id: paymentIntentId, kind: 'refund', provider_event_id: 'evt_refund_waiting' });
    const completion = postWebhook(
      server.url,
      signedDelivery('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId })),
    );
    for (;;) {
      const waiting = await tdb.db.raw<{ rows: unknown[] }>(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'`);
      if (waiting.rows.length > 0) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    await refund.commit();

    const response = await completion;
    expect(response.body).toEqual({ received: true, outcome: 'completed_then_cancelled' });
    expect(await tdb.db('registrations').where({ event_id: event.id })).toEqual([
      expect.objectContaining({ status: 'CANCELLED', cancel_reason: 'refund', payment_intent_id: paymentIntentId }),
    ]);
    expect(await tdb.db('pending_reversals').where({ payment_intent_id: paymentIntentId })).toHaveLength(0);
    expect((await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email))).toHaveLength(0);
  });
});
