import { formatInTimeZone } from 'date-fns-tz';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { raiseOperationsAlert } from '../../src/payments/alerts.js';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { testEnv } from '../support/env.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { providerId } from '../support/provider-fixtures.js';
import { completedSession, postWebhook, refundedCharge, signedDelivery, stageNewRegistrationCheckout } from '../support/webhook-events.js';
import { followRealClock } from '../support/test-now.js';

// The command runs on the real clock: default event dates follow it.
followRealClock();

// Card payments kept without a registration come from the real webhook (the harness's server); the office
// answers them with the built command; the mail it queues is delivered here to a real SMTP sink.
let harness: PaymentsHarness;
let env: Record<string, string | undefined>;
const mail = useSinkAndMailer({ timeoutMs: 5_000 });
const CARD_FEE = { percent: 1.7, fixed: 30 };

beforeAll(async () => {
  harness = await startPaymentsHarness();
  env = testEnv({ DATABASE_URL: harness.tdb.url, ...mail.sink.configEnv() });
});
afterAll(() => harness.close());

const db = () => harness.tdb.db;
const cli = (args: string[]) => runCli(['registrations', ...args], { env });
const deliver = (type: string, object: Record<string, unknown>) => postWebhook(harness.server.url, signedDelivery(type, object));

async function deliverMail() {
  const ctx = createTestContext({ db: db(), mailer: mail.mailer, env: mail.sink.configEnv(), clock: new FixedClock(new Date(Date.now() + 60_000)) });
  await deliverQueuedMail(ctx, { limit: 100 });
}

