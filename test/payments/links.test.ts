import crypto from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/errors.js';
import {
  cardPaymentPossible,
  payNowUrl,
  publicBaseUrl,
  registrationToken,
  registrationUrl,
  verifyRegistrationToken,
} from '../../src/payments/links.js';
import { testConfig } from '../support/env.js';

const SECRET = 'test-auth-secret-that-is-at-least-32-bytes-long';
const ID = '7d0f3c2e-4b1a-4c9e-9f5a-2f1e0b6c8d42';

describe('registration links', () => {
  it('the token is the hex HMAC-SHA256 of the registration id under AUTH_SECRET', () => {
    const expected = crypto.createHmac('sha256', SECRET).update(ID).digest('hex');
    expect(registrationToken(SECRET, ID, 1)).toBe(expected);
    expect(expected).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a token verifies only for its own registration, its own secret and its exact value', () => {
    const token = registrationToken(SECRET, ID, 1);
    expect(verifyRegistrationToken(SECRET, ID, 1, token)).toBe(true);
    expect(verifyRegistrationToken(SECRET, '00000000-0000-4000-8000-000000000000', 1, token)).toBe(false);
    expect(verifyRegistrationToken('another-secret-that-is-at-least-32-bytes', ID, 1, token)).toBe(false);
    const flipped = (token[0] === 'a' ? 'b' : 'a') + token.slice(1);
    expect(verifyRegistrationToken(SECRET, ID, 1, flipped)).toBe(false);
    // Different lengths are refused without reaching timingSafeEqual (which would throw).
    expect(verifyRegistrationToken(SECRET, ID, 1, token.slice(0, 10))).toBe(false);
    expect(verifyRegistrationToken(SECRET, ID, 1, `${token}00`)).toBe(false);
    expect(verifyRegistrationToken(SECRET, ID, 1, '')).toBe(false);
  });

  it('links are built from AUTH_URL, else APP_URL, and carry the token', () => {
    const config = testConfig({ AUTH_URL: 'https://events.example.org/', APP_URL: 'https://app.example.org' });
    const token = registrationToken(config.authSecret, ID, 1);
    expect(payNowUrl(config, ID, 1)).toBe(`https://events.example.org/registrations/${ID}/pay?token=${token}`);
    expect(registrationUrl(config, ID, 1)).toBe(`https://events.example.org/registrations/${ID}?token=${token}`);

    const appOnly = testConfig({ AUTH_URL: undefined, APP_URL: 'https://app.example.org' });
    expect(publicBaseUrl(appOnly)).toBe('https://app.example.org');
    expect(payNowUrl(appOnly, ID, 1)).toBe(`https://app.example.org/registrations/${ID}/pay?token=${token}`);
  });

  it('without AUTH_URL and APP_URL no link is built (never from a request header)', () => {
    const config = testConfig({ AUTH_URL: undefined, APP_URL: undefined });
    expect(() => payNowUrl(config, ID, 1)).toThrow(AppError);
    let caught: unknown;
    try {
      publicBaseUrl(config);
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ code: 'base_url_missing' });
  });

  it('card payment is possible only when the event takes online payment and a provider is configured', () => {
    const withProvider = testConfig({ PSP_SECRET_KEY: 'sk_test_123', PSP_WEBHOOK_SECRET: 'whsec_123' });
    const without = testConfig();
    expect(cardPaymentPossible(withProvider, { online_payment: true })).toBe(true);
    expect(cardPaymentPossible(withProvider, { online_payment: false })).toBe(false);
    expect(cardPaymentPossible(without, { online_payment: true })).toBe(false);
  });
});
