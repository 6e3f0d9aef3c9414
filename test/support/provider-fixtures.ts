import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PROVIDER_API_VERSION } from '../../src/payments/provider.js';
import { ROOT } from './cli.js';

/**
 * The provider's published example objects (test/fixtures/provider/stripe-objects.json,
 * where their source and licence are noted), as the starting shape of every provider
 * object and webhook payload a test builds. Builders override only the fields
 * that matter, so what our code parses looks like what the provider sends.
 */

export type ProviderObject = Record<string, unknown>;
type FixtureName = 'charge' | 'checkout.session' | 'dispute' | 'event' | 'line_item' | 'payment_intent' | 'refund' | 'webhook_endpoint';

// From the checkout root, so the path also holds when this file runs compiled (soak/.build, bench/.build).
const FIXTURES_FILE = path.join(ROOT, 'test/fixtures/provider/stripe-objects.json');

let loaded: Record<FixtureName, ProviderObject> | undefined;

/** A fresh deep copy of one published example object. */
export function providerFixture(name: FixtureName): ProviderObject {
  loaded ??= JSON.parse(fs.readFileSync(FIXTURES_FILE, 'utf8')) as Record<FixtureName, ProviderObject>;
  const fixture = loaded[name];
  if (!fixture) throw new Error(`no provider fixture "${name}" in ${FIXTURES_FILE}`);
  return structuredClone(fixture);
}

/** An id in the provider's style: prefix, underscore, 24 random alphanumerics. */
export function providerId(prefix: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = crypto.randomBytes(24);
  return `${prefix}_${Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('')}`;
}

const unixSeconds = (date: Date = new Date()) => Math.floor(date.getTime() / 1000);

/** A Checkout Session as returned on create: open, unpaid, no PaymentIntent yet. */
export function buildCheckoutSession(overrides: ProviderObject = {}): ProviderObject {
  const id = (overrides.id as string | undefined) ?? providerId('cs_test');
  return {
    ...providerFixture('checkout.session'),
    id,
    created: unixSeconds(),
    livemode: false,
    mode: 'payment',
    status: 'open',
    payment_status: 'unpaid',
    payment_intent: null,
    // The fixture's currency conversion, shipping and totals describe another order; ours has none of them.
    currency_conversion: null,
    shipping_cost: null,
    shipping_address_collection: null,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    customer_details: null,
    metadata: {},
    ...overrides,
  };
}

/** A charge of a completed session's PaymentIntent; our ids travel in its metadata (copied from payment_intent_data). */
export function buildCharge(overrides: ProviderObject = {}): ProviderObject {
  const amount = (overrides.amount as number | undefined) ?? 1000;
  return {
    ...providerFixture('charge'),
    id: providerId('ch_test'),
    created: unixSeconds(),
    amount,
    amount_captured: amount,
    amount_refunded: 0,
    captured: true,
    paid: true,
    refunded: false,
    disputed: false,
    status: 'succeeded',
    payment_intent: providerId('pi_test'),
    metadata: {},
    ...overrides,
  };
}

/** A charge fully refunded (by a person in the provider's dashboard; we never refund). */
export function buildRefundedCharge(overrides: ProviderObject = {}): ProviderObject {
  const base = buildCharge(overrides);
  const amount = base.amount as number;
  return { ...base, amount_refunded: amount, refunded: true, ...overrides };
}

export function buildDispute(overrides: ProviderObject = {}): ProviderObject {
  return {
    ...providerFixture('dispute'),
    id: providerId('dp_test'),
    created: unixSeconds(),
    charge: providerId('ch_test'),
    payment_intent: providerId('pi_test'),
    status: 'needs_response',
    ...overrides,
  };
}

export function buildPaymentIntent(overrides: ProviderObject = {}): ProviderObject {
  return { ...providerFixture('payment_intent'), id: providerId('pi_test'), created: unixSeconds(), metadata: {}, ...overrides };
}

/** A webhook event envelope around `object`, pinned to our API version. */
export function buildProviderEvent(type: string, object: ProviderObject, overrides: ProviderObject = {}): ProviderObject {
  return {
    ...providerFixture('event'),
    id: providerId('evt_test'),
    api_version: PROVIDER_API_VERSION,
    created: unixSeconds(),
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type,
    data: { object },
    ...overrides,
  };
}
