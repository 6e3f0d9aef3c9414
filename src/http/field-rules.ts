import { LinkifyIt } from 'linkify-it';
import tlds from 'tlds' with { type: 'json' };
import { z } from 'zod';

/**
 * Rules every public text field shares. Control characters (C0, DEL, C1) and
 * the bidirectional overrides that make text display other than it is stored
 * are refused outright: no name, address or token needs them, and some (NUL)
 * cannot be stored at all.
 */
const CONTROL_CHARACTERS = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/u;

export const CONTROL_CHARACTERS_MESSAGE = 'remove the control characters';

export function hasControlCharacters(value: string): boolean {
  return CONTROL_CHARACTERS.test(value);
}

/** Names go into confirmation emails sent to whatever address was typed in, so they are short and carry no links. */
export const MAX_NAME_LENGTH = 80;

// Schemes (https://…, //…), www. and bare domains, as linkify-it finds them. Its own list of top-level
// domains has only the old generic ones and the country codes; mail clients link `win.click` or
// `cheap.xyz` too, so every delegated top-level domain counts (the `tlds` package).
const links = new LinkifyIt().tlds(tlds, true).set({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true });

export function containsUrl(value: string): boolean {
  return links.test(value);
}

/** A string without control characters; check it first, so the answer says what is wrong rather than "not an email". */
export function publicString(required: string) {
  return z.string({ error: required }).refine((value) => !hasControlCharacters(value), { error: CONTROL_CHARACTERS_MESSAGE, abort: true });
}

/**
 * Characters that show as nothing: format characters (zero-width space and joiners, bidi marks) and
 * the blank fillers that Unicode files as letters (Hangul U+115F, U+1160, U+3164, U+FFA0; the empty
 * braille pattern U+2800).
 */
const INVISIBLE = /[\p{Cf}\u115f\u1160\u3164\uffa0\u2800]/gu;

/** Whether a name shows at least one letter or digit, in any script: one of only invisible characters reads as blank. */
export function hasVisibleLetterOrDigit(value: string): boolean {
  return /[\p{L}\p{N}]/u.test(value.replace(INVISIBLE, ''));
}

/** A person's name: required, at most MAX_NAME_LENGTH characters, no control characters, no web or email addresses. */
export function personName(required: string) {
  return publicString(required)
    .trim()
    .min(1, { error: required, abort: true })
    .refine(hasVisibleLetterOrDigit, { error: 'a name needs at least one visible letter or digit', abort: true })
    .max(MAX_NAME_LENGTH, { error: `at most ${MAX_NAME_LENGTH} characters` })
    .refine((value) => !containsUrl(value), { error: 'a name cannot contain a web or email address' });
}
