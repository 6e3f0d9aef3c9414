import { LinkifyIt } from 'linkify-it';
import tlds from 'tlds' with { type: 'json' };
import { publicString } from './contact-rules.js';
import { hasVisibleLetterOrDigit } from './text-rules.js';

/**
 * The rules of a person's name, wherever it is typed in: the public form (contact and attendees) and
 * the office's `registrations add`. Below both, so neither imports the other.
 */

/** Names go into confirmation emails sent to whatever address was typed in, so they are short and carry no links. */
export const MAX_NAME_LENGTH = 80;

// Schemes (https://…, //…), www. and bare domains, as linkify-it finds them. Its own list of top-level
// domains has only the old generic ones and the country codes; mail clients link `win.click` or
// `cheap.xyz` too, so every delegated top-level domain counts (the `tlds` package).
const links = new LinkifyIt().tlds(tlds, true).set({ fuzzyLink: true, fuzzyEmail: true, fuzzyIP: true });

export function containsUrl(value: string): boolean {
  return links.test(value);
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
