import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { resendRegistrationMail } from '../../src/office/registrations/resend.js';
import { payNowPath, registrationPath } from '../../src/http/registration-view.js';
import { OPENING_LEASE_MS, startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import { addCardEvent, registerByBank } from '../support/card-event-harness.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { queuedMessages } from '../support/webhook-events.js';

/**
 * A pay-now claim (a checkout row claimed before its provider session is opened, without a lock)
 * whose request died before recording the session: past OPENING_LEASE_MS nobody was handed its
 * payment page, so nothing that tells the registrant, reminds them or lets the office record a
 * payment counts it as a card payment in flight. The webhook still honours a payment for its row.
 */

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(async () => {
  expect(harness.provider.refundCalls).toEqual([]);
  await harness.close();
});

const money = (minor: number) => moneyFormatter({ locale: 'en-AU', currency: 'AUD' })(minor);
const office = { actor: 'office' };
const PROCESSING = 'We are waiting for the card payment provider to confirm your payment';

const liveEvent = () => addCardEvent(harness);
const bankRegistration = (event: EventRecord, email: string) => registerByBank(harness, event, { name: 'Bank Payer', email });

/**
 * A pay-now claim `ageMs` old whose session the provider opened but we never recorded (the request
 * died between the two): the row as such a request leaves it, and the provider session it opened.
 */
async function claimWithoutSession(registrationId: string, ageMs: number): Promise<{ checkoutId: string; sessionId: string }> {
  const started = await startExistingRegistrationCheckout(harness.ctx, { registrationId });
  const row = await harness.tdb.db('checkout_sessions').where({ id: started.checkoutId }).first<{ provider_session_id: string }>();
  await harness.tdb.db.raw('UPDATE checkout_sessions SET provider_session_id = NULL, provider_url = NULL, created_at = ? WHERE id = ?', [
    new Date(harness.ctx.clock.now().getTime() - ageMs),
    started.checkoutId,
  ]);
  return { checkoutId: started.checkoutId, sessionId: row.provider_session_id };
}

async function pages(registrationId: string): Promise<{ registration: string; payStatus: number; pay: string }> {
  const secret = harness.ctx.config.authSecret;
  const registration = await (await fetch(`${harness.server.url}${registrationPath(secret, registrationId, 1)}`)).text();
  const payPage = await fetch(`${harness.server.url}${payNowPath(secret, registrationId, 1)}`);
  return { registration, payStatus: payPage.status, pay: await payPage.text() };
}

const lastConfirmationTo = async (email: string) =>
  (await queuedMessages(harness.ctx, 'registration-confirmation')).filter((m) => m.to.includes(email)).at(-1);

const partPayment = (registration: string) => ({ registration, amountMinor: 5000, method: 'cash' as const, partial: true, ...office });

describe('a pay-now claim abandoned before its provider session was recorded', () => {
  it('past its lease it is no card payment in flight: the pages offer payment, a resent confirmation asks for it, the office may record a part-payment, and a cancel says no card payment may arrive', async () => {
    const event = await liveEvent();
    const email = 'abandoned-claim@example.org';
    const id = await bankRegistration(event, email);
    await claimWithoutSession(id, OPENING_LEASE_MS);

    const seen = await pages(id);
    expect(seen.registration).toContain('Awaiting payment');
    expect(seen.registration).not.toContain('Payment processing');
    expect(seen.registration).not.toContain(PROCESSING);
    expect(seen.registration).toContain('id="pay-now"');
    expect(seen.payStatus).toBe(200);
    expect(seen.pay).not.toContain(PROCESSING);

    await resendRegistrationMail(harness.ctx, { registration: id, ...office });
    const resent = await lastConfirmationTo(email);
    expect(resent?.text).toContain('please pay $120.00 to confirm it');
    expect(resent?.text).not.toContain('A card payment for it is being processed');

    expect(await markRegistrationPaid(harness.ctx, partPayment(id), money)).toMatchObject({ status: 'PENDING', recordedMinor: 5000, balanceMinor: 7000 });
    expect(await harness.tdb.db('registration_payments').where({ registration_id: id })).toHaveLength(1);

    const cancelled = await bankRegistration(event, 'abandoned-then-cancelled@example.org');
    await claimWithoutSession(cancelled, OPENING_LEASE_MS);
    expect(await cancelRegistration(harness.ctx, { registration: cancelled, ...office })).toMatchObject({ cardPaymentMayArrive: false });
  });

  it('within its lease it still counts as in flight (its request may yet hand the page out): the pages say processing, a resent confirmation asks for nothing, a part-payment is refused, and a cancel says a card payment may arrive', async () => {
    const event = await liveEvent();
    const email = 'opening-claim@example.org';
    const id = await bankRegistration(event, email);
    await claimWithoutSession(id, OPENING_LEASE_MS - 1_000);

    const seen = await pages(id);
    expect(seen.registration).toContain('Payment processing');
    expect(seen.registration).not.toContain('id="pay-now"');
    expect(seen.payStatus).toBe(409);
    expect(seen.pay).toContain(PROCESSING);

    await resendRegistrationMail(harness.ctx, { registration: id, ...office });
    const resent = await lastConfirmationTo(email);
    expect(resent?.text).toContain('A card payment for it is being processed');
    expect(resent?.text).not.toContain('please pay');

    await expect(markRegistrationPaid(harness.ctx, partPayment(id), money)).rejects.toMatchObject({
      code: 'not_markable',
      message: expect.stringContaining('may still be paid'),
    });
    expect(await harness.tdb.db('registration_payments').where({ registration_id: id })).toEqual([]);

    const cancelled = await bankRegistration(event, 'opening-then-cancelled@example.org');
    await claimWithoutSession(cancelled, OPENING_LEASE_MS - 1_000);
    expect(await cancelRegistration(harness.ctx, { registration: cancelled, ...office })).toMatchObject({ cardPaymentMayArrive: true });
  });

  it('a payment that does arrive for its row (the provider opened the session, only our recording was lost) is still completed by the webhook, found by our checkout id', async () => {
    const event = await liveEvent();
    const id = await bankRegistration(event, 'abandoned-but-paid@example.org');
    const claim = await claimWithoutSession(id, OPENING_LEASE_MS + 60_000);

    const delivered = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', claim.sessionId));

    expect(delivered.status).toBe(200);
    expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'completed' });
    const paymentIntent = harness.provider.sessions.get(claim.sessionId)?.payment_intent;
    // The session is recorded on the row as it completes, so the payer's return page finds it.
    expect(await harness.tdb.db('checkout_sessions').where({ id: claim.checkoutId }).first()).toMatchObject({
      status: 'COMPLETED',
      payment_intent_id: paymentIntent,
      provider_session_id: claim.sessionId,
    });
    const success = await fetch(`${harness.server.url}/events/${event.slug}/success?session_id=${claim.sessionId}`);
    expect(await success.text()).toContain('Payment received');
    expect(await harness.tdb.db('registrations').where({ id }).first()).toMatchObject({
      status: 'PAID',
      payment_method: 'card',
      payment_intent_id: paymentIntent,
    });
    expect(await harness.tdb.db('operations_alerts').where({ checkout_session_id: claim.checkoutId })).toEqual([]);
  });
});
