import type { FieldCipher } from '../crypto/field-cipher.js';
import type { AttendeeChoice, PricedRegistration } from './pricing.js';
import type { RegistrationContact } from './registrations.js';

/**
 * What a new-registration checkout stages (encrypted in checkout_sessions.payload_enc)
 * until the webhook confirms payment: everything needed to create the registration,
 * priced on the server at checkout time. Pay-now stages registration_id instead.
 */
export interface StagedRegistration {
  version: 1;
  contact: RegistrationContact;
  attendees: AttendeeChoice[];
  family: boolean;
  priced: PricedRegistration;
}

export function encryptStagedRegistration(cipher: FieldCipher, staged: StagedRegistration): string {
  return cipher.encrypt(JSON.stringify(staged));
}

export function decryptStagedRegistration(cipher: FieldCipher, payloadEnc: string): StagedRegistration {
  const parsed = JSON.parse(cipher.decrypt(payloadEnc)) as StagedRegistration;
  if (parsed.version !== 1) throw new Error(`unknown staged registration version ${String(parsed.version)}`);
  return parsed;
}

/** Our ids that travel with the provider session and its PaymentIntent (metadata), so reversals map back. */
export interface CheckoutMetadata {
  eventops_checkout_id: string;
  eventops_event_id: string;
  eventops_registration_id?: string;
}

/** A checkout session lives 31 minutes at the provider and in our staging row. */
export const CHECKOUT_EXPIRY_MS = 31 * 60_000;
/** An unpaid (delayed) completion keeps the staging row 14 more days so the sweep leaves it alone. */
export const DELAYED_PAYMENT_EXTENSION_MS = 14 * 24 * 60 * 60_000;
/**
 * An EXPIRED checkout keeps its staged payload this long after its expiry: the
 * provider redelivers a webhook for up to 3 days, and a payment it confirms in
 * that time is honoured rather than left without a registration.
 */
export const PAYLOAD_KEPT_AFTER_EXPIRY_MS = 72 * 60 * 60_000;
