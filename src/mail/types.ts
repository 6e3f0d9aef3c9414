export interface MailAttachment {
  filename: string;
  content: string | Buffer;
  contentType: string;
}

export interface MailMessage {
  to: string[];
  cc?: string[];
  replyTo?: string;
  subject: string;
  html: string;
  text: string;
  attachments?: MailAttachment[];
  /**
   * The church's name the message was rendered under: the From's display name, unless MAIL_FROM was
   * written with a name of its own. Captured with the message, so a queued message keeps it.
   */
  fromName?: string;
  /** Stable per logical message; the mail API uses it to drop duplicate sends of a retried message. */
  idempotencyKey?: string;
  /** An https link that stops emails of this kind with a POST: sent as List-Unsubscribe with one-click (RFC 8058). */
  unsubscribeUrl?: string;
}

export interface SendResult {
  messageId?: string;
  accepted: string[];
  rejected: string[];
}

/**
 * The one mailer every feature uses. `send` resolves when the transport
 * accepted the message and rejects with a MailSendError otherwise.
 */
export interface Mailer {
  /** "smtp", "mail-api" or "outbox", for logs and `config check`; "none" when no transport is configured. */
  readonly kind: 'smtp' | 'mail-api' | 'outbox' | 'none';
  send(message: MailMessage): Promise<SendResult>;
  close(): Promise<void>;
}

export class MailSendError extends Error {
  readonly code = 'mail_send_failed';
  /** True when sending the same message again cannot succeed (recipients refused, request rejected as invalid). */
  readonly permanent: boolean;
  constructor(
    message: string,
    /** True when the server may have accepted the message anyway (timeout after DATA, dropped connection). */
    readonly ambiguous: boolean,
    readonly rejected: string[] = [],
    options: { cause?: unknown; permanent?: boolean } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'MailSendError';
    this.permanent = options.permanent ?? false;
  }
}
