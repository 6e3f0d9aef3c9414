import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { addRegistration } from '../../src/office/registrations/add.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { listRegistrations } from '../../src/office/registrations/list.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { recordOfficeRefund } from '../../src/office/registrations/record-refund.js';
import { showRegistration } from '../../src/office/registrations/show.js';
import { raiseOperationsAlert } from '../../src/payments/alerts.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { PAYLOAD_KEPT_AFTER_EXPIRY_MS } from '../../src/payments/staging.js';
import { setSetting } from '../../src/settings.js';
import { ROOT } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import type { TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration, insertUser } from '../support/factories.js';
import type { TestServer } from '../support/http.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { providerFixture, providerId } from '../support/provider-fixtures.js';
import {
  PAYMENTS_ENV,
  completedSession,
  createdDispute,
  postWebhook,
  queuedMessages,
  refundedCharge,
  signedDelivery,
  stageNewRegistrationCheckout,
  stagePayNowCheckout,
} from '../support/webhook-events.js';

const NOW = new Date('2026-11-22T00:00:00Z');
let tdb: TestDatabase;
let ctx: AppContext & { clock: FixedClock };
let server: TestServer;
let harness: PaymentsHarness;
const payerEmails: string[] = [];

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: NOW });
  ({ tdb, ctx, server } = harness);
  await insertUser(tdb.db, ctx.cipher, { email: 'pastor-admin@example.org', role: 'ADMIN' });
  await insertUser(tdb.db, ctx.cipher, { email: 'staff@example.org', role: 'STAFF' });
});
afterAll(() => harness.close());

const deliver = (type: string, object: Record<string, unknown>) => postWebhook(server.url, signedDelivery(type, object));
const staging = (id: string) => tdb.db('checkout_sessions').where({ id }).first();

async function stage(options: { capacity?: number | null } = {}) {
  const event = await insertEvent(tdb.db, { online_payment: true, capacity: options.capacity === undefined ? 100 : options.capacity });
  const staged = await stageNewRegistrationCheckout(ctx, event);
  payerEmails.push(staged.email);
  return { event, staged };
}

