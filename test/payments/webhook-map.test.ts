import { describe, expect, it } from 'vitest';
import { mapWebhookEvent, type ProviderEvent } from '../../src/payments/webhook/map.js';
import { buildProviderEvent, providerFixture } from '../support/provider-fixtures.js';
import { completedSession, createdDispute, refundedCharge } from '../support/webhook-events.js';

const CHECKOUT_ID = '5d0f3c8e-8a8b-4c57-9a57-5e8c1b2f0a11';
const asEvent = (type: string, object: Record<string, unknown>) => buildProviderEvent(type, object) as unknown as ProviderEvent;
const session = (overrides: Partial<Parameters<typeof completedSession>[0]> = {}) =>
  completedSession({ providerSessionId: 'cs_test_map', checkoutId: CHECKOUT_ID, amountTotal: 12241, paymentIntentId: 'pi_test_map', ...overrides });

describe('provider event → domain action (pure)', () => {
  it('checkout.session.completed with payment_status paid → complete, with amount, currency, PaymentIntent and our id', () => {
    expect(mapWebhookEvent(asEvent('checkout.session.completed', session()))).toEqual({
      kind: 'complete',
      providerSessionId: 'cs_test_map',
      ids: { checkoutId: CHECKOUT_ID },
      paymentIntentId: 'pi_test_map',
      amountTotal: 12241,
      currency: 'aud',
    });
  });

  it('checkout.session.completed with payment_status unpaid → extend the expiry', () => {
    expect(mapWebhookEvent(asEvent('checkout.session.completed', session({ paymentStatus: 'unpaid' })))).toMatchObject({ kind: 'extend' });
  });

  it('checkout.session.completed with no_payment_required → complete (the amount check then decides)', () => {
    const action = mapWebhookEvent(asEvent('checkout.session.completed', session({ paymentStatus: 'no_payment_required', amountTotal: 0 })));
    expect(action).toMatchObject({ kind: 'complete', amountTotal: 0 });
  });

  it('async_payment_succeeded → complete; async_payment_failed → expire', () => {
    expect(mapWebhookEvent(asEvent('checkout.session.async_payment_succeeded', session()))).toMatchObject({ kind: 'complete' });
    expect(mapWebhookEvent(asEvent('checkout.session.async_payment_failed', session({ paymentStatus: 'unpaid' })))).toMatchObject({
      kind: 'expire',
      providerSessionId: 'cs_test_map',
    });
  });

  it('an expanded PaymentIntent object is read by its id', () => {
    const expanded = { ...session(), payment_intent: { ...providerFixture('payment_intent'), id: 'pi_expanded' } };
    expect(mapWebhookEvent(asEvent('checkout.session.completed', expanded))).toMatchObject({ paymentIntentId: 'pi_expanded' });
  });

  it('metadata ids that are not ours in shape are dropped, never queried with', () => {
    const odd = { ...session(), metadata: { eventops_checkout_id: "1' OR '1'='1", eventops_registration_id: 'nope' } };
    expect(mapWebhookEvent(asEvent('checkout.session.completed', odd))).toMatchObject({ ids: {} });
  });

  it('charge.refunded: refunded in full → reverse by PaymentIntent; partly → partial_refund alert only', () => {
    expect(mapWebhookEvent(asEvent('charge.refunded', refundedCharge({ paymentIntentId: 'pi_r', amount: 5000 })))).toMatchObject({
      kind: 'reverse',
      reversal: 'refund',
      paymentIntentId: 'pi_r',
      amountMinor: 5000,
    });
    expect(
      mapWebhookEvent(asEvent('charge.refunded', refundedCharge({ paymentIntentId: 'pi_r', amount: 5000, amountRefunded: 1000 }))),
    ).toMatchObject({ kind: 'partial_refund', paymentIntentId: 'pi_r', amountMinor: 5000, amountRefundedMinor: 1000 });
  });

  it('charge.dispute.created → reverse by PaymentIntent', () => {
    expect(mapWebhookEvent(asEvent('charge.dispute.created', createdDispute({ paymentIntentId: 'pi_d', amount: 700 })))).toMatchObject({
      kind: 'reverse',
      reversal: 'dispute',
      paymentIntentId: 'pi_d',
    });
  });

  it('a dispute that takes no money: an inquiry (warning_*) or a dispute won → an alert only; a lost dispute or a closed inquiry → ignore', () => {
    const dispute = (status: string) => ({ ...createdDispute({ paymentIntentId: 'pi_d', amount: 700 }), status });
    expect(mapWebhookEvent(asEvent('charge.dispute.created', dispute('warning_needs_response')))).toMatchObject({
      kind: 'dispute_notice',
      notice: 'inquiry',
      paymentIntentId: 'pi_d',
      amountMinor: 700,
    });
    expect(mapWebhookEvent(asEvent('charge.dispute.created', dispute('needs_response')))).toMatchObject({ kind: 'reverse', reversal: 'dispute' });
    expect(mapWebhookEvent(asEvent('charge.dispute.closed', dispute('won')))).toMatchObject({ kind: 'dispute_notice', notice: 'won', paymentIntentId: 'pi_d' });
    for (const status of ['lost', 'warning_closed']) {
      expect(mapWebhookEvent(asEvent('charge.dispute.closed', dispute(status)))).toMatchObject({ kind: 'ignore' });
    }
  });

  it('refund.failed → an alert for the office, by PaymentIntent; one without a PaymentIntent is not ours', () => {
    const refund = { ...providerFixture('refund'), id: 're_f', amount: 700, payment_intent: 'pi_d', status: 'failed', failure_reason: 'lost_or_stolen_card' };
    expect(mapWebhookEvent(asEvent('refund.failed', refund))).toEqual({
      kind: 'refund_failed',
      paymentIntentId: 'pi_d',
      ids: {},
      refundId: 're_f',
      amountMinor: 700,
      failureReason: 'lost_or_stolen_card',
    });
    expect(mapWebhookEvent(asEvent('refund.failed', { ...refund, payment_intent: null }))).toMatchObject({ kind: 'ignore' });
  });

  it('charge.dispute.funds_withdrawn (an inquiry escalated to a chargeback, or a chargeback) → reverse by PaymentIntent, whatever the status says', () => {
    const escalated = { ...createdDispute({ paymentIntentId: 'pi_d', amount: 700 }), status: 'needs_response' };
    expect(mapWebhookEvent(asEvent('charge.dispute.funds_withdrawn', escalated))).toMatchObject({ kind: 'reverse', reversal: 'dispute', paymentIntentId: 'pi_d', amountMinor: 700 });
    expect(mapWebhookEvent(asEvent('charge.dispute.funds_withdrawn', { ...escalated, status: 'under_review' }))).toMatchObject({ kind: 'reverse' });
  });

  it('anything else, or an object of an unexpected shape, → ignore', () => {
    const fixture = providerFixture('event') as unknown as ProviderEvent;
    expect(mapWebhookEvent(fixture)).toMatchObject({ kind: 'ignore' });
    expect(mapWebhookEvent(asEvent('checkout.session.completed', providerFixture('charge')))).toMatchObject({ kind: 'ignore' });
    expect(mapWebhookEvent(asEvent('charge.dispute.created', { ...createdDispute({ paymentIntentId: 'x', amount: 1 }), payment_intent: null }))).toMatchObject({
      kind: 'ignore',
    });
  });
});
