import Stripe from 'stripe';
import { PROVIDER_API_VERSION } from '../../src/payments/provider.js';

/**
 * Signed `checkout.session.completed` deliveries for case 2, shaped and sized
 * like the provider's (a complete Checkout Session with our metadata, about
 * 3 KB pretty-printed as the provider sends it). Built here rather than with
 * test/support/provider-fixtures.ts, whose fixture file is located relative
 * to the TypeScript sources and is not where the compiled bench runs.
 */
export interface Delivery {
  body: string;
  signature: string;
}

export interface SessionToComplete {
  checkoutId: string;
  eventId: string;
  providerSessionId: string;
  paymentIntentId: string;
  amount: number;
  email: string;
  name: string;
}

function completedSession(s: SessionToComplete, created: number): Record<string, unknown> {
  return {
    id: s.providerSessionId,
    object: 'checkout.session',
    adaptive_pricing: { enabled: false },
    after_expiration: null,
    allow_promotion_codes: null,
    amount_subtotal: s.amount,
    amount_total: s.amount,
    automatic_tax: { enabled: false, liability: null, provider: null, status: null },
    billing_address_collection: null,
    cancel_url: `https://events.example.org/events/family-camp?checkout=${s.checkoutId}`,
    client_reference_id: s.checkoutId,
    client_secret: null,
    collected_information: { shipping_details: null },
    consent: null,
    consent_collection: null,
    created,
    currency: 'aud',
    currency_conversion: null,
    custom_fields: [],
    custom_text: { after_submit: null, shipping_address: null, submit: null, terms_of_service_acceptance: null },
    customer: null,
    customer_creation: 'if_required',
    customer_details: {
      address: { city: null, country: 'AU', line1: null, line2: null, postal_code: null, state: null },
      email: s.email,
      name: s.name,
      phone: null,
      tax_exempt: 'none',
      tax_ids: [],
    },
    customer_email: s.email,
    discounts: [],
    expires_at: created + 31 * 60,
    invoice: null,
    invoice_creation: { enabled: false, invoice_data: { account_tax_ids: null, custom_fields: null, description: null, footer: null, issuer: null, metadata: {}, rendering_options: null } },
    livemode: false,
    locale: null,
    metadata: { eventops_checkout_id: s.checkoutId, eventops_event_id: s.eventId },
    mode: 'payment',
    origin_context: null,
    payment_intent: s.paymentIntentId,
    payment_link: null,
    payment_method_collection: 'if_required',
    payment_method_configuration_details: { id: 'pmc_1Pbench0000000000000000', parent: null },
    payment_method_options: { card: { request_three_d_secure: 'automatic' } },
    payment_method_types: ['card', 'link'],
    payment_status: 'paid',
    permissions: null,
    phone_number_collection: { enabled: false },
    recovered_from: null,
    saved_payment_method_options: null,
    setup_intent: null,
    shipping_address_collection: null,
    shipping_cost: null,
    shipping_options: [],
    status: 'complete',
    submit_type: 'pay',
    subscription: null,
    success_url: `https://events.example.org/registrations/success?checkout=${s.checkoutId}`,
    total_details: { amount_discount: 0, amount_shipping: 0, amount_tax: 0 },
    ui_mode: 'hosted',
    url: null,
    wallet_options: null,
  };
}

/** Bodies and signatures; signed now, so use them within the provider's 5-minute tolerance. */
export function signDeliveries(sessions: SessionToComplete[], secret: string, firstIndex: number): Delivery[] {
  const created = Math.floor(Date.now() / 1000);
  return sessions.map((session, i) => {
    const event = {
      id: `evt_bench${String(firstIndex + i).padStart(19, '0')}`,
      object: 'event',
      api_version: PROVIDER_API_VERSION,
      created,
      data: { object: completedSession(session, created - 60) },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type: 'checkout.session.completed',
    };
    const body = JSON.stringify(event, null, 2);
    return { body, signature: Stripe.webhooks.generateTestHeaderString({ payload: body, secret, timestamp: created }) };
  });
}