describe('reversals that arrive before the payment they reverse', () => {
  it('a full refund for a PaymentIntent not yet known is kept, then the registration is cancelled the moment the completion arrives, with an alert and no receipt', async () => {
    const { event, staged } = await stage();
    const paymentIntentId = providerId('pi_test');

    const early = await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }));
    expect(early).toEqual({ status: 200, body: { received: true, outcome: 'reversal_pending' } });
    expect(await tdb.db('pending_reversals').where({ payment_intent_id: paymentIntentId })).toEqual([
      expect.objectContaining({ kind: 'refund' }),
    ]);

    const completion = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));

    expect(completion).toEqual({ status: 200, body: { received: true, outcome: 'completed_then_cancelled' } });
    const [registration] = await tdb.db('registrations').where({ event_id: event.id });
    expect(registration).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund', payment_intent_id: paymentIntentId });
    expect(await tdb.db('pending_reversals').where({ payment_intent_id: paymentIntentId })).toHaveLength(0);
    expect(await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId })).toEqual([
      expect.objectContaining({ kind: 'reversal_applied', checkout_session_id: staged.checkoutId }),
    ]);
    expect((await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email))).toHaveLength(0);
  });

  it('a dispute before a pay-now completion cancels the registration once it is paid', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank' });
    const staged = await stagePayNowCheckout(ctx, event.id, { id: registration.id, net: 12000 });
    const paymentIntentId = providerId('pi_test');

    expect((await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount: 12000 }))).body).toEqual({
      received: true,
      outcome: 'reversal_pending',
    });
    const completion = await deliver(
      'checkout.session.completed',
      completedSession({ ...staged, registrationId: registration.id, amountTotal: 12000, paymentIntentId }),
    );

    expect(completion.body).toEqual({ received: true, outcome: 'completed_then_cancelled' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: 'dispute',
      payment_intent_id: paymentIntentId,
    });
  });

  it('a refund of a payment kept without a registration (UNFULFILLED) raises an alert instead of waiting', async () => {
    const { staged } = await stage({ capacity: 0 });
    const paymentIntentId = providerId('pi_test');
    await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out' });

    const refund = await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }));

    expect(refund.body).toEqual({ received: true, outcome: 'alerted' });
    expect(await tdb.db('pending_reversals').where({ payment_intent_id: paymentIntentId })).toHaveLength(0);
    const kinds = (await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id')).map((a) => a.kind);
    expect(kinds).toEqual(['sold_out', 'reversal_unfulfilled']);
  });

  it('a refund seen before its payment is alerted once with the kept payment, not again when it is delivered again under another event id', async () => {
    const { staged } = await stage({ capacity: 0 });
    const paymentIntentId = providerId('pi_test');
    expect((await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }))).body).toMatchObject({ outcome: 'reversal_pending' });
    expect((await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }))).body).toMatchObject({
      outcome: 'unfulfilled',
    });

    // Reconcile's repair, or the provider's own later delivery of the same refund, under an event id of its own.
    const again = await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }));

    expect(again.body).toEqual({ received: true, outcome: 'already_alerted' });
    const kinds = async () => (await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id')).map((a) => a.kind);
    expect(await kinds()).toEqual(['sold_out', 'reversal_unfulfilled']);
    // A dispute of the same payment is news of its own.
    const dispute = await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount: staged.amount }));
    expect(dispute.body).toEqual({ received: true, outcome: 'alerted' });
    expect(await kinds()).toEqual(['sold_out', 'reversal_unfulfilled', 'reversal_unfulfilled']);
  });

  /** A full refund, then a dispute of the same payment a second later, both before the payment itself. */
  async function refundThenDisputeEarly(paymentIntentId: string, amount: number) {
    const refund = signedDelivery('charge.refunded', refundedCharge({ paymentIntentId, amount }));
    const dispute = signedDelivery('charge.dispute.created', createdDispute({ paymentIntentId, amount }));
    expect((await postWebhook(server.url, refund)).body).toEqual({ received: true, outcome: 'reversal_pending' });
    ctx.clock.advance(1000);
    expect((await postWebhook(server.url, dispute)).body).toEqual({ received: true, outcome: 'reversal_pending' });
    // Both wait: the dispute is news of its own, not a repeat of the refund.
    expect((await tdb.db('pending_reversals').where({ payment_intent_id: paymentIntentId }).orderBy('created_at')).map((r) => r.kind)).toEqual([
      'refund',
      'dispute',
    ]);
    return { refundEventId: refund.eventId, disputeEventId: dispute.eventId };
  }

  it('a refund and then a dispute, both before a payment kept without a registration, are each alerted once', async () => {
    const { staged } = await stage({ capacity: 0 });
    const paymentIntentId = providerId('pi_test');
    try {
      const { refundEventId, disputeEventId } = await refundThenDisputeEarly(paymentIntentId, staged.amount);

      const completion = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));

      expect(completion.body).toEqual({ received: true, outcome: 'unfulfilled' });
      expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out' });
      expect(await tdb.db('pending_reversals').where({ payment_intent_id: paymentIntentId })).toHaveLength(0);
      const alerts = async () =>
        (await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id')).map((a) => ({ kind: a.kind, details: a.details }));
      expect(await alerts()).toEqual([
        { kind: 'sold_out', details: expect.anything() },
        { kind: 'reversal_unfulfilled', details: { reversal: 'refund', reversalEventId: refundEventId } },
        { kind: 'reversal_unfulfilled', details: { reversal: 'dispute', reversalEventId: disputeEventId } },
      ]);
      // Either seen again (reconcile, a later delivery under another event id) adds nothing.
      expect((await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount: staged.amount }))).body).toMatchObject({
        outcome: 'already_alerted',
      });
      expect((await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }))).body).toMatchObject({
        outcome: 'already_alerted',
      });
      expect(await alerts()).toHaveLength(3);
    } finally {
      ctx.clock.set(NOW);
    }
  });

  it('a refund and then a dispute, both before a payment that registers: the refund cancels it, the dispute then finds it cancelled as it would after', async () => {
    const { event, staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    try {
      const { refundEventId } = await refundThenDisputeEarly(paymentIntentId, staged.amount);

      const completion = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));

      expect(completion.body).toEqual({ received: true, outcome: 'completed_then_cancelled' });
      const [registration] = await tdb.db('registrations').where({ event_id: event.id });
      expect(registration).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund', payment_intent_id: paymentIntentId });
      expect(await tdb.db('pending_reversals').where({ payment_intent_id: paymentIntentId })).toHaveLength(0);
      // One alert for the cancellation, and one for the dispute of the registration the refund cancelled: it changes
      // nothing here, but the bank may take the refunded money again, so a person answers it at the provider.
      const alerts = async () => (await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id')).map((a) => a.kind);
      expect(await alerts()).toEqual(['reversal_applied', 'dispute_after_cancellation']);
      expect((await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id').first()).details).toMatchObject({
        registrationId: registration.id,
        reversalEventId: refundEventId,
      });
      expect((await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email))).toHaveLength(0);

      // Delivered again after the payment: one alert per payment, not another.
      const after = await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount: staged.amount }));
      expect(after.body).toEqual({ received: true, outcome: 'already_alerted' });
      expect(await alerts()).toEqual(['reversal_applied', 'dispute_after_cancellation']);
      expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund' });
    } finally {
      ctx.clock.set(NOW);
    }
  });
});

