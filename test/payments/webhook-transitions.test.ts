import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { DELAYED_PAYMENT_EXTENSION_MS } from '../../src/payments/staging.js';
import { createTestContext } from '../support/context.js';
import type { TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import type { TestServer } from '../support/http.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { providerId } from '../support/provider-fixtures.js';
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

// One named test per row of spec section 3 that the webhook (or the sweep it interacts with) drives.

const NOW = new Date('2026-11-22T00:00:00Z');
let tdb: TestDatabase;
let ctx: AppContext & { clock: FixedClock };
let server: TestServer;
let harness: PaymentsHarness;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: NOW });
  ({ tdb, ctx, server } = harness);
});
afterAll(() => harness.close());

const deliver = (type: string, object: Record<string, unknown>) => postWebhook(server.url, signedDelivery(type, object));
const staging = (id: string) => tdb.db('checkout_sessions').where({ id }).first();
const registrationsOf = (eventId: string) => tdb.db('registrations').where({ event_id: eventId }).orderBy('created_at');
const alertsFor = (checkoutId: string) => tdb.db('operations_alerts').where({ checkout_session_id: checkoutId });

describe('CheckoutSession transitions driven by the webhook', () => {
  it('CheckoutSession OPEN → COMPLETED on checkout.session.completed (paid): creates a PAID registration, scrubs the payload, queues the receipt', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, pass_card_fee: true });
    const staged = await stageNewRegistrationCheckout(ctx, event, { attendees: 2, cardFee: { percent: 1.7, fixed: 30 } });
    const paymentIntentId = providerId('pi_test');
    const session = completedSession({ ...staged, eventId: event.id, amountTotal: staged.amount, paymentIntentId });

    const response = await deliver('checkout.session.completed', session);

    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'completed' } });
    const row = await staging(staged.checkoutId);
    expect(row).toMatchObject({ status: 'COMPLETED', payment_intent_id: paymentIntentId, payload_enc: null });
    expect(row.completed_at).toEqual(NOW);
    const [registration] = await registrationsOf(event.id);
    expect(registration).toMatchObject({
      id: row.registration_id,
      status: 'PAID',
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
      attendee_count: 2,
      total_minor: staged.amount,
      contact_email_hash: ctx.cipher.lookupHash('email', staged.email),
    });
    expect(registration.surcharge_minor).toBeGreaterThan(0);
    expect(registration.paid_at).toEqual(NOW);
    const receipts = await queuedMessages(ctx, 'receipt');
    expect(receipts.filter((m) => m.to.includes(staged.email))).toHaveLength(1);
  });

  it('CheckoutSession OPEN → OPEN on checkout.session.completed (payment not yet settled): expiry extended 14 days, no registration', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    const paymentIntentId = providerId('pi_test');

    const response = await deliver(
      'checkout.session.completed',
      completedSession({ ...staged, amountTotal: staged.amount, paymentStatus: 'unpaid', paymentIntentId }),
    );

    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'extended' } });
    const row = await staging(staged.checkoutId);
    expect(row.status).toBe('OPEN');
    expect(row.payload_enc).not.toBeNull();
    expect(row.payment_intent_id).toBe(paymentIntentId);
    expect(row.expires_at).toEqual(new Date(NOW.getTime() + DELAYED_PAYMENT_EXTENSION_MS));
    expect(await registrationsOf(event.id)).toHaveLength(0);
  });

  it('CheckoutSession OPEN → COMPLETED on checkout.session.async_payment_succeeded (delayed payment settled): creates a PAID registration', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    const paymentIntentId = providerId('pi_test');
    await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentStatus: 'unpaid', paymentIntentId }));

    const response = await deliver(
      'checkout.session.async_payment_succeeded',
      completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }),
    );

    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'completed' } });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'COMPLETED', payload_enc: null });
    const registrations = await registrationsOf(event.id);
    expect(registrations).toHaveLength(1);
    expect(registrations[0]).toMatchObject({ status: 'PAID', payment_intent_id: paymentIntentId });
  });

  it('CheckoutSession OPEN → EXPIRED on checkout.session.async_payment_failed: no registration, payload scrubbed', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);

    const response = await deliver(
      'checkout.session.async_payment_failed',
      completedSession({ ...staged, amountTotal: staged.amount, paymentStatus: 'unpaid' }),
    );

    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'expired' } });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'EXPIRED', payload_enc: null });
    expect(await registrationsOf(event.id)).toHaveLength(0);
  });

  it('CheckoutSession OPEN → EXPIRED on sweep-checkouts once the expiry passed (payload kept for a late payment); an unpaid completion’s extended expiry keeps it OPEN', async () => {
    const clock = new FixedClock(NOW);
    const sweepCtx = createTestContext({ db: tdb.db, env: PAYMENTS_ENV, clock });
    const event = await insertEvent(tdb.db, { online_payment: true });
    const abandoned = await stageNewRegistrationCheckout(sweepCtx, event);
    const settling = await stageNewRegistrationCheckout(sweepCtx, event);
    await deliver('checkout.session.completed', completedSession({ ...settling, amountTotal: settling.amount, paymentStatus: 'unpaid' }));

    clock.advance(2 * 60 * 60_000);
    await sweepExpiredCheckouts(sweepCtx, { trigger: 'cli' });

    const expired = await staging(abandoned.checkoutId);
    expect(expired).toMatchObject({ status: 'EXPIRED', scrubbed_at: null });
    expect(expired.payload_enc).not.toBeNull();
    const kept = await staging(settling.checkoutId);
    expect(kept.status).toBe('OPEN');
    expect(kept.payload_enc).not.toBeNull();
  });

  it('CheckoutSession EXPIRED (payload kept) → OPEN on a late unpaid completion: the delayed payment made in time is extended, and registers when it settles after the scrub window', async () => {
    const clock = new FixedClock(NOW);
    const lateCtx = createTestContext({ db: tdb.db, env: PAYMENTS_ENV, clock });
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(lateCtx, event);
    const paymentIntentId = providerId('pi_test');
    // The webhook was down: the sweep expired the checkout before the unpaid completion arrived.
    clock.advance(2 * 60 * 60_000);
    await sweepExpiredCheckouts(lateCtx, { trigger: 'cli' });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'EXPIRED', scrubbed_at: null });

    const late = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentStatus: 'unpaid', paymentIntentId }));

    expect(late).toEqual({ status: 200, body: { received: true, outcome: 'extended' } });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'OPEN', payment_intent_id: paymentIntentId, scrubbed_at: null });
    // Four days on, past the 72-hour window in which an expired payload is kept, the debit settles.
    clock.advance(4 * 24 * 60 * 60_000);
    await sweepExpiredCheckouts(lateCtx, { trigger: 'cli' });
    expect((await staging(staged.checkoutId)).payload_enc).not.toBeNull();
    const settled = await deliver('checkout.session.async_payment_succeeded', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));
    expect(settled.body).toMatchObject({ outcome: 'completed' });
    expect(await registrationsOf(event.id)).toHaveLength(1);
  });

  describe('CheckoutSession OPEN → UNFULFILLED on the webhook when charged but the registration cannot be completed: money kept, operations alert', () => {
    it('amount charged differs from the priced amount (net + snapshotted surcharge)', async () => {
      const event = await insertEvent(tdb.db, { online_payment: true });
      const staged = await stageNewRegistrationCheckout(ctx, event);

      const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount - 1 }));

      expect(response).toEqual({ status: 200, body: { received: true, outcome: 'unfulfilled' } });
      expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'amount_mismatch' });
      expect(await registrationsOf(event.id)).toHaveLength(0);
      const [alert] = await alertsFor(staged.checkoutId);
      expect(alert).toMatchObject({ kind: 'amount_mismatch', provider_session_id: staged.providerSessionId, amount_minor: staged.amount - 1 });
      const mail = await queuedMessages(ctx, 'operations-alert');
      expect(mail.filter((m) => m.text.includes(staged.providerSessionId))).toEqual([
        expect.objectContaining({ to: ['treasurer@example.org'] }),
      ]);
    });

    it('sold out between checkout and webhook', async () => {
      const event = await insertEvent(tdb.db, { online_payment: true, capacity: 2 });
      await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', attendee_count: 1 });
      const staged = await stageNewRegistrationCheckout(ctx, event, { attendees: 2 });

      const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }));

      expect(response.status).toBe(200);
      expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out' });
      expect(await registrationsOf(event.id)).toHaveLength(1);
      expect(await alertsFor(staged.checkoutId)).toEqual([expect.objectContaining({ kind: 'sold_out' })]);
    });

    it('event deleted mid-checkout', async () => {
      const event = await insertEvent(tdb.db, { online_payment: true });
      const staged = await stageNewRegistrationCheckout(ctx, event);
      await tdb.db('events').where({ id: event.id }).update({ deleted_at: NOW });

      const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }));

      expect(response.status).toBe(200);
      expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'event_deleted' });
      expect(await registrationsOf(event.id)).toHaveLength(0);
      expect(await alertsFor(staged.checkoutId)).toEqual([expect.objectContaining({ kind: 'event_deleted' })]);
    });

    it('registration paid twice: pay-now completion for a registration already PAID', async () => {
      const event = await insertEvent(tdb.db, { online_payment: true });
      const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank' });
      const first = await stagePayNowCheckout(ctx, event.id, { id: registration.id, net: 12000 });
      const second = await stagePayNowCheckout(ctx, event.id, { id: registration.id, net: 12000 });
      const firstPi = providerId('pi_test');
      await deliver('checkout.session.completed', completedSession({ ...first, amountTotal: 12000, paymentIntentId: firstPi }));

      const response = await deliver('checkout.session.completed', completedSession({ ...second, amountTotal: 12000 }));

      expect(response).toEqual({ status: 200, body: { received: true, outcome: 'unfulfilled' } });
      expect(await staging(second.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'paid_twice' });
      expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'PAID', payment_intent_id: firstPi });
      expect(await alertsFor(second.checkoutId)).toEqual([expect.objectContaining({ kind: 'paid_twice' })]);
    });
  });
});

