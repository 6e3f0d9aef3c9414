import type { Readable } from 'node:stream';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { Mailbox } from '../config/mailbox.js';
import type { SmtpConfig } from '../config/types.js';
import type { Logger } from '../logger.js';
import { newMessageId, toNodemailerOptions } from './compose.js';
import { messageBytes } from './mime-bytes.js';
import { noDelaySocket } from './smtp-socket.js';
import { MailSendError, type Mailer, type MailMessage, type SendResult } from './types.js';

export interface SmtpMailerOptions {
  smtp: SmtpConfig;
  from: Mailbox | undefined;
  logger: Logger;
  /** Connection, greeting and idle-socket timeout, so a silent server cannot hold a run forever. */
  timeoutMs: number;
}

/** What nodemailer attaches to its errors; every field is optional. */
interface SmtpErrorFields {
  code?: string;
  responseCode?: number;
  command?: string;
  rejected?: string[];
}

const CONNECTION_FAILURES = new Set(['ETIMEDOUT', 'ECONNECTION', 'ESOCKET']);

export async function createSmtpMailer(options: SmtpMailerOptions): Promise<Mailer> {
  // The default export (module.exports): a bundled chunk of a CommonJS package exports nothing else.
  const [{ default: nodemailer }, { default: MailComposer }] = await Promise.all([
    import('nodemailer'),
    import('nodemailer/lib/mail-composer/index.js'),
  ]);
  const { smtp, from, logger, timeoutMs } = options;
  // maxRequeues is honoured by the pool but missing from its type definitions.
  const poolOptions: SMTPPool.Options & { maxRequeues: number } = {
    pool: true,
    maxConnections: 3,
    // A connection that closes mid-message must fail the send, never resend it silently.
    maxRequeues: 0,
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    auth: { user: smtp.user, pass: smtp.password },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    getSocket: noDelaySocket(timeoutMs),
    logger: false,
  };
  const transport = nodemailer.createTransport(poolOptions);
  transport.on('error', (error: Error) => logger.warn({ err: error.message }, 'SMTP pool connection error'));

  // The message stream starts flowing only after the server answered DATA with 354.
  // Once it has, a dropped connection or a timeout leaves it unknown whether the
  // server took the message: that send is ambiguous.
  const onStreamStart = new Map<string, () => void>();
  transport.use('stream', (mail, done) => {
    const mark = typeof mail.data.messageId === 'string' ? onStreamStart.get(mail.data.messageId) : undefined;
    if (mark) {
      mail.message.processFunc((stream: Readable) => {
        stream.once('resume', mark);
        return stream;
      });
    }
    done();
  });

  return {
    kind: 'smtp',
    async send(message: MailMessage): Promise<SendResult> {
      const messageId = newMessageId(from);
      let dataStarted = false;
      onStreamStart.set(messageId, () => {
        dataStarted = true;
      });
      try {
        // Built whole before it is queued: the socket then gets the message in one write instead of one per
        // piece of the MIME tree (about 19 small writes a message, each its own packet with Nagle off),
        // and written out in one pass rather than streamed (see mime-bytes.ts).
        const mime = new MailComposer(toNodemailerOptions(message, from, messageId)).compile();
        const raw = await messageBytes(mime);
        const info = await transport.sendMail({ envelope: mime.getEnvelope(), raw, messageId });
        const rejected = info.rejected.map(String);
        if (rejected.length > 0) logger.warn({ messageId, rejectedCount: rejected.length }, 'SMTP server refused some recipients');
        return { messageId, accepted: info.accepted.map(String), rejected };
      } catch (error) {
        throw toMailSendError(error, dataStarted);
      } finally {
        onStreamStart.delete(messageId);
      }
    },
    async close() {
      transport.close();
    },
  };
}

/** Messages name the SMTP code and stage only: server responses often quote the recipient's address. */
function toMailSendError(error: unknown, dataStarted: boolean): MailSendError {
  const fields: SmtpErrorFields = typeof error === 'object' && error !== null ? (error as SmtpErrorFields) : {};
  const { code, responseCode } = fields;
  const reply = responseCode ? ` (${responseCode})` : '';
  const permanent = responseCode !== undefined && responseCode >= 500;
  if (code === 'EENVELOPE' && fields.rejected?.length) {
    return new MailSendError(`SMTP server refused every recipient${reply}`, false, fields.rejected.map(String), {
      cause: error,
      permanent,
    });
  }
  if (code === 'EENVELOPE' || code === 'EMESSAGE') {
    return new MailSendError(`SMTP server refused the message at ${fields.command ?? 'send'}${reply}`, false, [], { cause: error, permanent });
  }
  if (code === 'EAUTH') {
    return new MailSendError(`SMTP login failed${reply}; check SMTP_USER and SMTP_APP_PASSWORD`, false, [], { cause: error });
  }
  const connectionFailure = code === undefined || CONNECTION_FAILURES.has(code);
  if (connectionFailure && dataStarted) {
    return new MailSendError(
      `SMTP connection ${code === 'ETIMEDOUT' ? 'timed out' : 'was lost'} after the message was sent; the server may have accepted it`,
      true,
      [],
      { cause: error },
    );
  }
  return new MailSendError(`SMTP delivery failed before the message was sent (${code ?? 'connection closed'})`, false, [], { cause: error });
}