describe('disputes that take no money', () => {
  async function paidRegistration() {
    const { event, staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    const completion = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));
    expect(completion.body).toMatchObject({ outcome: 'completed' });
    const registration = await tdb.db('registrations').where({ event_id: event.id }).first();
    return { staged, paymentIntentId, registration };
  }
  const alertsOf = async (paymentIntentId: string) =>
    (await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id')).map((a) => ({ kind: a.kind, details: a.details }));

  it('an inquiry (no money withdrawn) leaves the registration PAID and its seats taken, and asks a person to answer it', async () => {
    const { staged, paymentIntentId, registration } = await paidRegistration();
    const inquiry: Record<string, unknown> = { ...createdDispute({ paymentIntentId, amount: staged.amount }), status: 'warning_needs_response' };

    expect((await deliver('charge.dispute.created', inquiry)).body).toEqual({ received: true, outcome: 'alerted' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'PAID', cancel_reason: null });
    expect(await alertsOf(paymentIntentId)).toEqual([
      { kind: 'dispute_inquiry', details: expect.objectContaining({ disputeId: inquiry.id, registrationId: registration.id, registrationStatus: 'PAID' }) },
    ]);
    // The inquiry closing changes nothing more.
    expect((await deliver('charge.dispute.closed', { ...inquiry, status: 'warning_closed' })).body).toMatchObject({ outcome: 'ignored' });
    expect(await alertsOf(paymentIntentId)).toHaveLength(1);
  });

  it('an inquiry the bank escalates to a chargeback (funds withdrawn, no second created) cancels the registration like a dispute', async () => {
    const { staged, paymentIntentId, registration } = await paidRegistration();
    const inquiry: Record<string, unknown> = { ...createdDispute({ paymentIntentId, amount: staged.amount }), status: 'warning_needs_response' };
    await deliver('charge.dispute.created', inquiry);

    expect((await deliver('charge.dispute.funds_withdrawn', { ...inquiry, status: 'needs_response' })).body).toEqual({ received: true, outcome: 'cancelled' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });
    expect((await alertsOf(paymentIntentId)).map((alert) => alert.kind)).toEqual(['dispute_inquiry']);
  });

  it('a chargeback heard twice (created, then its funds withdrawn) cancels once and raises no dispute-after-cancellation alert', async () => {
    const { staged, paymentIntentId, registration } = await paidRegistration();
    const dispute: Record<string, unknown> = createdDispute({ paymentIntentId, amount: staged.amount });
    expect((await deliver('charge.dispute.created', dispute)).body).toMatchObject({ outcome: 'cancelled' });

    expect((await deliver('charge.dispute.funds_withdrawn', dispute)).body).toEqual({ received: true, outcome: 'already_cancelled' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });
    expect(await alertsOf(paymentIntentId)).toEqual([]);
  });

  it('money withdrawn again after a dispute the church won is news: the office is told, once', async () => {
    const { staged, paymentIntentId } = await paidRegistration();
    const dispute: Record<string, unknown> = createdDispute({ paymentIntentId, amount: staged.amount });
    await deliver('charge.dispute.created', dispute);
    await deliver('charge.dispute.closed', { ...dispute, status: 'won' });

    expect((await deliver('charge.dispute.funds_withdrawn', { ...dispute, status: 'needs_response' })).body).toEqual({ received: true, outcome: 'alerted' });
    expect((await alertsOf(paymentIntentId)).map((alert) => alert.kind)).toEqual(['dispute_won', 'dispute_after_cancellation']);
  });

  it('a dispute won brings the money back to a cancelled registration: one alert says so; a lost one changes nothing', async () => {
    const { staged, paymentIntentId, registration } = await paidRegistration();
    const dispute: Record<string, unknown> = createdDispute({ paymentIntentId, amount: staged.amount });
    expect((await deliver('charge.dispute.created', dispute)).body).toMatchObject({ outcome: 'cancelled' });

    expect((await deliver('charge.dispute.closed', { ...dispute, status: 'won' })).body).toEqual({ received: true, outcome: 'alerted' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });
    expect(await alertsOf(paymentIntentId)).toEqual([
      { kind: 'dispute_won', details: expect.objectContaining({ disputeId: dispute.id, registrationId: registration.id, registrationStatus: 'CANCELLED' }) },
    ]);

    const lost = await paidRegistration();
    const lostDispute = createdDispute({ paymentIntentId: lost.paymentIntentId, amount: lost.staged.amount });
    await deliver('charge.dispute.created', lostDispute);
    expect((await deliver('charge.dispute.closed', { ...lostDispute, status: 'lost' })).body).toMatchObject({ outcome: 'ignored' });
    expect(await alertsOf(lost.paymentIntentId)).toEqual([]);
  });
});

describe('a refund that fails at the provider', () => {
  it('tells the office once that the money is still with the church; the registration the refund cancelled stays cancelled', async () => {
    const { event, staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    expect((await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }))).body).toMatchObject({ outcome: 'completed' });
    expect((await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }))).body).toMatchObject({ outcome: 'cancelled' });
    const registration = await tdb.db('registrations').where({ event_id: event.id }).first();
    const refund = { ...providerFixture('refund'), id: providerId('re_test'), amount: staged.amount, payment_intent: paymentIntentId, status: 'failed', failure_reason: 'expired_or_canceled_card', metadata: {} };

    expect((await deliver('refund.failed', refund)).body).toEqual({ received: true, outcome: 'alerted' });

    // Still cancelled, but the money is held again: it counts as paid in the office's figures, and its history says why.
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund_failed' });
    expect(await showRegistration(ctx, registration.id)).toMatchObject({ paidMinor: staged.amount });
    expect(await tdb.db('registration_history').where({ registration_id: registration.id, action: 'refund_failed' })).toHaveLength(1);
    const alerts = await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId, kind: 'refund_failed' });
    expect(alerts).toEqual([
      expect.objectContaining({
        amount_minor: staged.amount,
        reason: expect.stringContaining('(expired_or_canceled_card), so the money is still with the church: its registration stays cancelled; refund the payer another way'),
        details: expect.objectContaining({ refundId: refund.id, registrationId: registration.id, registrationStatus: 'CANCELLED' }),
      }),
    ]);
    // The same failure delivered again under another event id adds nothing.
    expect((await deliver('refund.failed', refund)).body).toEqual({ received: true, outcome: 'already_alerted' });
    // Refunded again in the dashboard, successfully this time: the refund is recorded once more.
    expect((await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }))).body).toMatchObject({ outcome: 'refund_recorded' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ cancel_reason: 'refund' });
  });
});