describe('Registration transitions driven by the webhook', () => {
  it('Registration PENDING → PAID on pay-now webhook completion: card fee added, receipt queued', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, pass_card_fee: true });
    const email = 'bank-payer@example.org';
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      status: 'PENDING',
      payment_method: 'bank',
      email,
      line_items: JSON.stringify([{ label: 'Adult — Sam Member', amount: 12000, kind: 'ticket' }]),
    });
    const staged = await stagePayNowCheckout(ctx, event.id, { id: registration.id, net: 12000, surcharge: 241 });
    const paymentIntentId = providerId('pi_test');

    const response = await deliver(
      'checkout.session.completed',
      completedSession({ ...staged, registrationId: registration.id, amountTotal: 12241, paymentIntentId }),
    );

    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'completed' } });
    const paid = await tdb.db('registrations').where({ id: registration.id }).first();
    expect(paid).toMatchObject({
      status: 'PAID',
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
      surcharge_minor: 241,
      total_minor: 12241,
      line_items: [
        { label: 'Adult — Sam Member', amount: 12000, kind: 'ticket' },
        { label: 'Card processing fee', amount: 241, kind: 'fee' },
      ],
    });
    expect(paid.paid_at).toEqual(NOW);
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'COMPLETED', registration_id: registration.id });
    const receipts = (await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(email));
    expect(receipts).toHaveLength(1);
    expect(receipts[0]?.text).toContain(paymentIntentId);
  });

  it('Registration PAID → CANCELLED on charge.refunded (full refund, resolved by PaymentIntent): seat freed', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, capacity: 1 });
    const paymentIntentId = providerId('pi_test');
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      status: 'PAID',
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
    });

    const response = await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: 12000 }));

    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'cancelled' } });
    const cancelled = await tdb.db('registrations').where({ id: registration.id }).first();
    expect(cancelled).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund' });
    expect(cancelled.cancelled_at).toEqual(NOW);
    // The seat is free again: a new checkout for the one seat completes.
    const staged = await stageNewRegistrationCheckout(ctx, event);
    const next = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }));
    expect(next.body).toEqual({ received: true, outcome: 'completed' });
  });

  it('Registration PAID → CANCELLED on charge.dispute.created (resolved by PaymentIntent)', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const paymentIntentId = providerId('pi_test');
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      status: 'PAID',
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
    });

    const response = await deliver('charge.dispute.created', createdDispute({ paymentIntentId, amount: 12000 }));

    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'cancelled' } });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({
      status: 'CANCELLED',
      cancel_reason: 'dispute',
    });
    const again = await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: 12000 }));
    expect(again.body).toEqual({ received: true, outcome: 'already_cancelled' });
  });

  it('Registration (any status) unchanged on charge.refunded (partial refund): operations alert for manual review', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true });
    const paymentIntentId = providerId('pi_test');
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      status: 'PAID',
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
    });

    const response = await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: 12000, amountRefunded: 5000 }));

    expect(response).toEqual({ status: 200, body: { received: true, outcome: 'alerted' } });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'PAID', cancelled_at: null });
    const [alert] = await tdb.db('operations_alerts').where({ payment_intent_id: paymentIntentId });
    expect(alert).toMatchObject({ kind: 'partial_refund', amount_minor: 5000 });
    expect(alert.details).toMatchObject({ registrationId: registration.id, chargedMinor: 12000 });
    expect((await queuedMessages(ctx, 'operations-alert')).some((m) => m.text.includes(paymentIntentId))).toBe(true);
  });
});
