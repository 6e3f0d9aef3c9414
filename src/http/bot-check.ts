import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { recordError } from '../ops/error-log.js';
import { verifyCaptchaToken } from '../payments/captcha.js';

export type BotCheck = { ok: true } | { ok: false; status: 400 | 503; code: 'captcha_failed' | 'captcha_unavailable'; message: string };

/**
 * The public forms' bot check, as the registration form runs it: passed when no captcha is configured;
 * a verifier that is unreachable, or refuses our secret, is the church's problem (503, and a refused
 * secret goes into the error log for the digest), a token that does not pass is the poster's (400).
 */
export async function checkBotToken(ctx: AppContext, request: FastifyRequest, token: string | undefined, source: string): Promise<BotCheck> {
  if (!ctx.config.captcha) return { ok: true };
  const verdict = await verifyCaptchaToken(ctx.config.captcha, token, { remoteIp: request.ip });
  if (verdict.ok) return verdict;
  if (verdict.reason === 'misconfigured') {
    const problem = new Error('the captcha verifier refused CAPTCHA_SECRET_KEY: check it against the site key');
    request.log.error({ err: problem }, 'captcha secret refused; public forms are blocked');
    await recordError(ctx.db, problem, { source, now: ctx.clock.now() });
  }
  if (verdict.reason === 'unavailable' || verdict.reason === 'misconfigured') {
    if (verdict.reason === 'unavailable') request.log.warn('captcha verification service unavailable');
    return { ok: false, status: 503, code: 'captcha_unavailable', message: 'We could not run the bot check just now. Please try again in a minute.' };
  }
  return { ok: false, status: 400, code: 'captcha_failed', message: 'The bot check did not pass. Please complete it and submit again.' };
}
