import crypto from 'node:crypto';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type { MailMessage } from './types.js';

/** A Message-ID of our own, so a send can be followed through the transport and the logs. */
export function newMessageId(from: string | undefined): string {
  const domain = from?.split('@')[1]?.replace(/[>\s]/g, '') || 'eventops.invalid';
  return `<${crypto.randomUUID()}@${domain}>`;
}

/** The nodemailer form of a message: both an HTML and a plain-text part (quoted-printable), attachments as given. */
export function toNodemailerOptions(message: MailMessage, from: string | undefined, messageId: string): Mail.Options {
  return {
    from,
    to: message.to,
    cc: message.cc,
    replyTo: message.replyTo,
    subject: message.subject,
    html: message.html,
    text: message.text,
    messageId,
    // The templates are English, for which nodemailer's own choice is always quoted-printable; naming it skips the
    // choice, which counts every letter of each body and encoded header (about a fifth of building a message).
    textEncoding: 'quoted-printable',
    attachments: message.attachments?.map((a) => ({
      filename: a.filename,
      content: a.content,
      contentType: a.contentType,
    })),
  };
}
