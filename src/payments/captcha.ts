import { z } from 'zod';
import type { AppConfig } from '../config/types.js';

/**
 * Server-side check of a bot-protection token (Cloudflare Turnstile's
 * siteverify protocol: form-encoded secret + response, JSON {success}).
 * A verifier that cannot be reached or answers nonsense is "unavailable",
 * which is not the registrant's fault and is reported differently.
 */

export type CaptchaVerdict = { ok: true } | { ok: false; reason: 'missing' | 'rejected' | 'unavailable' };

export const CAPTCHA_TIMEOUT_MS = 5_000;

const verifyAnswer = z.object({ success: z.boolean() });

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
  return parsed.data.success ? { ok: true } : { ok: false, reason: 'rejected' };
}

export const NO_CAPTCHA_WARNING =
  'public registration is open without a captcha: anyone (or any bot) can post the form; set CAPTCHA_SECRET_KEY and CAPTCHA_SITE_KEY';

/** In production the public registration form should be behind a captcha: a warning, not a failure. */
export function captchaMissingInProduction(config: Pick<AppConfig, 'isProduction' | 'captcha'>): boolean {
  return config.isProduction && !config.captcha;
}
