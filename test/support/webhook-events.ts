import crypto from 'node:crypto';
import Stripe from 'stripe';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import type { AppContext } from '../../src/context.js';
import { priceRegistration, type CardFeeRate } from '../../src/registrations/pricing.js';
import { CHECKOUT_EXPIRY_MS, encryptStagedRegistration, type StagedRegistration } from '../../src/payments/staging.js';
import { insertCheckoutSession } from './factories.js';
import {
  buildCharge,
  buildCheckoutSession,
  buildDispute,
  buildProviderEvent,
  providerId,
  type ProviderObject,
} from './provider-fixtures.js';

/**
 * Signed webhook deliveries as the provider sends them: objects built from its
 * published examples (only the fields a test needs overridden), wrapped in an
 * event envelope, signed over the exact body with the package's own test-header
 * helper, and POSTed to a running server.
 */

export const TEST_WEBHOOK_SECRET = 'whsec_eventops_test_signing_secret';

/**
 * Environment that turns card payments on for a test context or server. Its provider address refuses every
 * connection (port 9 on this machine), so code that asks the provider (the sweep, the pay-now page) finds it
 * out of reach instead of calling the real one.
 */
export const PAYMENTS_ENV = { PSP_SECRET_KEY: 'sk_test_eventops', PSP_WEBHOOK_SECRET: TEST_WEBHOOK_SECRET, PSP_API_BASE: 'http://127.0.0.1:9' };

export interface SessionOptions {
  /** Our checkout_sessions.id, carried in metadata; omit to test the provider-session-id fallback. */
  checkoutId?: string;
  providerSessionId: string;
  eventId?: string;
  registrationId?: string;
  amountTotal: number;
  paymentStatus?: 'paid' | 'unpaid' | 'no_payment_required';
  paymentIntentId?: string | null;
  currency?: string;
}

/** A Checkout Session at completion: complete, with its PaymentIntent and our metadata. */
export function completedSession(options: SessionOptions): ProviderObject {
  const metadata: Record<string, string> = {};
  if (options.checkoutId) metadata.eventops_checkout_id = options.checkoutId;
  if (options.eventId) metadata.eventops_event_id = options.eventId;
  if (options.registrationId) metadata.eventops_registration_id = options.registrationId;
  return buildCheckoutSession({
    id: options.providerSessionId,
    status: 'complete',
    payment_status: options.paymentStatus ?? 'paid',
    amount_subtotal: options.amountTotal,
    amount_total: options.amountTotal,
    currency: options.currency ?? 'aud',
    payment_intent: options.paymentIntentId === undefined ? providerId('pi_test') : options.paymentIntentId,
    metadata,
  });
}

export function refundedCharge(options: { paymentIntentId: string; amount: number; amountRefunded?: number; metadata?: Record<string, string> }): ProviderObject {
  const refunded = options.amountRefunded ?? options.amount;
  return buildCharge({
    amount: options.amount,
    amount_refunded: refunded,
    refunded: refunded >= options.amount,
    payment_intent: options.paymentIntentId,
    metadata: options.metadata ?? {},
  });
}

export function createdDispute(options: { paymentIntentId: string; amount: number }): ProviderObject {
  return buildDispute({ amount: options.amount, payment_intent: options.paymentIntentId });
}

export interface SignedDelivery {
  eventId: string;
  body: string;
  signature: string;
}

/** An event around `object`, signed with `secret` at `timestamp` (unix seconds, default now). */
export function signedDelivery(
  type: string,
  object: ProviderObject,
  options: { eventId?: string; secret?: string; timestamp?: number } = {},
): SignedDelivery {
  const event = buildProviderEvent(type, object, options.eventId ? { id: options.eventId } : {});
  const body = JSON.stringify(event, null, 2);
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload: body,
    secret: options.secret ?? TEST_WEBHOOK_SECRET,
    timestamp: options.timestamp,
  });
  return { eventId: event.id as string, body, signature };
}

export interface WebhookResponse {
  status: number;
  body: unknown;
}

