import { domainToASCII } from 'node:url';
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
    .pipe(mailAddress('enter a valid email address, like name@example.org'));
}

export const NON_ASCII_LOCAL_PART_MESSAGE =
  'letters with accents or from other alphabets before the @ are not accepted by every mail server; use an address without them';

/**
 * An email address as every mail server takes it. A domain in another alphabet or with accents
 * (jo@münchen.de) is kept in its ASCII form (jo@xn--mnchen-3ya.de), the same address to every mail
 * system, so it is sent, matched and deduplicated as one. Such letters before the @ need the
 * SMTPUTF8 extension, which not every server (nor the mail API) offers: refused, with a message
 * that says so rather than "not valid".
 */
export function mailAddress(invalid: string) {
  return z
    .string()
    .transform(withAsciiDomain)
    .refine((value) => !NON_ASCII.test(localPart(value)), { error: NON_ASCII_LOCAL_PART_MESSAGE, abort: true })
    .pipe(z.email({ error: invalid }));
}

const NON_ASCII = /[^\x00-\x7f]/;

function localPart(address: string): string {
  const at = address.lastIndexOf('@');
  return at < 0 ? address : address.slice(0, at);
}

/**
 * The address with its domain in ASCII (punycode), as mailAddress stores it; unchanged when it already is, or when
 * the domain cannot be converted (then z.email refuses it). An address typed to look someone up goes through it too.
 */
export function withAsciiDomain(address: string): string {
  const at = address.lastIndexOf('@');
  const domain = address.slice(at + 1);
  if (at < 0 || !NON_ASCII.test(domain)) return address;
  const ascii = domainToASCII(domain);
  return ascii === '' ? address : `${address.slice(0, at + 1)}${ascii}`;
}

/** A contact mobile, trimmed; empty means none (the caller decides whether that is allowed). */
export function contactMobile(required: string) {
  return publicString(required)
    .trim()
    .max(MAX_MOBILE_LENGTH, { error: `at most ${MAX_MOBILE_LENGTH} characters` })
    .refine((value) => value === '' || PHONE.test(value), { error: MOBILE_MESSAGE });
}