describe('a dispute after a refund failed', () => {
  it('takes the money the failed refund left with the church: the registration no longer counts as paid, and the office is told', async () => {
    const { event, staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));
    await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }));
    await deliver('refund.failed', { ...providerFixture('refund'), id: providerId('re_test'), amount: staged.amount, payment_intent: paymentIntentId, status: 'failed', metadata: {} });
    const registration = await tdb.db('registrations').where({ event_id: event.id }).first();
    expect(await showRegistration(ctx, registration.id)).toMatchObject({ paidMinor: staged.amount });

    expect((await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount: staged.amount }))).body).toEqual({ received: true, outcome: 'alerted' });

    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });
    expect(await showRegistration(ctx, registration.id)).toMatchObject({ paidMinor: 0 });
    expect((await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id')).map((alert) => alert.kind)).toEqual(['refund_failed', 'dispute_after_cancellation']);
  });
});

describe('a card refund that failed, paid back by hand, then refunded or disputed at the provider', () => {
  async function paidBackByHandAfterFailedRefund() {
    const { event, staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));
    await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }));
    await deliver('refund.failed', { ...providerFixture('refund'), id: providerId('re_test'), amount: staged.amount, payment_intent: paymentIntentId, status: 'failed', metadata: {} });
    const registration = await tdb.db('registrations').where({ event_id: event.id }).first();
    const money = moneyFormatter({ locale: 'en-AU', currency: 'AUD' });
    await recordOfficeRefund(ctx, { registration: registration.id, amountMinor: staged.amount, method: 'bank', note: 'transfer back', actor: 'office-user' }, money);
    return { amount: staged.amount, paymentIntentId, money };
  }

  it('a second refund at the provider (the payer may now have it twice) raises refunded_twice, naming what was paid back by hand', async () => {
    const { amount, paymentIntentId, money } = await paidBackByHandAfterFailedRefund();

    expect((await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount }))).body).toMatchObject({ outcome: 'refund_recorded' });

    const alerts = await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id');
    expect(alerts.map((alert) => alert.kind)).toEqual(['refund_failed', 'refunded_twice']);
    expect(alerts[1].reason).toContain(`the office had already paid back ${money(amount)} by hand`);
  });

  it('a dispute: its alert names the payment back by hand, the evidence to answer it with', async () => {
    const { amount, paymentIntentId, money } = await paidBackByHandAfterFailedRefund();

    expect((await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount }))).body).toEqual({ received: true, outcome: 'alerted' });

    const alert = await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId, kind: 'dispute_after_cancellation' }).first();
    expect(alert.reason).toContain(`answer it at the card provider, showing that the office paid ${money(amount)} back by hand (record-refund)`);
  });

  it('refunded by hand and again at the provider, then disputed: its alert names both refunds', async () => {
    const { amount, paymentIntentId, money } = await paidBackByHandAfterFailedRefund();
    await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount }));

    expect((await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount }))).body).toEqual({ received: true, outcome: 'alerted' });

    const alert = await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId, kind: 'dispute_after_cancellation' }).first();
    expect(alert.reason).toContain(`showing the refund and that the office paid ${money(amount)} back by hand (record-refund)`);
  });
});

describe('a refund that fails before its payment is registered', () => {
  it('drops the waiting refund, so the payment registers PAID when it completes, and tells the office once', async () => {
    const { event, staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    expect((await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }))).body).toMatchObject({ outcome: 'reversal_pending' });
    const refund = { ...providerFixture('refund'), id: providerId('re_test'), amount: staged.amount, payment_intent: paymentIntentId, status: 'failed', failure_reason: 'expired_or_canceled_card', metadata: {} };

    expect((await deliver('refund.failed', refund)).body).toEqual({ received: true, outcome: 'alerted' });
    expect(await tdb.db('pending_reversals').where({ payment_intent_id: paymentIntentId })).toEqual([]);

    expect((await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }))).body).toMatchObject({ outcome: 'completed' });
    expect(await tdb.db('registrations').where({ event_id: event.id }).first()).toMatchObject({ status: 'PAID', payment_intent_id: paymentIntentId });
    expect((await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId })).map((alert) => alert.kind)).toEqual(['refund_failed']);
  });
});

describe("notices about payments eventops never took (another tool's on the same account)", () => {
  it('a partial refund, an inquiry, a won dispute and a failed refund of such a payment answer not_ours and alert nobody', async () => {
    const foreignIntent = providerId('pi_test');
    const partial = refundedCharge({ paymentIntentId: foreignIntent, amount: 5000, amountRefunded: 1000 });
    const inquiry = { ...createdDispute({ paymentIntentId: foreignIntent, amount: 5000 }), status: 'warning_needs_response' };
    const refund = { ...providerFixture('refund'), id: providerId('re_test'), amount: 5000, payment_intent: foreignIntent, status: 'failed', failure_reason: 'unknown', metadata: {} };

    for (const [type, object] of [
      ['charge.refunded', partial],
      ['charge.dispute.created', inquiry],
      ['charge.dispute.closed', { ...inquiry, status: 'won' }],
      ['refund.failed', refund],
    ] as const) {
      expect((await deliver(type, object)).body, type).toEqual({ received: true, outcome: 'not_ours' });
    }
    expect(await tdb.db('operations_alerts').where({ payment_intent_id: foreignIntent })).toEqual([]);
  });

  it('a payment known only by its alert (an unknown checkout of ours) is ours: its inquiry raises the inquiry alert', async () => {
    const paymentIntentId = providerId('pi_test');
    await tdb.db.transaction((trx) =>
      raiseOperationsAlert(trx, ctx, { kind: 'unknown_checkout', reason: 'paid for a checkout we have no record of', paymentIntentId, providerSessionId: providerId('cs_test') }),
    );
    const inquiry = { ...createdDispute({ paymentIntentId, amount: 4000 }), status: 'warning_needs_response' };

    expect((await deliver('charge.dispute.created', inquiry)).body).toEqual({ received: true, outcome: 'alerted' });
    expect((await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id')).map((alert) => alert.kind)).toEqual(['unknown_checkout', 'dispute_inquiry']);
  });

  it('such a notice is not recorded as handled: once the payment turns out to be ours (its completion repaired), the same event raises its alert', async () => {
    const { staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    const signed = signedDelivery('charge.dispute.created', { ...createdDispute({ paymentIntentId, amount: staged.amount }), status: 'warning_needs_response' });
    expect((await postWebhook(server.url, signed)).body).toEqual({ received: true, outcome: 'not_ours' });

    await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));

    expect((await postWebhook(server.url, signed)).body).toEqual({ received: true, outcome: 'alerted' });
    expect((await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId })).map((alert) => alert.kind)).toEqual(['dispute_inquiry']);
  });
});

