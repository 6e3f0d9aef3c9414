import { z } from 'zod';
import type { AppConfig } from '../config/types.js';

/**
 * Server-side check of a bot-protection token (Cloudflare Turnstile's
 * siteverify protocol: form-encoded secret + response, JSON {success}).
 * A verifier that cannot be reached or answers nonsense is "unavailable", and one
 * that refuses our secret is "misconfigured": neither is the registrant's fault,
 * and both are reported differently from a token that did not pass.
 */

export type CaptchaVerdict = { ok: true } | { ok: false; reason: 'missing' | 'rejected' | 'unavailable' | 'misconfigured' };

export const CAPTCHA_TIMEOUT_MS = 5_000;

const verifyAnswer = z.object({ success: z.boolean(), 'error-codes': z.array(z.string()).optional() });

/** siteverify's codes for our own secret, not the registrant's token: every registration would fail alike. */
const SECRET_ERRORS = new Set(['missing-input-secret', 'invalid-input-secret']);

export async function verifyCaptchaToken(
  captcha: NonNullable<AppConfig['captcha']>,
  token: string | undefined,
  options: { remoteIp?: string; timeoutMs?: number } = {},
): Promise<CaptchaVerdict> {
  if (!token) return { ok: false, reason: 'missing' };
  const form = new URLSearchParams({ secret: captcha.secretKey, response: token });
  if (options.remoteIp) form.set('remoteip', options.remoteIp);
  let answer: unknown;
  try {
    const response = await fetch(captcha.verifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      signal: AbortSignal.timeout(options.timeoutMs ?? CAPTCHA_TIMEOUT_MS),
    });
    if (!response.ok) return { ok: false, reason: 'unavailable' };
    answer = await response.json();
  } catch {
    return { ok: false, reason: 'unavailable' };
  }
  const parsed = verifyAnswer.safeParse(answer);
  if (!parsed.success) return { ok: false, reason: 'unavailable' };
  if (parsed.data.success) return { ok: true };
  const codes = parsed.data['error-codes'] ?? [];
  if (codes.some((code) => SECRET_ERRORS.has(code))) return { ok: false, reason: 'misconfigured' };
  if (codes.includes('internal-error')) return { ok: false, reason: 'unavailable' };
  return { ok: false, reason: 'rejected' };
}

export const NO_CAPTCHA_WARNING =
  'public registration is open without a captcha: anyone (or any bot) can post the form; set CAPTCHA_SECRET_KEY and CAPTCHA_SITE_KEY';

/** In production the public registration form should be behind a captcha: a warning, not a failure. */
export function captchaMissingInProduction(config: Pick<AppConfig, 'isProduction' | 'captcha'>): boolean {
  return config.isProduction && !config.captcha;
}
