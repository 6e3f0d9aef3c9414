import { describe, expect, it } from 'vitest';
import { decide, parseProviderSession, type OurCheckoutView, type ProviderSessionView } from '../../src/payments/reconcile/compare.js';
import { buildCharge, buildCheckoutSession, buildPaymentIntent } from '../support/provider-fixtures.js';

// The comparison table of reconcile, row by row, as a pure decision over fixture-shaped provider objects.

const NOW = new Date('2026-11-22T12:00:00Z');
const CHECKOUT_ID = '4f1c2b7e-5d6a-4e8f-9a0b-1c2d3e4f5a6b';

function session(overrides: Record<string, unknown> = {}, charge?: Record<string, unknown>): ProviderSessionView {
  const paymentIntent = charge ? buildPaymentIntent({ latest_charge: buildCharge({ amount: 12000, ...charge }) }) : null;
  const view = parseProviderSession(
    buildCheckoutSession({ amount_total: 12000, currency: 'aud', metadata: { eventops_checkout_id: CHECKOUT_ID }, payment_intent: paymentIntent, ...overrides }),
  );
  if (!view) throw new Error('fixture did not parse');
  return view;
}
const paid = (charge: Record<string, unknown> = {}) => session({ status: 'complete', payment_status: 'paid' }, charge);
const ours = (overrides: Partial<OurCheckoutView> = {}): OurCheckoutView => ({
  id: CHECKOUT_ID,
  status: 'OPEN',
  createdAt: new Date(NOW.getTime() - 32 * 60_000),
  expiresAt: new Date(NOW.getTime() - 60_000),
  kept: true,
  confirmedUnpaid: false,
  expectedMinor: 12000,
  registrationStatus: null,
  ...overrides,
});

