import fs from 'node:fs/promises';
import path from 'node:path';
import type { AddressObject, ParsedMail } from 'mailparser';

/**
 * Reading the dev outbox (outbox.ts writes it): one .eml file per message, named `<ISO time>-<subject>-<random>.eml`,
 * so the names sort in the order the messages were written. Message numbers count from the oldest, 1: a number keeps
 * naming the same message as more mail arrives.
 */

export interface OutboxFile {
  /** 1 for the oldest message. */
  number: number;
  file: string;
}

/** The outbox's messages, oldest first; none when the directory does not exist yet (nothing was ever written). */
export async function outboxFiles(dir: string): Promise<OutboxFile[]> {
  let names: string[];
  try {
    names = await fs.readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return names
    .filter((name) => name.endsWith('.eml'))
    .sort()
    .map((name, index) => ({ number: index + 1, file: path.join(dir, name) }));
}

export interface OutboxMessage {
  from: string;
  /** Each recipient's address. */
  to: string[];
  cc: string[];
  /** The Date header (when the message was written); the file's time when it has none. */
  date: Date;
  subject: string;
  /** The plain-text part, decoded from quoted-printable (or base64) and from its charset. */
  text: string;
  /** Every http(s) link, from the HTML part's hrefs and the text part, once each, in order of appearance. */
  links: string[];
}

/** One message, decoded with mailparser. */
export async function readOutboxMessage(file: string): Promise<OutboxMessage> {
  const { default: mailparser } = await import('mailparser');
  const [raw, stat] = await Promise.all([fs.readFile(file), fs.stat(file)]);
  const parsed = await mailparser.simpleParser(raw);
  const text = parsed.text ?? '';
  return {
    from: parsed.from?.text ?? '',
    to: addresses(parsed.to),
    cc: addresses(parsed.cc),
    date: parsed.date ?? stat.mtime,
    subject: parsed.subject ?? '',
    text,
    links: linksIn(typeof parsed.html === 'string' ? parsed.html : '', text),
  };
}

function addresses(field: ParsedMail['to']): string[] {
  const objects: AddressObject[] = field === undefined ? [] : Array.isArray(field) ? field : [field];
  return objects.flatMap((object) => object.value.map((address) => address.address ?? address.name));
}

/**
 * The links a message holds: its HTML part's hrefs (entities decoded, as a mail program reads them), then any URL
 * of the text part the HTML did not have. Only http(s): what a developer opens in a browser.
 */
export function linksIn(html: string, text: string): string[] {
  const fromHtml = [...html.matchAll(/\shref\s*=\s*(?:"([^"]*)"|'([^']*)')/gi)].map((match) => decodeEntities(match[1] ?? match[2] ?? ''));
  const fromText = [...text.matchAll(/https?:\/\/[^\s<>"]+/g)].map((match) => match[0].replace(/[.,;:!?)\]'’]+$/, ''));
  return [...new Set([...fromHtml, ...fromText].map((link) => link.trim()).filter((link) => /^https?:\/\//i.test(link)))];
}

const NAMED_ENTITIES: Record<string, string> = { amp: '&', quot: '"', apos: "'", lt: '<', gt: '>' };

function decodeEntities(value: string): string {
  return value.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
    if (name[0] === '#') {
      const code = name[1] === 'x' || name[1] === 'X' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10);
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : entity;
    }
    return NAMED_ENTITIES[name.toLowerCase()] ?? entity;
  });
}
