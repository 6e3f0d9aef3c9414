import crypto from 'node:crypto';
import type { AppConfig } from '../config/types.js';
import { AppError } from '../errors.js';

/**
 * Links a registrant follows from an email or the success page. Tokens are
 * HMAC-SHA256 of the registration id under AUTH_SECRET; the base URL comes only
 * from configuration (AUTH_URL, else APP_URL), never from a request's headers,
 * so a forged Host or Origin cannot redirect anyone.
 */

export function registrationToken(authSecret: string, registrationId: string): string {
  return crypto.createHmac('sha256', authSecret).update(registrationId).digest('hex');
}

/** Constant-time check of a token from a link. */
export function verifyRegistrationToken(authSecret: string, registrationId: string, token: string): boolean {
  const expected = Buffer.from(registrationToken(authSecret, registrationId), 'utf8');
  const given = Buffer.from(token, 'utf8');
  if (given.length !== expected.length) return false;
  return crypto.timingSafeEqual(given, expected);
}

export function publicBaseUrl(config: Pick<AppConfig, 'authUrl' | 'appUrl'>): string {
  const base = config.authUrl ?? config.appUrl;
  if (!base) {
    throw new AppError('base_url_missing', 'the public URL of the app is not configured, so no link can be built', {
      suggestion: 'set AUTH_URL (or APP_URL) to the public https:// address of the app',
    });
  }
  return base.replace(/\/+$/, '');
}

type LinkConfig = Pick<AppConfig, 'authUrl' | 'appUrl' | 'authSecret'>;

/** The pay-now page: GET shows the amount, POST starts the card checkout. */
export function payNowUrl(config: LinkConfig, registrationId: string): string {
  return `${registrationPath(config, registrationId)}/pay?token=${registrationToken(config.authSecret, registrationId)}`;
}

/** The registration's own page: status, bank-transfer details, pay-now button. */
export function registrationUrl(config: LinkConfig, registrationId: string): string {
  return `${registrationPath(config, registrationId)}?token=${registrationToken(config.authSecret, registrationId)}`;
}

export const CHECKOUT_REF_QUERY = 'ref';

/**
 * Where the provider sends a payer who leaves its page of a new registration's checkout: the event page,
 * naming the checkout, so the page can say what became of it (src/http/cancelled-checkout.ts).
 */
export function cancelledCheckoutUrl(config: Pick<AppConfig, 'authUrl' | 'appUrl'>, slug: string, checkoutId: string): string {
  return `${publicBaseUrl(config)}/events/${encodeURIComponent(slug)}?checkout=cancelled&${CHECKOUT_REF_QUERY}=${encodeURIComponent(checkoutId)}`;
}

/** Card payment needs both the event's online-payment toggle and a configured provider. */
export function cardPaymentPossible(config: Pick<AppConfig, 'payments'>, event: { online_payment: boolean }): boolean {
  return event.online_payment && Boolean(config.payments);
}

function registrationPath(config: LinkConfig, registrationId: string): string {
  return `${publicBaseUrl(config)}/registrations/${encodeURIComponent(registrationId)}`;
}
