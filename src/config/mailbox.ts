import { z } from 'zod';
import { hasControlCharacters } from '../text-rules.js';

/** A sender: an address, and the display name an administrator wrote beside it, if any. */
export interface Mailbox {
  address: string;
  name?: string;
}

const emailSchema = z.email();
// `Name <address>` or `"Name" <address>` (backslash escapes inside the quotes), as RFC 5322 writes a mailbox.
const NAME_ADDR = /^(?:"((?:[^"\\]|\\.)*)"|([^"<>]*?))\s*<([^<>\s]+)>$/;

/** The mailbox written in MAIL_FROM, or undefined when it is neither an address nor `Name <address>`. */
export function parseMailbox(value: string): Mailbox | undefined {
  const text = value.trim();
  if (emailSchema.safeParse(text).success) return { address: text };
  const match = NAME_ADDR.exec(text);
  if (!match) return undefined;
  const [, quoted, bare, address = ''] = match;
  const name = (quoted === undefined ? bare : quoted.replace(/\\(.)/g, '$1'))?.trim();
  if (!emailSchema.safeParse(address).success || hasControlCharacters(name ?? '')) return undefined;
  return name ? { address, name } : { address };
}
