import type { ProviderEvent } from './map.js';

/**
 * Checks the provider's signature over the raw body with the webhook signing
 * secret, using the provider package's own verifier (HMAC-SHA256 over
 * "<t>.<body>", constant-time compare, 5-minute tolerance). Only a verified
 * body is parsed. Freshness is judged against real time, not the app clock:
 * it is a property of the delivery on the wire, signed with the provider's clock.
 */

export type VerifiedDelivery = { ok: true; event: ProviderEvent } | { ok: false; problem: 'invalid_signature' | 'invalid_payload' };

export async function verifyWebhookDelivery(
  rawBody: Buffer,
  signatureHeader: string | string[] | undefined,
  secret: string,
): Promise<VerifiedDelivery> {
  if (typeof signatureHeader !== 'string' || signatureHeader.length === 0) return { ok: false, problem: 'invalid_signature' };
  const { default: Stripe } = await import('stripe');
  let verified: unknown;
  try {
    // Verifies first and parses only a verified body.
    verified = Stripe.webhooks.constructEvent(rawBody, signatureHeader, secret);
  } catch (error) {
    return { ok: false, problem: error instanceof Stripe.errors.StripeSignatureVerificationError ? 'invalid_signature' : 'invalid_payload' };
  }
  const event = toProviderEvent(verified);
  return event ? { ok: true, event } : { ok: false, problem: 'invalid_payload' };
}

function toProviderEvent(parsed: unknown): ProviderEvent | undefined {
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { id, type, data } = parsed as Record<string, unknown>;
  if (typeof id !== 'string' || typeof type !== 'string' || typeof data !== 'object' || data === null) return undefined;
  return { id, type, data: { object: (data as { object?: unknown }).object } };
}