describe('reconcile decisions', () => {
  it('paid at the provider, OPEN or EXPIRED here (kept or scrubbed): complete through the webhook function', () => {
    expect(decide(paid(), ours(), NOW).action).toBe('complete');
    expect(decide(paid(), ours({ status: 'EXPIRED' }), NOW).action).toBe('complete');
    expect(decide(paid(), ours({ status: 'EXPIRED', kept: false }), NOW).action).toBe('complete');
    expect(decide(paid(), undefined, NOW).action).toBe('complete');
    // No row, already alerted as unknown_checkout (by the webhook or an earlier run): nothing more.
    expect(decide(paid(), undefined, NOW, { unknownCheckoutAlerted: true }).action).toBe('none');
  });

  it('expired or unpaid at the provider, OPEN past expiry here: confirmed unpaid, expiring the provider session when still open', () => {
    expect(decide(session({ status: 'expired' }), ours(), NOW).action).toBe('confirm_unpaid');
    expect(decide(session({ status: 'expired' }), ours({ status: 'EXPIRED' }), NOW).action).toBe('confirm_unpaid');
    expect(decide(session({ status: 'open' }), ours(), NOW).action).toBe('expire_at_provider');
    expect(decide(session({ status: 'open' }), ours({ expiresAt: new Date(NOW.getTime() + 60_000) }), NOW).action).toBe('none');
    expect(decide(session({ status: 'expired' }), ours({ status: 'EXPIRED', kept: false, confirmedUnpaid: true }), NOW).action).toBe('none');
  });

  it('scrubbed here after its 72 hours with no word from the provider: a payment is completed (kept with an alert), an unpaid session recorded as such, one still open expired there; nothing once confirmed', () => {
    const scrubbed = ours({ status: 'EXPIRED', kept: false });
    expect(decide(paid(), scrubbed, NOW).action).toBe('complete');
    expect(decide(session({ status: 'expired' }), scrubbed, NOW).action).toBe('confirm_unpaid');
    expect(decide(session({ status: 'open' }), scrubbed, NOW).action).toBe('expire_at_provider');
    // A delayed payment still settling cannot be extended without its payload: read again until it settles.
    expect(decide(session({ status: 'complete', payment_status: 'unpaid' }), scrubbed, NOW).action).toBe('none');
    const confirmed = ours({ status: 'EXPIRED', kept: false, confirmedUnpaid: true });
    expect(decide(session({ status: 'expired' }), confirmed, NOW).action).toBe('none');
    expect(decide(session({ status: 'open' }), confirmed, NOW).action).toBe('none');
  });

  it('completed unpaid at the provider (a delayed payment settling), in flight here and not extended: the extension; once extended, nothing until its expiry is near', () => {
    const settling = session({ status: 'complete', payment_status: 'unpaid' });
    expect(decide(settling, ours(), NOW)).toMatchObject({ action: 'extend' });
    expect(decide(settling, ours({ expiresAt: new Date(NOW.getTime() + 60_000) }), NOW).action).toBe('extend');
    expect(decide(settling, ours({ status: 'EXPIRED' }), NOW).action).toBe('extend');
    // Extended (its expiry 14 days after the extension, so at least 14 days after creation): nothing while more than 3 days are left.
    const extendedAt = new Date(NOW.getTime() - 3_600_000);
    const extended = { createdAt: new Date(extendedAt.getTime() - 40 * 60_000), expiresAt: new Date(extendedAt.getTime() + 14 * 86_400_000) };
    expect(decide(settling, ours(extended), NOW).action).toBe('none');
    expect(decide(settling, ours(extended), new Date(extended.expiresAt.getTime() - 3 * 86_400_000)).action).toBe('none');
    // Still settling as its expiry nears, or once it has run out with the payload kept: extended again (a slow SEPA debit).
    expect(decide(settling, ours(extended), new Date(extended.expiresAt.getTime() - 2 * 86_400_000)).action).toBe('extend');
    const ranOut = new Date(extended.expiresAt.getTime() + 86_400_000);
    expect(decide(settling, ours({ ...extended, status: 'EXPIRED' }), ranOut).action).toBe('extend');
    // Never beyond 30 days after the checkout was created.
    const atLimit = { createdAt: extended.createdAt, expiresAt: new Date(extended.createdAt.getTime() + 30 * 86_400_000) };
    expect(decide(settling, ours(atLimit), new Date(atLimit.expiresAt.getTime() - 86_400_000)).action).toBe('none');
    expect(decide(settling, ours({ ...atLimit, status: 'EXPIRED' }), new Date(atLimit.expiresAt.getTime() + 86_400_000)).action).toBe('none');
    // Not in flight: scrubbed, settled, or completed here (that last one is the mismatch alert, as before).
    expect(decide(settling, ours({ status: 'EXPIRED', kept: false }), NOW).action).toBe('none');
    expect(decide(settling, ours({ status: 'UNFULFILLED' }), NOW).action).toBe('none');
    expect(decide(settling, ours({ status: 'COMPLETED', registrationStatus: 'PAID' }), NOW).action).toBe('alert_mismatch');
    // Settled at the provider: an extended checkout is completed like any other.
    expect(decide(paid(), ours(extended), NOW).action).toBe('complete');
  });

  it('a delayed payment that failed at the provider (its PaymentIntent back to requires_payment_method, or canceled), in flight here: confirmed unpaid, extended or not', () => {
    const withIntent = (status: string) =>
      session({ status: 'complete', payment_status: 'unpaid', payment_intent: buildPaymentIntent({ status, latest_charge: null }) });
    const extended = { createdAt: new Date(NOW.getTime() - 2 * 86_400_000), expiresAt: new Date(NOW.getTime() + 12 * 86_400_000) };
    for (const status of ['requires_payment_method', 'canceled']) {
      expect(decide(withIntent(status), ours(), NOW)).toMatchObject({ action: 'confirm_unpaid' });
      expect(decide(withIntent(status), ours(extended), NOW)).toMatchObject({ action: 'confirm_unpaid' });
      expect(decide(withIntent(status), ours({ status: 'EXPIRED' }), NOW)).toMatchObject({ action: 'confirm_unpaid' });
      expect(decide(withIntent(status), ours({ status: 'EXPIRED', kept: false, confirmedUnpaid: true }), NOW).action).toBe('none');
      expect(decide(withIntent(status), ours({ status: 'EXPIRED', kept: false }), NOW).action).toBe('confirm_unpaid');
    }
    // Still settling (or waiting on the payer, as for a bank account being verified): extended as before.
    expect(decide(withIntent('processing'), ours(), NOW).action).toBe('extend');
    expect(decide(withIntent('requires_action'), ours(), NOW).action).toBe('extend');
    expect(decide(withIntent('processing'), ours(extended), NOW).action).toBe('none');
  });

  it('fully refunded or disputed at the provider, PAID here: the reversal; a partial refund or a registration already cancelled: nothing', () => {
    const completed = ours({ status: 'COMPLETED', registrationStatus: 'PAID' });
    expect(decide(paid({ amount_refunded: 12000, refunded: true }), completed, NOW)).toMatchObject({ action: 'reverse', reversal: 'refund' });
    expect(decide(paid({ disputed: true }), completed, NOW)).toMatchObject({ action: 'reverse', reversal: 'dispute' });
    expect(decide(paid({ amount_refunded: 5000 }), completed, NOW).action).toBe('none');
    expect(decide(paid({ amount_refunded: 12000, refunded: true }), ours({ status: 'COMPLETED', registrationStatus: 'CANCELLED' }), NOW).action).toBe('none');
  });

  it('fully refunded or disputed at the provider, kept here without a registration (UNFULFILLED): the reversal webhook\'s alert, until it was raised', () => {
    const kept = ours({ status: 'UNFULFILLED' });
    const refunded = paid({ amount_refunded: 12000, refunded: true });
    expect(decide(refunded, kept, NOW)).toMatchObject({ action: 'reverse', reversal: 'refund' });
    expect(decide(paid({ disputed: true }), kept, NOW)).toMatchObject({ action: 'reverse', reversal: 'dispute' });
    expect(decide(refunded, ours({ status: 'UNFULFILLED', reversalsAlerted: ['refund'] }), NOW).action).toBe('none');
    expect(decide(paid({ disputed: true }), ours({ status: 'UNFULFILLED', reversalsAlerted: ['refund'] }), NOW).action).toBe('reverse');
    expect(decide(paid({ amount_refunded: 5000 }), kept, NOW).action).toBe('none');
    expect(decide(paid(), kept, NOW).action).toBe('none');
    // Registered by hand with the kept payment: the refund cancels that registration, as for a COMPLETED one.
    expect(decide(refunded, ours({ status: 'UNFULFILLED', paymentRegistrationStatus: 'PAID' }), NOW).action).toBe('reverse');
    expect(decide(refunded, ours({ status: 'UNFULFILLED', paymentRegistrationStatus: 'CANCELLED' }), NOW).action).toBe('none');
  });

  it('COMPLETED here with no such session, another amount, or no payment at the provider: a mismatch alert', () => {
    const completed = ours({ status: 'COMPLETED', registrationStatus: 'PAID' });
    expect(decide(undefined, completed, NOW).action).toBe('alert_mismatch');
    expect(decide(session({ status: 'complete', payment_status: 'paid', amount_total: 11999 }), completed, NOW).action).toBe('alert_mismatch');
    expect(decide(session({ status: 'expired' }), completed, NOW).action).toBe('alert_mismatch');
    expect(decide(paid(), completed, NOW).action).toBe('none');
  });

  it('a session without our metadata and no row of ours is another integration\'s: left alone', () => {
    const foreign = parseProviderSession(buildCheckoutSession({ status: 'complete', payment_status: 'paid', amount_total: 500 }));
    expect(decide(foreign, undefined, NOW).action).toBe('none');
  });

  it('one card payment of several, refunded or disputed at the provider: reversed while its ledger row still counts and its registration stands, PAID or still owing; nothing once the row records it or the registration is cancelled', () => {
    const refunded = paid({ amount_refunded: 12000, refunded: true });
    const part = (registrationStatus: OurCheckoutView['registrationStatus'], cardPartReversal: OurCheckoutView['cardPartReversal']) =>
      ours({ status: 'COMPLETED', registrationStatus, cardPartReversal });
    expect(decide(refunded, part('PENDING', null), NOW)).toMatchObject({ action: 'reverse', reversal: 'refund' });
    expect(decide(paid({ disputed: true }), part('PAID', null), NOW)).toMatchObject({ action: 'reverse', reversal: 'dispute' });
    // Recorded already (a registration that paid the amount again is PAID once more): not reported on every run.
    expect(decide(refunded, part('PAID', 'refund'), NOW).action).toBe('none');
    expect(decide(paid({ disputed: true }), part('PENDING', 'dispute'), NOW).action).toBe('none');
    // The registration it alone paid was cancelled for it.
    expect(decide(refunded, part('CANCELLED', null), NOW).action).toBe('none');
    // The whole-total payment kept on the registration: as before, only while PAID.
    expect(decide(refunded, ours({ status: 'COMPLETED', registrationStatus: 'PENDING' }), NOW).action).toBe('none');
  });
});