describe('disputes of a registration already cancelled', () => {
  it('a dispute after the office cancelled a card-paid registration (the money kept) is alerted once; a refund after it changes nothing more (both count nothing paid)', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const paymentIntentId = providerId('pi_test');
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      status: 'CANCELLED',
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
      cancel_reason: 'office',
      cancelled_at: NOW,
    });

    const dispute = await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount: 12000 }));
    expect(dispute.body).toEqual({ received: true, outcome: 'alerted' });
    const [alert] = await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId });
    expect(alert).toMatchObject({ kind: 'dispute_after_cancellation', amount_minor: 12000 });
    expect(alert.details).toMatchObject({ registrationId: registration.id, cancelReason: 'office' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });

    // A refund after the bank took the money: the registration already counts nothing paid; no second alert.
    expect((await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: 12000 }))).body).toMatchObject({ outcome: 'already_cancelled' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ cancel_reason: 'dispute' });
    expect(await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId })).toHaveLength(1);
  });

  it('a refund made at the provider after the office cancelled a card-paid registration is recorded: it no longer counts as paid, and its history says so', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const paymentIntentId = providerId('pi_test');
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      status: 'CANCELLED',
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
      paid_at: NOW,
      cancel_reason: 'office',
      cancelled_at: NOW,
    });
    expect(await showRegistration(ctx, registration.id)).toMatchObject({ paidMinor: 12000 });

    const refund = refundedCharge({ paymentIntentId, amount: 12000 });
    expect((await deliver('charge.refunded', refund)).body).toEqual({ received: true, outcome: 'refund_recorded' });
    const shown = await showRegistration(ctx, registration.id);
    expect(shown).toMatchObject({ status: 'CANCELLED', cancelReason: 'refund', paidMinor: 0 });
    expect(await tdb.db('registration_history').where({ registration_id: registration.id })).toEqual([
      expect.objectContaining({
        action: 'refunded',
        actor: 'card provider',
        changes: { cancelReason: { from: 'office', to: 'refund' }, amountMinor: 12000, providerObjectId: refund.id },
      }),
    ]);
    // The provider delivering the same refund again changes nothing more.
    expect((await deliver('charge.refunded', refund)).body).toMatchObject({ outcome: 'already_cancelled' });
    expect(await tdb.db('registration_history').where({ registration_id: registration.id })).toHaveLength(1);
    expect(await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId })).toHaveLength(0);
  });
});

