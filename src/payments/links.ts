import crypto from 'node:crypto';
import type { AppConfig } from '../config/types.js';
import { AppError } from '../errors.js';

/**
 * Links a registrant follows from an email or the success page: the registration page and its pay-now page. Their
 * token is HMAC-SHA256 under AUTH_SECRET of the registration id and its link version (registrations.
 * manage_link_version, the version its manage link carries too): raising it (an email change confirmed or undone,
 * `registrations resend --new-link`) revokes every link of the registration at once. The first version signs the
 * id alone, as every token did before versions, so links already emailed keep working. The base URL comes only
 * from configuration (AUTH_URL, else APP_URL), never from a request's headers, so a forged Host or Origin cannot
 * redirect anyone.
 */

/** A new registration's link version (the column's default); its tokens sign the id alone. */
export const FIRST_LINK_VERSION = 1;

export function registrationToken(authSecret: string, registrationId: string, linkVersion: number): string {
  const signed = linkVersion === FIRST_LINK_VERSION ? registrationId : `${registrationId}:v${linkVersion}`;
  return crypto.createHmac('sha256', authSecret).update(signed).digest('hex');
}

/** Constant-time check of a token from a link, against the registration's current link version. */
export function verifyRegistrationToken(authSecret: string, registrationId: string, linkVersion: number, token: string): boolean {
  const expected = Buffer.from(registrationToken(authSecret, registrationId, linkVersion), 'utf8');
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

/** The pay-now page: GET shows the amount, POST starts the card checkout. `linkVersion`: the registration's manage_link_version. */
export function payNowUrl(config: LinkConfig, registrationId: string, linkVersion: number): string {
  return `${registrationPath(config, registrationId)}/pay?token=${registrationToken(config.authSecret, registrationId, linkVersion)}`;
}

/** The registration's own page: status, bank-transfer details, pay-now button. `linkVersion`: the registration's manage_link_version. */
export function registrationUrl(config: LinkConfig, registrationId: string, linkVersion: number): string {
  return `${registrationPath(config, registrationId)}?token=${registrationToken(config.authSecret, registrationId, linkVersion)}`;
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
