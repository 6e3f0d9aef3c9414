import type { FieldCipher } from '../crypto/field-cipher.js';
import type { AttendeeChoice, PricedRegistration } from '../registrations/pricing.js';
import type { RegistrationContact } from '../registrations/registrations.js';
import type { RegistrationAnswers } from '../registrations/answers.js';
import type { AddonPick } from '../registrations/addons.js';
import type { Schedule } from '../registrations/deposits.js';

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
  /** The church-local day (yyyy-MM-dd) whose prices it was priced at, when the checkout was created (absent in older payloads). */
  pricedOn?: string;
  /** The code it uses (discount_codes.id); its effect is in `priced`. */
  codeId?: string;
  /** Per-registration add-ons (each attendee's are on the attendee); their prices are in `priced`. */
  addons?: AddonPick[];
  /** The waiting-list offer this checkout claims when it is paid. */
  waitlistOffer?: { entryId: string; offerSeq: number };
  /** Validated answers to the event's questions (absent in payloads staged before questions existed). */
  answers?: RegistrationAnswers;
  /** Paid in parts: the schedule fixed now; the checkout charges its deposit (net_minor) and the card fee on it, `priced` has no fee. */
  schedule?: Schedule;
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
 * How long after its checkout was created a delayed payment the provider still reports as settling is
 * waited for, extension after extension. The provider gives SEPA Direct Debit, the slowest of its debits
 * (ACH about 4 business days, Bacs and BECS about 3), up to 14 business days to succeed or fail: about
 * 22 calendar days over the year-end bank holidays. 30 days covers it with a week to spare; a payment
 * settling later still ends kept with its alert, never silently.
 */
export const DELAYED_PAYMENT_LIMIT_MS = 30 * 24 * 60 * 60_000;
/** Reconcile extends a checkout still settling at the provider again once its expiry is this close. */
export const DELAYED_PAYMENT_RENEW_WITHIN_MS = 3 * 24 * 60 * 60_000;

/**
 * The expiry an extension gives a delayed payment's checkout: 14 days on, but never past its limit
 * (DELAYED_PAYMENT_LIMIT_MS after creation) and never earlier than the expiry it already has.
 */
export function delayedPaymentExpiry(checkout: { created_at: Date; expires_at: Date }, now: Date): Date {
  const extended = Math.min(now.getTime() + DELAYED_PAYMENT_EXTENSION_MS, checkout.created_at.getTime() + DELAYED_PAYMENT_LIMIT_MS);
  return new Date(Math.max(extended, checkout.expires_at.getTime()));
}
/**
 * An EXPIRED checkout keeps its staged payload this long after its expiry: the
 * provider redelivers a webhook for up to 3 days, and a payment it confirms in
 * that time is honoured rather than left without a registration.
 */
export const PAYLOAD_KEPT_AFTER_EXPIRY_MS = 72 * 60 * 60_000;
