import { withAsciiDomain } from './contact-rules.js';

/** Domains whose mailboxes are one and the same: googlemail.com delivers to the gmail.com mailbox. */
const SAME_MAILBOXES: Readonly<Record<string, string>> = { 'googlemail.com': 'gmail.com' };
/** Domains that ignore dots before the @ (j.o.doe@gmail.com is jodoe@gmail.com). */
const DOTS_IGNORED = new Set(['gmail.com']);

/**
 * The mailbox an address delivers to, for counting what one person receives: lowercase, the domain in ASCII,
 * without a `+tag` (victim+1@… and victim+2@… reach one inbox), and for gmail.com (googlemail.com is the same
 * mailbox) without dots before the @. Only for counting and matching: mail still goes to the address as typed.
 */
export function canonicalMailbox(address: string): string {
  const lowered = withAsciiDomain(address.trim()).toLowerCase();
  const at = lowered.lastIndexOf('@');
  if (at <= 0) return lowered;
  const plus = lowered.indexOf('+');
  // A local part that starts with "+" has no tag to drop: it is the whole name.
  let local = plus > 0 && plus < at ? lowered.slice(0, plus) : lowered.slice(0, at);
  let domain = lowered.slice(at + 1).replace(/\.$/, '');
  domain = SAME_MAILBOXES[domain] ?? domain;
  if (DOTS_IGNORED.has(domain)) local = local.replaceAll('.', '');
  return `${local}@${domain}`;
}

/**
 * The key a mailbox is counted under (the confirmation limit, the unpaid places per mailbox): the lookup hash of
 * its canonicalMailbox, so victim+1@… and victim+2@… count as one and the key never shows the address.
 */
export function mailboxKey(cipher: { lookupHash(kind: 'email', value: string): string }, address: string): string {
  return cipher.lookupHash('email', canonicalMailbox(address));
}