describe('one rule for a dispute of a cancelled registration: money the church held and the bank took counts nothing paid', () => {
  /** A card registration paid through the webhook, then cancelled by the office with the money kept. */
  async function officeCancelledCardRegistration() {
    const { event, staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    expect((await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }))).body).toMatchObject({ outcome: 'completed' });
    const { id } = await tdb.db('registrations').where({ event_id: event.id }).first<{ id: string }>('id');
    await cancelRegistration(ctx, { registration: id, actor: 'office-user' });
    return { amount: staged.amount, paymentIntentId, registrationId: id };
  }
  /** "Amount paid" in the office's figures: `registrations show` and `registrations list` (PAID_MINOR_SQL). */
  async function paidInFigures(registrationId: string) {
    const [listed] = await listRegistrations(ctx, { search: registrationId });
    return { show: (await showRegistration(ctx, registrationId)).paidMinor, list: listed?.paidMinor };
  }
  const reasonOf = async (registrationId: string) => (await tdb.db('registrations').where({ id: registrationId }).first<{ cancel_reason: string | null }>('cancel_reason')).cancel_reason;
  const historyOf = async (registrationId: string) =>
    (await tdb.db('registration_history').where({ registration_id: registrationId }).orderBy('id')).map((h) => ({ action: h.action, actor: h.actor, changes: h.changes }));
  const alertsOf = async (paymentIntentId: string) => tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId }).orderBy('id');

  it('rule 1, office: a dispute of an office-cancelled registration moves it to cancel reason dispute, records it in its history and alerts once', async () => {
    const { amount, paymentIntentId, registrationId } = await officeCancelledCardRegistration();
    expect(await paidInFigures(registrationId)).toEqual({ show: amount, list: amount });
    const dispute = createdDispute({ paymentIntentId, amount });

    expect((await deliver('charge.dispute.created', dispute)).body).toEqual({ received: true, outcome: 'alerted' });

    expect(await tdb.db('registrations').where({ id: registrationId }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });
    expect(await paidInFigures(registrationId)).toEqual({ show: 0, list: 0 });
    expect(await historyOf(registrationId)).toEqual([
      expect.objectContaining({ action: 'cancelled', actor: 'office-user' }),
      { action: 'disputed', actor: 'card provider', changes: { cancelReason: { from: 'office', to: 'dispute' }, amountMinor: amount, providerObjectId: dispute.id } },
    ]);
    expect(await alertsOf(paymentIntentId)).toEqual([
      expect.objectContaining({
        kind: 'dispute_after_cancellation',
        amount_minor: amount,
        reason: expect.stringContaining('already cancelled (office); answer it at the card provider; the registration now counts nothing paid'),
        details: expect.objectContaining({ registrationId, cancelReason: 'office' }),
      }),
    ]);
  });

  it('rule 1, unpaid_hold: a dispute of a registration cancelled by a released hold is recorded the same way', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const paymentIntentId = providerId('pi_test');
    const { id: registrationId } = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      status: 'CANCELLED',
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
      paid_at: NOW,
      cancel_reason: 'unpaid_hold',
      cancelled_at: NOW,
    });
    expect(await paidInFigures(registrationId)).toEqual({ show: 12000, list: 12000 });

    const dispute = createdDispute({ paymentIntentId, amount: 12000 });
    expect((await deliver('charge.dispute.created', dispute)).body).toEqual({ received: true, outcome: 'alerted' });

    expect(await reasonOf(registrationId)).toBe('dispute');
    expect(await paidInFigures(registrationId)).toEqual({ show: 0, list: 0 });
    expect(await historyOf(registrationId)).toEqual([
      { action: 'disputed', actor: 'card provider', changes: { cancelReason: { from: 'unpaid_hold', to: 'dispute' }, amountMinor: 12000, providerObjectId: dispute.id } },
    ]);
    expect((await alertsOf(paymentIntentId)).map((a) => a.kind)).toEqual(['dispute_after_cancellation']);
  });

  it('rule 1, the same dispute heard twice (created, then its funds withdrawn): one history entry, one alert', async () => {
    const { amount, paymentIntentId, registrationId } = await officeCancelledCardRegistration();
    const dispute = createdDispute({ paymentIntentId, amount });
    expect((await deliver('charge.dispute.created', dispute)).body).toEqual({ received: true, outcome: 'alerted' });

    expect((await deliver('charge.dispute.funds_withdrawn', dispute)).body).toEqual({ received: true, outcome: 'already_cancelled' });

    expect(await reasonOf(registrationId)).toBe('dispute');
    expect((await historyOf(registrationId)).map((h) => h.action)).toEqual(['cancelled', 'disputed']);
    expect((await alertsOf(paymentIntentId)).map((a) => a.kind)).toEqual(['dispute_after_cancellation']);
  });

  it('rule 3, won: the money came back to an office-cancelled registration, so its reason is office again, it counts as paid, and the alert says it stays cancelled', async () => {
    const { amount, paymentIntentId, registrationId } = await officeCancelledCardRegistration();
    const dispute = createdDispute({ paymentIntentId, amount });
    await deliver('charge.dispute.created', dispute);

    expect((await deliver('charge.dispute.closed', { ...dispute, status: 'won' })).body).toEqual({ received: true, outcome: 'alerted' });

    expect(await tdb.db('registrations').where({ id: registrationId }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'office' });
    expect(await paidInFigures(registrationId)).toEqual({ show: amount, list: amount });
    expect((await historyOf(registrationId)).slice(1)).toEqual([
      expect.objectContaining({ action: 'disputed' }),
      { action: 'dispute_won', actor: 'card provider', changes: { cancelReason: { from: 'dispute', to: 'office' }, amountMinor: amount, providerObjectId: dispute.id } },
    ]);
    const won = (await alertsOf(paymentIntentId)).filter((a) => a.kind === 'dispute_won');
    expect(won).toHaveLength(1);
    expect(won[0].reason).toContain('the money came back; the registration stays cancelled as it was before the dispute (office)');
    expect(won[0].reason).toContain('refund the payer or settle with them');
    expect(won[0].reason).not.toContain('register the payer by hand');
    expect(won[0].details).toMatchObject({ disputeId: dispute.id, registrationId, registrationStatus: 'CANCELLED', restoredCancelReason: 'office' });

    // The money counts on the cancelled registration again: registering the payer from the won alert would count it twice.
    const event = await tdb.db('registrations as r').join('events as e', 'e.id', 'r.event_id').where('r.id', registrationId).first('e.slug');
    const answered = await addRegistration(ctx, {
      eventSlug: event.slug,
      contact: { name: 'Paid Twice', email: 'paid.twice@example.org' },
      attendees: [{ name: 'Paid Twice', tier: 'adult' }],
      family: false,
      overCapacity: true,
      resolveAlert: Number(won[0].id),
      actor: 'office',
    }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(answered?.message).toContain(`is for a won dispute whose money already counts on registration`);
    expect(answered?.message).toContain('(cancelled, office), so there is nothing to register with');
    expect(await tdb.db('registrations').where({ contact_name: 'Paid Twice' }).count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('rule 3 then rule 1: money taken again after a won dispute moves the reason back to dispute, with no second dispute_after_cancellation alert', async () => {
    const { amount, paymentIntentId, registrationId } = await officeCancelledCardRegistration();
    const dispute = createdDispute({ paymentIntentId, amount });
    await deliver('charge.dispute.created', dispute);
    await deliver('charge.dispute.closed', { ...dispute, status: 'won' });

    expect((await deliver('charge.dispute.funds_withdrawn', { ...dispute, status: 'needs_response' })).body).toEqual({ received: true, outcome: 'dispute_recorded' });

    expect(await reasonOf(registrationId)).toBe('dispute');
    expect(await paidInFigures(registrationId)).toEqual({ show: 0, list: 0 });
    expect((await historyOf(registrationId)).map((h) => h.action)).toEqual(['cancelled', 'disputed', 'dispute_won', 'disputed']);
    expect((await historyOf(registrationId))[3]?.changes).toMatchObject({ cancelReason: { from: 'office', to: 'dispute' } });
    expect((await alertsOf(paymentIntentId)).map((a) => a.kind)).toEqual(['dispute_after_cancellation', 'dispute_won']);

    // Won again: the office's reason once more.
    await deliver('charge.dispute.closed', { ...dispute, status: 'won' });
    expect(await reasonOf(registrationId)).toBe('office');
  });

  it('rule 3 restores only for the dispute that moved the reason: another dispute won leaves it disputed (the first one\'s money is still gone)', async () => {
    const { amount, paymentIntentId, registrationId } = await officeCancelledCardRegistration();
    const first = createdDispute({ paymentIntentId, amount });
    await deliver('charge.dispute.created', first);
    const second = createdDispute({ paymentIntentId, amount });
    expect((await deliver('charge.dispute.funds_withdrawn', second)).body).toEqual({ received: true, outcome: 'already_cancelled' });

    expect((await deliver('charge.dispute.closed', { ...second, status: 'won' })).body).toEqual({ received: true, outcome: 'alerted' });

    expect(await reasonOf(registrationId)).toBe('dispute');
    expect(await paidInFigures(registrationId)).toEqual({ show: 0, list: 0 });
    expect((await historyOf(registrationId)).map((h) => h.action)).toEqual(['cancelled', 'disputed']);
  });

  it('rule 3 does not touch a registration the dispute cancelled (it was PAID): reason dispute, no history entry, the old won wording', async () => {
    const { event, staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));
    const { id: registrationId } = await tdb.db('registrations').where({ event_id: event.id }).first<{ id: string }>('id');
    const dispute = createdDispute({ paymentIntentId, amount: staged.amount });
    expect((await deliver('charge.dispute.created', dispute)).body).toEqual({ received: true, outcome: 'cancelled' });

    expect((await deliver('charge.dispute.closed', { ...dispute, status: 'won' })).body).toEqual({ received: true, outcome: 'alerted' });

    expect(await tdb.db('registrations').where({ id: registrationId }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'dispute' });
    expect(await paidInFigures(registrationId)).toEqual({ show: 0, list: 0 });
    expect(await historyOf(registrationId)).toEqual([]);
    const [won] = await alertsOf(paymentIntentId);
    expect(won).toMatchObject({ kind: 'dispute_won', reason: expect.stringContaining('the registration was cancelled when the dispute opened; register the payer by hand') });
    expect(won.details).not.toHaveProperty('restoredCancelReason');
  });

  it('rule 2: a registration cancelled for a refund and then disputed stays refunded (the money was already back with the payer); alert only', async () => {
    const { amount, paymentIntentId, registrationId } = await officeCancelledCardRegistration();
    expect((await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount }))).body).toMatchObject({ outcome: 'refund_recorded' });

    expect((await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount }))).body).toEqual({ received: true, outcome: 'alerted' });

    expect(await reasonOf(registrationId)).toBe('refund');
    expect(await paidInFigures(registrationId)).toEqual({ show: 0, list: 0 });
    expect((await historyOf(registrationId)).map((h) => h.action)).toEqual(['cancelled', 'refunded']);
    expect(await alertsOf(paymentIntentId)).toEqual([
      expect.objectContaining({ kind: 'dispute_after_cancellation', reason: expect.stringContaining('(refund); answer it at the card provider, showing the refund') }),
    ]);
  });

  it('rule 1 and 3 after a failed refund: the dispute records refund_failed as the reason it replaced, and a won dispute gives it back', async () => {
    const { amount, paymentIntentId, registrationId } = await officeCancelledCardRegistration();
    await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount }));
    await deliver('refund.failed', { ...providerFixture('refund'), id: providerId('re_test'), amount, payment_intent: paymentIntentId, status: 'failed', metadata: {} });
    const dispute = createdDispute({ paymentIntentId, amount });

    expect((await deliver('charge.dispute.created', dispute)).body).toEqual({ received: true, outcome: 'alerted' });
    expect((await historyOf(registrationId)).at(-1)).toMatchObject({ action: 'disputed', changes: { cancelReason: { from: 'refund_failed', to: 'dispute' } } });

    await deliver('charge.dispute.closed', { ...dispute, status: 'won' });
    expect(await reasonOf(registrationId)).toBe('refund_failed');
    expect(await paidInFigures(registrationId)).toEqual({ show: amount, list: amount });
  });
});

