import { z } from 'zod';
import { hasControlCharacters } from './text-rules.js';

/**
 * The rules of a registration's contact address, wherever it is typed in: the public form and the
 * office's commands. Below both, so neither imports the other.
 */

export const CONTROL_CHARACTERS_MESSAGE = 'remove the control characters';
export const MAX_EMAIL_LENGTH = 254;
export const MAX_MOBILE_LENGTH = 40;
export const MOBILE_MESSAGE = 'use digits, spaces and an optional leading +';

const PHONE = /^\+?[0-9 ()-]{6,40}$/;

/** A string without control characters; check it first, so the answer says what is wrong rather than "not an email". */
export function publicString(required: string) {
  return z.string({ error: required }).refine((value) => !hasControlCharacters(value), { error: CONTROL_CHARACTERS_MESSAGE, abort: true });
}

/** A contact email address: required, at most 254 characters, trimmed. */
export function contactEmail(required: string) {
  return publicString(required)
    .trim()
    .min(1, { error: required })
    .max(MAX_EMAIL_LENGTH, { error: `at most ${MAX_EMAIL_LENGTH} characters` })
    .pipe(z.email({ error: 'enter a valid email address, like name@example.org' }));
}

/** A contact mobile, trimmed; empty means none (the caller decides whether that is allowed). */
export function contactMobile(required: string) {
  return publicString(required)
    .trim()
    .max(MAX_MOBILE_LENGTH, { error: `at most ${MAX_MOBILE_LENGTH} characters` })
    .refine((value) => value === '' || PHONE.test(value), { error: MOBILE_MESSAGE });
}
