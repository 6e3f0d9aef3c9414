import crypto from 'node:crypto';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { Mailbox } from '../config/mailbox.js';
import type { MailMessage } from './types.js';

/** A Message-ID of our own, so a send can be followed through the transport and the logs. */
export function newMessageId(from: Mailbox | undefined): string {
  const domain = from?.address.split('@')[1] || 'eventops.invalid';
  return `<${crypto.randomUUID()}@${domain}>`;
}

/**
 * The From of a message: the sender address with the display name MAIL_FROM was written with, else the
 * church's name the message was rendered under. Whitespace runs (a line break in a stored name) become
 * one space: a header value is one line.
 */
export function senderOf(from: Mailbox, message: Pick<MailMessage, 'fromName'>): Mailbox {
  const name = (from.name ?? message.fromName)?.replace(/[\s\p{Cc}]+/gu, ' ').trim();
  return name ? { name, address: from.address } : { address: from.address };
}

/**
 * List-Unsubscribe and List-Unsubscribe-Post (RFC 8058): a mail client's own "Unsubscribe" then POSTs
 * `List-Unsubscribe=One-Click` to the link. Given as headers: nodemailer's `list` option is applied by its
 * transports' sendMail, not by MailComposer, which the SMTP mailer compiles messages with.
 */
export function unsubscribeHeaders(message: Pick<MailMessage, 'unsubscribeUrl'>): Record<string, string> | undefined {
  if (message.unsubscribeUrl === undefined) return undefined;
  return { 'List-Unsubscribe': `<${message.unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}

/** The nodemailer form of a message: both an HTML and a plain-text part, attachments as given. */
export function toNodemailerOptions(message: MailMessage, from: Mailbox | undefined, messageId: string): Mail.Options {
  const sender = from && senderOf(from, message);
  return {
    // nodemailer quotes or encodes the name as the header needs.
    from: sender && (sender.name ? { name: sender.name, address: sender.address } : sender.address),
    to: message.to,
    cc: message.cc,
    replyTo: message.replyTo,
    subject: message.subject,
    html: message.html,
    text: message.text,
    textEncoding: textEncodingFor(message.subject, message.html, message.text),
    messageId,
    headers: unsubscribeHeaders(message),
    attachments: message.attachments?.map((a) => ({
      filename: a.filename,
      content: a.content,
      contentType: a.contentType,
    })),
  };
}

/**
 * The body encoding nodemailer would choose (quoted-printable when Latin letters
 * outnumber other characters, else base64), decided once per message with a
 * plain loop. Left to nodemailer, the choice is made for every part with regular
 * expressions that build an array of every letter, which cost more than
 * a third of the CPU of sending a receipt.
 */
export function textEncodingFor(...values: string[]): 'quoted-printable' | 'base64' {
  let latin = 0;
  let other = 0;
  for (const value of values) {
    for (let i = 0; i < value.length; i++) {
      const code = value.charCodeAt(i);
      if ((code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a)) latin++;
      else if (code >= 0x80 || code <= 0x08 || code === 0x0b || code === 0x0c || (code >= 0x0e && code <= 0x1f)) other++;
    }
  }
  return other < latin ? 'quoted-printable' : 'base64';
}
