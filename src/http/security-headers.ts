import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyHelmetOptions } from '@fastify/helmet';
import helmet from 'helmet';
import type { AppConfig } from '../config/types.js';

/** Where the Turnstile widget's script and frame come from (CAPTCHA_VERIFY_URL is only the server-side check). */
const CAPTCHA_ORIGIN = 'https://challenges.cloudflare.com';
/** The provider's hosted checkout, where a card registration's form post is redirected. */
const CHECKOUT_ORIGIN = 'https://checkout.stripe.com';

/**
 * Security headers for every answer, through @fastify/helmet:
 * - Content-Security-Policy: only our own scripts and styles, and inline ones
 *   only with the response's nonce (pages.ts adds it to every inline block);
 *   no framing (`frame-ancestors 'none'`, X-Frame-Options DENY); forms post
 *   to us, and are redirected only to us or the card provider's checkout;
 *   workers only from us (the check-in page's service worker);
 * - X-Content-Type-Options nosniff; Referrer-Policy no-referrer (registration
 *   links carry a token);
 * - HSTS (and upgrade-insecure-requests) only when AUTH_URL is https: on a
 *   plain-http development server they would lock the browser out of it.
 */
export function securityHeaders(config: AppConfig): FastifyHelmetOptions {
  const https = config.authUrl?.startsWith('https:') ?? false;
  const captcha = config.captcha ? [CAPTCHA_ORIGIN] : [];
  const checkout = config.payments ? [CHECKOUT_ORIGIN, ...originOf(config.payments.apiBase)] : [];
  return {
    global: true,
    enableCSPNonces: true,
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': ["'self'", ...captcha],
        'style-src': ["'self'"],
        'img-src': ["'self'", 'data:'],
        'frame-src': captcha.length > 0 ? captcha : ["'none'"],
        'connect-src': ["'self'", ...captcha],
        // The check-in page's service worker (/checkin/sw.js): named, rather than left to script-src's fallback.
        'worker-src': ["'self'"],
        'font-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'none'"],
        'form-action': ["'self'", ...checkout],
        'frame-ancestors': ["'none'"],
        ...(https ? { 'upgrade-insecure-requests': [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    noSniff: true,
    referrerPolicy: { policy: 'no-referrer' },
    hsts: https ? { maxAge: 365 * 24 * 60 * 60, includeSubDomains: false } : false,
  };
}

/**
 * The same headers set directly on a response, for the answers fastify gives before any hook
 * runs (frameworkErrors: an address that cannot be decoded), which @fastify/helmet never sees.
 * Without nonces: such an answer is JSON, with no inline block to allow.
 */
export function securityHeadersSetter(config: AppConfig): (request: IncomingMessage, response: ServerResponse) => void {
  const { global: _global, enableCSPNonces: _nonces, ...options } = securityHeaders(config);
  // The same options; only the types differ (@fastify/helmet's come from helmet's CommonJS declarations).
  const apply = helmet(options as Parameters<typeof helmet>[0]);
  return (request, response) => apply(request, response, () => {});
}

function originOf(url: string | undefined): string[] {
  if (!url) return [];
  try {
    return [new URL(url).origin];
  } catch {
    return [];
  }
}
