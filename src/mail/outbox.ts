import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Clock } from '../clock.js';
import type { Mailbox } from '../config/mailbox.js';
import type { Logger } from '../logger.js';
import { newMessageId, toNodemailerOptions } from './compose.js';
import type { Mailer, MailMessage, SendResult } from './types.js';

export interface OutboxMailerOptions {
  dir: string;
  from: Mailbox | undefined;
  logger: Logger;
  clock: Clock;
}

/** Outside production with no mail server: each message becomes an .eml file a mail client can open. */
export async function createOutboxMailer(options: OutboxMailerOptions): Promise<Mailer> {
  // The default export (module.exports): a bundled chunk of a CommonJS package exports nothing else.
  const { default: nodemailer } = await import('nodemailer');
  const { dir, logger, clock } = options;
  const from = options.from ?? { address: 'eventops@localhost' };
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  return {
    kind: 'outbox',
    async send(message: MailMessage): Promise<SendResult> {
      const messageId = newMessageId(from);
      const info = await transport.sendMail(toNodemailerOptions(message, from, messageId));
      // Messages carry member details and sign-in links: readable by the owner only.
      await fs.mkdir(dir, { recursive: true, mode: 0o700 });
      const file = path.join(dir, outboxFileName(clock.now(), message.subject));
      await fs.writeFile(file, info.message, { flag: 'wx', mode: 0o600 });
      logger.info({ path: file }, 'mail written to the dev outbox');
      return { messageId: info.messageId, accepted: [...message.to, ...(message.cc ?? [])], rejected: [] };
    },
    async close() {
      transport.close();
    },
  };
}

/** `<ISO time>-<subject slug>-<random>.eml`, with the time's colons replaced so the name is valid everywhere. */
export function outboxFileName(at: Date, subject: string): string {
  const time = at.toISOString().replace(/[:.]/g, '-');
  const slug =
    subject
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 60)
      .replace(/-+$/, '') || 'message';
  return `${time}-${slug}-${crypto.randomBytes(4).toString('hex')}.eml`;
}