/** A full event that passes the card fee on, and a card payment for one more seat kept by the webhook with a sold_out alert. */
async function soldOutCardPayment() {
  const event = await insertEvent(db(), { online_payment: true, pass_card_fee: true, capacity: 1 });
  await insertRegistration(db(), harness.ctx.cipher, event.id, { contact_name: 'Already Coming' });
  const staged = await stageNewRegistrationCheckout(harness.ctx, event, { cardFee: CARD_FEE, name: 'Ana Lee' });
  const paymentIntentId = providerId('pi_test');
  const completed = await deliver('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount, paymentIntentId }));
  expect(completed.body).toMatchObject({ outcome: 'unfulfilled' });
  const alert = await db()('operations_alerts').where({ checkout_session_id: staged.checkoutId }).first();
  expect(alert).toMatchObject({ kind: 'sold_out', payment_intent_id: paymentIntentId, amount_minor: staged.amount });
  const add = (...extra: string[]) =>
    cli(['add', '--event', event.slug, '--name', 'Ana Lee', '--email', 'ana@example.org', '--attendee', 'Ana Lee:adult', '--over-capacity', ...extra]);
  return { event, staged, paymentIntentId, alertId: Number(alert.id), add };
}

const registrationsOf = (eventId: string) => db()('registrations').where({ event_id: eventId }).orderBy('created_at');

describe('registrations add --resolve-alert of a card payment kept without a registration', () => {
  it('records the registration PAID by that card payment (amount, card fee line, PaymentIntent), and the receipt says card', async () => {
    const { event, staged, paymentIntentId, alertId, add } = await soldOutCardPayment();
    const fee = staged.amount - 12000;
    expect(fee).toBeGreaterThan(0);

    const added = await add('--resolve-alert', String(alertId), '--note', 'paid by card while full');
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const [, registration] = await registrationsOf(event.id);
    const reference = registration.id.replace(/-/g, '').slice(0, 8).toUpperCase();
    expect(added.stdout).toBe(
      `registered ${reference} (PAID, card, $${(staged.amount / 100).toFixed(2)}) for ${event.slug}; the receipt is queued\n` +
        `the event is now 1 over its capacity\nresolved alert ${alertId}\n`,
    );
    expect(registration).toMatchObject({
      status: 'PAID',
      payment_method: 'card',
      total_minor: staged.amount,
      surcharge_minor: fee,
      payment_intent_id: paymentIntentId,
      line_items: [
        { label: 'Adult — Ana Lee', amount: 12000, kind: 'ticket' },
        { label: 'Card processing fee', amount: fee, kind: 'fee' },
      ],
    });
    expect(await db()('registration_payments').where({ registration_id: registration.id })).toEqual([]);
    expect(await db()('operations_alerts').where({ id: alertId }).first()).toMatchObject({ resolution: `registered by hand as ${reference}: paid by card while full` });

    await deliverMail();
    const receipts = mail.sink.messages.filter((m) => m.subject === 'Receipt: Family Camp');
    expect(receipts.map((m) => m.envelope.to)).toEqual([['ana@example.org']]);
    expect(receipts[0]?.text).toContain('your card payment for Family Camp');
    expect(receipts[0]?.text).toContain('Paid by: card payment');
    expect(receipts[0]?.text).toContain(`Payment reference: ${paymentIntentId}`);
    expect(receipts[0]?.text).toContain(`Card processing fee: $${(fee / 100).toFixed(2)}`);
    expect(receipts[0]?.text).toContain(`Total paid: $${(staged.amount / 100).toFixed(2)}`);

    // Linked as the webhook links a card registration: a refund made at the provider later cancels it.
    const refunded = await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: staged.amount }));
    expect(refunded.body).toMatchObject({ outcome: 'cancelled' });
    expect(await db()('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund' });
  });

  it('refuses, registering nothing, --paid bank or cash for a card payment, --paid card without a card alert, another amount, and a payment refunded since', async () => {
    const { event, paymentIntentId, alertId, add } = await soldOutCardPayment();
    const noCardAlert = await harness.tdb.db.transaction((trx) => raiseOperationsAlert(trx, harness.ctx, { kind: 'sold_out', reason: 'full', amountMinor: 12000 }));

    const refusals: Array<[string[], number, string]> = [
      [['--paid', 'bank', '--resolve-alert', String(alertId)], 1, `alert ${alertId} is for a card payment (${paymentIntentId}), so the registration is paid by card, not by bank; nothing was registered`],
      [['--paid', 'cash', '--resolve-alert', String(alertId)], 1, 'not by cash'],
      [['--paid', 'card'], 2, '--paid card needs --resolve-alert'],
      [['--paid', 'card', '--resolve-alert', String(noCardAlert.id)], 1, `alert ${noCardAlert.id} names no card payment`],
      [['--attendee', 'Kim Lee:adult', '--resolve-alert', String(alertId)], 1, `alert ${alertId} is for a card payment of $122.38, but this registration costs $242.38 by card ($240.00 and the $2.38 card fee)`],
    ];
    for (const [extra, code, why] of refusals) {
      const refused = await add(...extra);
      expect(refused.code, extra.join(' ')).toBe(code);
      expect(refused.stderr).toContain(why);
    }
    const wrongPaid = await add('--paid', 'bank', '--resolve-alert', String(alertId));
    expect(wrongPaid.stderr).toContain(`eventops alerts resolve ${alertId}`);

    // Refunded at the provider while kept: the money is gone, so nothing is registered with it.
    await deliver('charge.refunded', refundedCharge({ paymentIntentId, amount: 12238 }));
    const afterRefund = await add('--resolve-alert', String(alertId));
    expect(afterRefund.code).toBe(1);
    expect(afterRefund.stderr).toContain('is for a card payment that was refunded at the card provider');

    expect(await registrationsOf(event.id)).toHaveLength(1);
    expect(await db()('operations_alerts').whereIn('id', [alertId, noCardAlert.id]).whereNotNull('resolved_at')).toEqual([]);
  });

  it('a dispute won: the payment stays linked to the registration the dispute cancelled, the new one is PAID by card with its reference', async () => {
    const event = await insertEvent(db(), { online_payment: true });
    const paymentIntentId = providerId('pi_test');
    const cancelled = await insertRegistration(db(), harness.ctx.cipher, event.id, {
      status: 'CANCELLED',
      cancel_reason: 'dispute',
      cancelled_at: new Date(),
      payment_method: 'card',
      payment_intent_id: paymentIntentId,
    });
    const alert = await harness.tdb.db.transaction((trx) =>
      raiseOperationsAlert(trx, harness.ctx, { kind: 'dispute_won', reason: 'won', paymentIntentId, amountMinor: 12000, details: { registrationId: cancelled.id } }),
    );

    const added = await cli(['add', '--event', event.slug, '--name', 'Won Back', '--email', 'won@example.org', '--attendee', 'Won Back:adult', '--resolve-alert', String(alert.id), '--json']);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const { registration } = JSON.parse(added.stdout);
    expect(registration).toMatchObject({ status: 'PAID', method: 'card', totalMinor: 12000, resolvedAlert: alert.id });
    expect(await db()('registrations').where({ id: registration.registrationId }).first()).toMatchObject({ payment_method: 'card', payment_intent_id: null });
    expect(await db()('registrations').where({ id: cancelled.id }).first()).toMatchObject({ payment_intent_id: paymentIntentId });

    await deliverMail();
    const receipt = mail.sink.messages.find((m) => m.envelope.to.includes('won@example.org'));
    expect(receipt?.text).toContain('Paid by: card payment');
    expect(receipt?.text).toContain(`Payment reference: ${paymentIntentId}`);

    // The PaymentIntent stays on the cancelled registration: show finds the payment through the alert answered.
    const shown = JSON.parse((await cli(['show', registration.reference, '--json'])).stdout).registration;
    expect(shown.cardPaymentFromAlert).toMatchObject({ alertId: alert.id, method: 'card', amountMinor: 12000, providerReference: paymentIntentId });
  });

  it('show lists that card payment (amount, card, the provider\'s reference, when, in APP_TIMEZONE), though no checkout is linked to the registration', async () => {
    const { event, staged, paymentIntentId, alertId, add } = await soldOutCardPayment();
    expect((await add('--resolve-alert', String(alertId))).code).toBe(0);
    const [, registration] = await registrationsOf(event.id);
    const reference = registration.id.replace(/-/g, '').slice(0, 8).toUpperCase();
    expect(await db()('checkout_sessions').where({ registration_id: registration.id })).toEqual([]);
    const alert = await db()('operations_alerts').where({ id: alertId }).first();
    const local = (date: Date) => formatInTimeZone(date, 'Australia/Sydney', 'yyyy-MM-dd HH:mm');

    const shown = await cli(['show', reference]);
    expect(shown.stderr).toBe('');
    expect(shown.code).toBe(0);
    const payments = shown.stdout.slice(shown.stdout.indexOf('Payments:\n'), shown.stdout.indexOf('Emails:\n'));
    expect(payments).toBe(
      `Payments:\n  card $${(staged.amount / 100).toFixed(2)} received ${local(alert.created_at)} (alert #${alertId}), recorded ${local(alert.resolved_at)} ${paymentIntentId}\n`,
    );
    expect(shown.stdout).toContain(`total $${(staged.amount / 100).toFixed(2)}, paid $${(staged.amount / 100).toFixed(2)}\n`);

    const json = JSON.parse((await cli(['show', reference, '--json'])).stdout).registration;
    expect(json).toMatchObject({
      method: 'card',
      paidMinor: staged.amount,
      cardPayments: [],
      officePayments: [],
      cardPaymentFromAlert: {
        alertId,
        method: 'card',
        amountMinor: staged.amount,
        providerReference: paymentIntentId,
        receivedAt: alert.created_at.toISOString(),
        recordedAt: alert.resolved_at.toISOString(),
      },
    });
  });
});
