import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { PAYLOAD_KEPT_AFTER_EXPIRY_MS } from '../../src/payments/staging.js';
import type { TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import type { TestServer } from '../support/http.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { providerId } from '../support/provider-fixtures.js';
import {
  completedSession,
  postWebhook,
  queuedMessages,
  signedDelivery,
  stageNewRegistrationCheckout,
  stagePayNowCheckout,
} from '../support/webhook-events.js';

// A webhook outage longer than the 31-minute checkout: the sweep expires the checkout meanwhile,
// and the completion the provider redelivers afterwards must still be honoured.

const T0 = new Date('2026-11-22T00:00:00Z');
const OUTAGE_MS = 3 * 60 * 60_000;
let tdb: TestDatabase;
let ctx: AppContext & { clock: FixedClock };
let server: TestServer;
let harness: PaymentsHarness;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: T0 });
  ({ tdb, ctx, server } = harness);
});
afterAll(() => harness.close());

const deliver = (type: string, object: Record<string, unknown>) => postWebhook(server.url, signedDelivery(type, object));
const staging = (id: string) => tdb.db('checkout_sessions').where({ id }).first();
const alertsFor = (checkoutId: string) => tdb.db('operations_alerts').where({ checkout_session_id: checkoutId });
const registrationsOf = (eventId: string) => tdb.db('registrations').where({ event_id: eventId }).orderBy('created_at');

/** Starts at T0, lets the checkout expire during the outage and sweeps it, as cron would. */
async function outage(ms = OUTAGE_MS): Promise<void> {
  ctx.clock.set(new Date(T0.getTime() + ms));
  await sweepExpiredCheckouts(ctx, { trigger: 'cli' });
}

describe('a completion delivered after the checkout expired, its payload still kept', () => {
  it('new registration with seats left: the sweep keeps the payload, the late completion creates the PAID registration and its receipt', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true, capacity: 5 });
    const staged = await stageNewRegistrationCheckout(ctx, event, { attendees: 2 });
    await outage();
    const expired = await staging(staged.checkoutId);
    expect(expired).toMatchObject({ status: 'EXPIRED', scrubbed_at: null, unpaid_confirmed_at: null });
    expect(expired.payload_enc).not.toBeNull();

    const paymentIntentId = providerId('pi_test');
    const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));

    expect(response.body).toEqual({ received: true, outcome: 'completed' });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'COMPLETED', payload_enc: null, payment_intent_id: paymentIntentId });
    const [registration] = await registrationsOf(event.id);
    expect(registration).toMatchObject({ status: 'PAID', payment_method: 'card', attendee_count: 2, payment_intent_id: paymentIntentId });
    expect((await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email))).toHaveLength(1);
    expect(await alertsFor(staged.checkoutId)).toHaveLength(0);
  });

  it('new registration, sold out during the outage: UNFULFILLED with one sold_out alert, no registration', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true, capacity: 2 });
    const staged = await stageNewRegistrationCheckout(ctx, event, { attendees: 2 });
    await outage();
    await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PAID', attendee_count: 1 });

    const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }));

    expect(response.body).toEqual({ received: true, outcome: 'unfulfilled' });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'sold_out' });
    expect(await alertsFor(staged.checkoutId)).toEqual([expect.objectContaining({ kind: 'sold_out' })]);
    expect(await registrationsOf(event.id)).toHaveLength(1);
  });

  it('the amount is checked as on time: a late completion of another amount is UNFULFILLED amount_mismatch', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    await outage();

    const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount + 100 }));

    expect(response.body).toEqual({ received: true, outcome: 'unfulfilled' });
    expect(await alertsFor(staged.checkoutId)).toEqual([expect.objectContaining({ kind: 'amount_mismatch' })]);
    expect(await registrationsOf(event.id)).toHaveLength(0);
  });

  it('an async payment success delivered late is honoured the same way', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    await outage();

    const response = await deliver('checkout.session.async_payment_succeeded', completedSession({ ...staged, amountTotal: staged.amount }));

    expect(response.body).toEqual({ received: true, outcome: 'completed' });
    expect(await registrationsOf(event.id)).toEqual([expect.objectContaining({ status: 'PAID' })]);
  });

  it('pay-now with seats left: PENDING → PAID on the late completion', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true, capacity: 10 });
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank', total_minor: 12000 });
    const staged = await stagePayNowCheckout(ctx, event.id, { id: registration.id, net: 12000 });
    await outage();

    const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: 12000 }));

    expect(response.body).toEqual({ received: true, outcome: 'completed' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'PAID', payment_method: 'card' });
  });

  it('pay-now on a sold-out event: the PENDING registration holds its own seats, so the late payment still completes it', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true, capacity: 2 });
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank', attendee_count: 1, total_minor: 12000 });
    await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PAID', attendee_count: 1 });
    const staged = await stagePayNowCheckout(ctx, event.id, { id: registration.id, net: 12000 });
    await outage();

    const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: 12000 }));

    expect(response.body).toEqual({ received: true, outcome: 'completed' });
    expect(await tdb.db('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'PAID' });
  });

  it('pay-now for a registration paid meanwhile (e.g. by bank transfer): UNFULFILLED with one paid_twice alert', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true });
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank', total_minor: 12000 });
    const staged = await stagePayNowCheckout(ctx, event.id, { id: registration.id, net: 12000 });
    await outage();
    await tdb.db('registrations').where({ id: registration.id }).update({ status: 'PAID', paid_at: ctx.clock.now() });

    const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: 12000 }));

    expect(response.body).toEqual({ received: true, outcome: 'unfulfilled' });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'paid_twice' });
    expect(await alertsFor(staged.checkoutId)).toEqual([expect.objectContaining({ kind: 'paid_twice' })]);
  });

  it('pay-now for a registration cancelled meanwhile: UNFULFILLED with one registration_cancelled alert', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true });
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank', total_minor: 12000 });
    const staged = await stagePayNowCheckout(ctx, event.id, { id: registration.id, net: 12000 });
    await outage();
    await tdb.db('registrations').where({ id: registration.id }).update({ status: 'CANCELLED', cancelled_at: ctx.clock.now() });

    const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: 12000 }));

    expect(response.body).toEqual({ received: true, outcome: 'unfulfilled' });
    expect(await alertsFor(staged.checkoutId)).toEqual([expect.objectContaining({ kind: 'registration_cancelled' })]);
  });

  it('the event deleted during the outage: UNFULFILLED with one event_deleted alert', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    await outage();
    await tdb.db('events').where({ id: event.id }).update({ deleted_at: ctx.clock.now() });

    const response = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }));

    expect(response.body).toEqual({ received: true, outcome: 'unfulfilled' });
    expect(await alertsFor(staged.checkoutId)).toEqual([expect.objectContaining({ kind: 'event_deleted' })]);
  });
});

