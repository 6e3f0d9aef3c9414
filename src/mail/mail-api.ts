import type { Mailbox } from '../config/mailbox.js';
import type { MailApiConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import { senderOf, unsubscribeHeaders } from './compose.js';
import { MailSendError, type Mailer, type MailMessage, type SendResult } from './types.js';

export interface MailApiMailerOptions {
  api: MailApiConfig;
  from: Mailbox | undefined;
  logger: Logger;
  timeoutMs: number;
}

/** Failures that happen before any byte of the request reached the service. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** The JSON body of a Resend-style `POST /emails`. */
export function mailApiBody(message: MailMessage, from: Mailbox | undefined): Record<string, unknown> {
  return {
    from: from && mailboxText(senderOf(from, message)),
    to: message.to,
    cc: message.cc,
    reply_to: message.replyTo,
    subject: message.subject,
    html: message.html,
    text: message.text,
    headers: unsubscribeHeaders(message),
    attachments: message.attachments?.map((a) => ({
      filename: a.filename,
      content: Buffer.from(a.content).toString('base64'),
      content_type: a.contentType,
    })),
  };
}

/**
 * The API takes the sender as `Name <address>` in a JSON string, not a MIME header: the name is written
 * as RFC 5322 writes a display name, never MIME-encoded (the service would show the encoding). A name
 * of anything but letters, digits and spaces is quoted, as nodemailer quotes it in the SMTP header.
 */
export function mailboxText(from: Mailbox): string {
  if (!from.name) return from.address;
  const name = /^[\p{L}\p{N} ]+$/u.test(from.name) ? from.name : `"${from.name.replace(/["\\]/g, '\\$&')}"`;
  return `${name} <${from.address}>`;
}

/**
 * Answers worth another try later: the request timed out (408), the same idempotency key is still being
 * processed (409; the retry replays its answer, so nothing is sent twice), too early or too many (425, 429).
 * Any other 4xx will not change.
 */
const RETRYABLE_STATUSES = new Set([408, 409, 425, 429]);

export function createMailApiMailer(options: MailApiMailerOptions): Mailer {
  const { api, from, logger, timeoutMs } = options;
  return {
    kind: 'mail-api',
    async send(message: MailMessage): Promise<SendResult> {
      const headers: Record<string, string> = {
        authorization: `Bearer ${api.key}`,
        'content-type': 'application/json',
      };
      if (message.idempotencyKey) headers['idempotency-key'] = message.idempotencyKey;
      let response: Response;
      try {
        response = await fetch(`${api.url}/emails`, {
          method: 'POST',
          headers,
          body: JSON.stringify(mailApiBody(message, from)),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (error) {
        throw networkError(error);
      }
      const body = await readJson(response);
      if (response.ok) {
        const id = typeof body?.id === 'string' ? body.id : undefined;
        return { messageId: id, accepted: [...message.to, ...(message.cc ?? [])], rejected: [] };
      }
      const retryable = RETRYABLE_STATUSES.has(response.status) || response.status >= 500;
      const detail = typeof body?.name === 'string' ? ` ${body.name}` : '';
      logger.warn({ status: response.status }, 'mail API refused the message');
      throw new MailSendError(`mail API answered ${response.status}${detail}`, false, [], { permanent: !retryable });
    },
    async close() {},
  };
}

async function readJson(response: Response): Promise<Record<string, unknown> | undefined> {
  try {
    const parsed: unknown = await response.json();
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function networkError(error: unknown): MailSendError {
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new MailSendError('mail API did not answer in time; it may have accepted the message', true, [], { cause: error });
  }
  const cause = error instanceof Error ? error.cause : undefined;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : undefined;
  if (code && NOT_SENT_CODES.has(code)) {
    return new MailSendError(`mail API unreachable (${code})`, false, [], { cause: error });
  }
  return new MailSendError(`mail API connection failed (${code ?? 'unknown'}); it may have accepted the message`, true, [], {
    cause: error,
  });
}