describe('completions the staging row alone does not explain', () => {
  it('finds the staging row by the provider session id when the metadata carries no id of ours', async () => {
    const { event, staged } = await stage();
    const response = await deliver(
      'checkout.session.completed',
      completedSession({ providerSessionId: staged.providerSessionId, amountTotal: staged.amount }),
    );
    expect(response.body).toEqual({ received: true, outcome: 'completed' });
    expect(await tdb.db('registrations').where({ event_id: event.id, status: 'PAID' })).toHaveLength(1);
  });

  it('a payment that completes after the sweep scrubbed its expired checkout ends UNFULFILLED with an alert', async () => {
    const clock = new FixedClock(NOW);
    const sweepCtx = createTestContext({ db: tdb.db, env: PAYMENTS_ENV, clock });
    const { event, staged } = await stage();
    clock.advance(PAYLOAD_KEPT_AFTER_EXPIRY_MS + 60 * 60_000);
    await sweepExpiredCheckouts(sweepCtx, { trigger: 'cli' });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'EXPIRED', payload_enc: null });

    const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }));

    expect(response.body).toEqual({ received: true, outcome: 'unfulfilled' });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'checkout_expired' });
    expect(await tdb.db('registrations').where({ event_id: event.id })).toHaveLength(0);
    expect(await tdb.db('operations_alerts').where({ checkout_session_id: staged.checkoutId })).toEqual([
      expect.objectContaining({ kind: 'checkout_expired' }),
    ]);
  });

  it('a paid session that is not ours is answered 200 and changes nothing; one carrying an unknown id of ours raises an alert', async () => {
    const foreign = await deliver('checkout.session.completed', completedSession({ providerSessionId: providerId('cs_test'), amountTotal: 500 }));
    expect(foreign.body).toEqual({ received: true, outcome: 'unknown_checkout' });

    const lostId = '00000000-0000-4000-8000-000000000001';
    const lost = await deliver(
      'checkout.session.completed',
      completedSession({ providerSessionId: providerId('cs_test'), checkoutId: lostId, amountTotal: 500 }),
    );
    expect(lost.body).toEqual({ received: true, outcome: 'unknown_checkout' });
    expect(await tdb.db('operations_alerts').where({ checkout_session_id: lostId })).toEqual([
      expect.objectContaining({ kind: 'unknown_checkout', amount_minor: 500 }),
    ]);
  });

  it('a completion with no payment required is checked like any other and ends UNFULFILLED amount_mismatch', async () => {
    const { staged } = await stage();
    const response = await deliver(
      'checkout.session.completed',
      completedSession({ ...staged, amountTotal: 0, paymentStatus: 'no_payment_required', paymentIntentId: null }),
    );
    expect(response.body).toEqual({ received: true, outcome: 'unfulfilled' });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'amount_mismatch' });
  });

  it('an amount mismatch alert is queued for every ADMIN (and no one else), naming the provider ids and the payer', async () => {
    const { staged } = await stage();
    const paymentIntentId = providerId('pi_test');
    await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount + 100, paymentIntentId }));

    const [alert] = await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId });
    expect(alert).toMatchObject({ kind: 'amount_mismatch', resolved_at: null });
    const mail = (await queuedMessages(ctx, 'operations-alert')).filter((m) => m.text.includes(paymentIntentId));
    expect(mail.map((m) => m.to).sort()).toEqual([['pastor-admin@example.org'], ['treasurer@example.org']]);
    expect(mail[0]?.subject).toContain(`alert ${String(alert.id)}`);
    expect(mail[0]?.text).toContain(staged.providerSessionId);
    expect(mail[0]?.text).toContain(staged.email);
    expect(mail[0]?.text).toContain(`eventops alerts resolve ${String(alert.id)}`);
    // The row itself holds no contact details.
    expect(JSON.stringify(alert)).not.toContain(staged.email);
  });
});