describe('after the redelivery window', () => {
  it('the sweep scrubs the payload 72 hours after expiry in its second statement, not before', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    const expiry = (await staging(staged.checkoutId)).expires_at as Date;

    ctx.clock.set(new Date(expiry.getTime() + PAYLOAD_KEPT_AFTER_EXPIRY_MS - 60_000));
    const early = await sweepExpiredCheckouts(ctx, { trigger: 'cli' });
    expect(early.scrubbed).toBe(0);
    expect((await staging(staged.checkoutId)).payload_enc).not.toBeNull();

    ctx.clock.set(new Date(expiry.getTime() + PAYLOAD_KEPT_AFTER_EXPIRY_MS));
    const due = await sweepExpiredCheckouts(ctx, { trigger: 'cli', dryRun: true });
    expect(due.wouldDo?.some((line) => line.includes(`scrub the payload of checkout ${staged.checkoutId}`))).toBe(true);
    const swept = await sweepExpiredCheckouts(ctx, { trigger: 'cli' });
    expect(swept.scrubbed).toBeGreaterThanOrEqual(1);
    const row = await staging(staged.checkoutId);
    expect(row).toMatchObject({ status: 'EXPIRED', payload_enc: null, unpaid_confirmed_at: null });
    expect(row.scrubbed_at).toEqual(ctx.clock.now());
    expect((await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).scrubbed).toBe(0);
  });

  it('a completion after the scrub stays UNFULFILLED with one checkout_expired alert, and a redelivery adds nothing', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    await outage(PAYLOAD_KEPT_AFTER_EXPIRY_MS + 60 * 60_000);

    const session = completedSession({ ...staged, amountTotal: staged.amount });
    const response = await deliver('checkout.session.completed', session);
    const again = await deliver('checkout.session.completed', session);

    expect(response.body).toEqual({ received: true, outcome: 'unfulfilled' });
    expect(again.body).toEqual({ received: true, outcome: 'already_handled' });
    expect(await staging(staged.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'checkout_expired' });
    expect(await alertsFor(staged.checkoutId)).toEqual([expect.objectContaining({ kind: 'checkout_expired' })]);
    expect(await registrationsOf(event.id)).toHaveLength(0);
  });
});

describe('the provider confirms a session unpaid', () => {
  it('checkout.session.expired: EXPIRED, scrubbed at once and recorded as confirmed unpaid', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true });
    const staged = await stageNewRegistrationCheckout(ctx, event);
    await outage(40 * 60_000);

    const response = await deliver('checkout.session.expired', completedSession({ ...staged, amountTotal: staged.amount, paymentStatus: 'unpaid', paymentIntentId: null }));

    expect(response.body).toEqual({ received: true, outcome: 'expired' });
    const row = await staging(staged.checkoutId);
    expect(row).toMatchObject({ status: 'EXPIRED', payload_enc: null });
    expect(row.unpaid_confirmed_at).toEqual(ctx.clock.now());
    expect(row.scrubbed_at).toEqual(ctx.clock.now());
  });
});
