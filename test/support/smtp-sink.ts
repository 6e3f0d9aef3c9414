import type net from 'node:net';
import { simpleParser, type Attachment } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

export interface SinkMessage {
  envelope: { from: string; to: string[] };
  /** The From header as mailparser reads it (name '' when there is none). */
  from: { name: string; address: string } | undefined;
  subject: string;
  html: string;
  text: string;
  attachments: Attachment[];
  raw: Buffer;
}

export interface SmtpSinkOptions {
  /** Recipients for which RCPT TO is answered 550. */
  rejectRecipient?: (address: string) => boolean;
  /** Recipients at whose RCPT TO the server closes the connection, before any message content is sent. */
  dropOnRecipient?: (address: string) => boolean;
  /** Messages after whose DATA the server closes the connection without answering. */
  dropAfterData?: (message: SinkMessage) => boolean;
  /** Messages after whose DATA the server never answers. */
  stallAfterData?: (message: SinkMessage) => boolean;
  /**
   * Milliseconds to wait after a message's DATA before answering 250 (0 or
   * undefined: at once). The message counts as accepted when the answer is
   * due, even if the client went away meanwhile, as a real server would keep it.
   */
  delayAfterData?: (message: SinkMessage) => number;
}

export interface SmtpSink {
  host: string;
  port: number;
  /** Messages the server accepted (250 after DATA). */
  messages: SinkMessage[];
  /** Messages the server received in full but dropped or stalled on. */
  unanswered: SinkMessage[];
  /** Messages received in full whose (delayed) answer is still due. */
  readonly delayed: number;
  waitFor(count: number, timeoutMs?: number): Promise<SinkMessage[]>;
  /**
   * Resolves once no client is connected and no message is being received or
   * awaiting its answer (after a client was killed: everything it sent is settled).
   */
  idle(timeoutMs?: number): Promise<void>;
  clear(): void;
  close(): Promise<void>;
  /** SMTP_* and MAIL_FROM variables that point the application at this sink. */
  configEnv(): Record<string, string>;
}

interface ServerConnection {
  id: string;
  _socket?: net.Socket;
}

/** A real SMTP server on 127.0.0.1 (port 0) that keeps what it receives, parsed. */
export async function startSmtpSink(options: SmtpSinkOptions = {}): Promise<SmtpSink> {
  const messages: SinkMessage[] = [];
  const unanswered: SinkMessage[] = [];
  let delayed = 0;
  let receiving = 0;
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());

  const server: SMTPServer = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    onAuth(_auth, _session, callback) {
      callback(null, { user: 'sink' });
    },
    onRcptTo(address, session, callback) {
      if (options.dropOnRecipient?.(address.address)) {
        socketOf(session)?.destroy();
        return;
      }
      if (options.rejectRecipient?.(address.address)) {
        callback(Object.assign(new Error(`mailbox ${address.address} unavailable`), { responseCode: 550 }));
        return;
      }
      callback();
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      receiving += 1;
      void receive(stream, session).finally(() => (receiving -= 1)).then(
        (message) => {
          if (options.dropAfterData?.(message)) {
            unanswered.push(message);
            socketOf(session)?.destroy();
            return;
          }
          if (options.stallAfterData?.(message)) {
            unanswered.push(message);
            return;
          }
          const delayMs = options.delayAfterData?.(message) ?? 0;
          const accept = () => {
            messages.push(message);
            callback(null, 'queued');
            notify();
          };
          if (delayMs <= 0) return accept();
          delayed += 1;
          setTimeout(() => {
            delayed -= 1;
            accept();
          }, delayMs);
        },
        (error: Error) => callback(error),
      );
    },
  });

  const socketOf = (session: SMTPServerSession): net.Socket | undefined => {
    for (const connection of server.connections as Set<ServerConnection>) {
      if (connection.id === session.id) return connection._socket;
    }
    return undefined;
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // A client killed mid-conversation (the crash tests do that) resets its connection: expected, not a failure of the sink.
  server.on('error', () => undefined);
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('SMTP sink has no TCP address');
  const host = '127.0.0.1';
  const port = address.port;

  return {
    host,
    port,
    messages,
    unanswered,
    get delayed() {
      return delayed;
    },
    waitFor(count, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(messages);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`SMTP sink received ${messages.length} of ${count} messages in ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async idle(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (server.connections.size > 0 || receiving > 0 || delayed > 0) {
        if (Date.now() > deadline) throw new Error(`SMTP sink still busy after ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    clear() {
      messages.length = 0;
      unanswered.length = 0;
    },
    async close() {
      // Stalled sessions would otherwise keep close() waiting for its 30 s grace period.
      for (const connection of server.connections as Set<ServerConnection>) connection._socket?.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
    configEnv() {
      return {
        SMTP_HOST: host,
        SMTP_PORT: String(port),
        SMTP_SECURE: 'false',
        SMTP_USER: 'sink-user@example.org',
        SMTP_APP_PASSWORD: 'sink-app-password',
        MAIL_FROM: 'events@example.org',
      };
    },
  };
}

async function receive(stream: SMTPServerDataStream, session: SMTPServerSession): Promise<SinkMessage> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const raw = Buffer.concat(chunks);
  const parsed = await simpleParser(raw);
  const from = session.envelope.mailFrom;
  return {
    envelope: { from: from ? from.address : '', to: session.envelope.rcptTo.map((r) => r.address) },
    from: parsed.from?.value[0] && { name: parsed.from.value[0].name, address: parsed.from.value[0].address ?? '' },
    subject: parsed.subject ?? '',
    html: typeof parsed.html === 'string' ? parsed.html : '',
    text: parsed.text ?? '',
    attachments: parsed.attachments,
    raw,
  };
}