describe('receipts and what is stored', () => {
  it('queues a receipt with the church identity from Settings, the line items, the amount and the PaymentIntent reference', async () => {
    await setSetting(tdb.db, 'church.name', 'St Aidan’s Parish', NOW);
    await setSetting(tdb.db, 'church.address', '12 Chapel Lane, Newtown NSW 2042', NOW);
    await setSetting(tdb.db, 'church.abn', '12 345 678 901', NOW);
    const event = await insertEvent(tdb.db, { online_payment: true, title: 'Harvest Dinner' });
    const staged = await stageNewRegistrationCheckout(ctx, event, { attendees: 2, name: 'Robin Receipt' });
    payerEmails.push(staged.email);
    const paymentIntentId = providerId('pi_test');

    await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));

    const [receipt] = (await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email));
    expect(receipt?.subject).toBe('Receipt: Harvest Dinner');
    for (const expected of [
      paymentIntentId,
      'St Aidan’s Parish',
      'ABN 12 345 678 901',
      '12 Chapel Lane, Newtown NSW 2042',
      'Adult — Robin Receipt 1: $120.00',
      'Adult — Robin Receipt 2: $120.00',
      'Total paid: $240.00',
      'Manage your registration: http://127.0.0.1:3000/manage/',
    ]) {
      expect(receipt?.text).toContain(expected);
    }
    expect(receipt?.html).toContain(paymentIntentId);
  });

  it('queued mail and alert rows never hold a payer’s or an administrator’s email in plain text', async () => {
    const rows = await tdb.db('queued_mail').select('*');
    expect(rows.length).toBeGreaterThan(3);
    const stored = JSON.stringify(rows) + JSON.stringify(await tdb.db('operations_alerts').select('*'));
    for (const email of [...payerEmails, 'treasurer@example.org', 'pastor-admin@example.org']) {
      expect(stored).not.toContain(email);
    }
  });

  it('no code calls the provider’s refund interface (no-refund policy)', () => {
    const offenders: string[] = [];
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) walk(file);
        else if (/\.ts$/.test(entry.name) && /\.refunds\b|\/v1\/refunds/.test(fs.readFileSync(file, 'utf8'))) offenders.push(file);
      }
    };
    walk(path.join(ROOT, 'src'));
    expect(offenders).toEqual([]);
  });
});