/** POSTs a delivery as the provider does; `signature: null` sends none. */
export async function postWebhook(
  baseUrl: string,
  delivery: { body: string; signature: string | null },
  options: { contentType?: string } = {},
): Promise<WebhookResponse> {
  const headers: Record<string, string> = { 'content-type': options.contentType ?? 'application/json; charset=utf-8' };
  if (delivery.signature !== null) headers['stripe-signature'] = delivery.signature;
  const response = await fetch(`${baseUrl}/api/stripe/webhook`, { method: 'POST', headers, body: delivery.body });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: kept as text for the assertion message.
  }
  return { status: response.status, body };
}

// ---- Staging rows and queued mail, as the checkout starters and the mail queue leave them ----

export interface StagedCheckout {
  checkoutId: string;
  providerSessionId: string;
  /** What the provider must charge: net + surcharge. */
  amount: number;
  email: string;
}

/**
 * An OPEN new-registration checkout staged as startEventCheckout leaves it:
 * the priced registration encrypted in payload_enc, net and surcharge snapshotted.
 */
export async function stageNewRegistrationCheckout(
  ctx: Pick<AppContext, 'db' | 'cipher' | 'clock'>,
  event: { id: string; pricing?: EventPricing },
  options: { attendees?: number; cardFee?: CardFeeRate; email?: string; name?: string } = {},
): Promise<StagedCheckout> {
  const pricing = event.pricing ?? DEFAULT_PRICING;
  const email = options.email ?? `payer-${crypto.randomBytes(3).toString('hex')}@example.org`;
  const name = options.name ?? 'Jordan Payer';
  const attendees = Array.from({ length: options.attendees ?? 1 }, (_, i) => ({ name: `${name} ${i + 1}`, tier: 'adult' }));
  const priced = priceRegistration(pricing, { attendees, family: false }, options.cardFee ? { cardFee: options.cardFee } : {});
  const staged: StagedRegistration = { version: 1, contact: { name, email }, attendees, family: false, priced };
  const providerSessionId = providerId('cs_test');
  const { id } = await insertCheckoutSession(ctx.db, ctx.cipher, event.id, {
    payload_enc: encryptStagedRegistration(ctx.cipher, staged),
    net_minor: priced.net,
    surcharge_minor: priced.surcharge,
    provider_session_id: providerSessionId,
    expires_at: new Date(ctx.clock.now().getTime() + CHECKOUT_EXPIRY_MS),
  });
  return { checkoutId: id, providerSessionId, amount: priced.total, email };
}

/** An OPEN pay-now checkout for an existing registration, as startExistingRegistrationCheckout leaves it. */
export async function stagePayNowCheckout(
  ctx: Pick<AppContext, 'db' | 'cipher' | 'clock'>,
  eventId: string,
  registration: { id: string; net: number; surcharge?: number },
): Promise<StagedCheckout & { registrationId: string }> {
  const providerSessionId = providerId('cs_test');
  const surcharge = registration.surcharge ?? 0;
  const { id } = await insertCheckoutSession(ctx.db, ctx.cipher, eventId, {
    payload_enc: null,
    registration_id: registration.id,
    net_minor: registration.net,
    surcharge_minor: surcharge,
    provider_session_id: providerSessionId,
    expires_at: new Date(ctx.clock.now().getTime() + CHECKOUT_EXPIRY_MS),
  });
  return { checkoutId: id, providerSessionId, amount: registration.net + surcharge, email: '', registrationId: registration.id };
}

export const DEFAULT_PRICING: EventPricing = { tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] };

export interface QueuedMessage {
  id: number;
  kind: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
}

/** Every queued message, decrypted, oldest first. */
export async function queuedMessages(ctx: Pick<AppContext, 'db' | 'cipher'>, kind?: string): Promise<QueuedMessage[]> {
  const query = ctx.db('queued_mail').select<Array<{ id: number; kind: string; message_enc: string }>>('id', 'kind', 'message_enc').orderBy('id');
  if (kind) query.where({ kind });
  return (await query).map((row) => {
    const message = JSON.parse(ctx.cipher.decrypt(row.message_enc)) as Omit<QueuedMessage, 'id' | 'kind'>;
    return { id: row.id, kind: row.kind, to: message.to, subject: message.subject, text: message.text, html: message.html };
  });
}
