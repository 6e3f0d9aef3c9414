import { performance } from 'node:perf_hooks';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';

export interface CapturedMessage {
  from: string;
  to: string[];
  raw: string;
}

/**
 * The SMTP server both sides send to: a real smtp-server on loopback that
 * counts what it accepts and, while capturing, keeps the raw messages. Unlike
 * test/support/smtp-sink.ts it does not parse messages: parsing would spend
 * the bench machine's CPU on the receiving side of every measurement.
 */
export interface MailSink {
  host: string;
  port: number;
  accepted(): number;
  /** Start keeping raw messages (for the reference to resend), or stop. */
  capture(on: boolean): void;
  captured(): CapturedMessage[];
  /** performance.now() when the last message to `address` was accepted. */
  acceptedAt(address: string): number | undefined;
  reset(): void;
  env(): Record<string, string>;
  close(): Promise<void>;
}

export async function startMailSink(): Promise<MailSink> {
  let accepted = 0;
  let capturing = false;
  let captured: CapturedMessage[] = [];
  const acceptedTimes = new Map<string, number>();
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: true,
    logger: false,
    // A reverse DNS lookup per connection would add the resolver's time to both sides.
    disableReverseLookup: true,
    size: 10 * 1024 * 1024,
    onAuth(_auth, _session, callback) {
      callback(null, { user: 'sink' });
    },
    onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => {
        if (capturing) chunks.push(chunk);
      });
      stream.on('end', () => {
        accepted++;
        const now = performance.now();
        for (const recipient of session.envelope.rcptTo) acceptedTimes.set(recipient.address, now);
        if (capturing) {
          const from = session.envelope.mailFrom;
          captured.push({
            from: from ? from.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks).toString('utf8'),
          });
        }
        callback(null, 'queued');
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // A client killed mid-conversation (the crash tests do that) resets its connection: expected, not a failure of the sink.
  server.on('error', () => undefined);
  const address = server.server.address();
  if (address === null || typeof address === 'string') throw new Error('mail sink has no TCP address');
  const port = address.port;
  return {
    host: '127.0.0.1',
    port,
    accepted: () => accepted,
    capture(on) {
      capturing = on;
    },
    captured: () => captured,
    acceptedAt: (address) => acceptedTimes.get(address),
    reset() {
      accepted = 0;
      acceptedTimes.clear();
      captured = [];
    },
    env: () => ({
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(port),
      SMTP_SECURE: 'false',
      SMTP_USER: 'bench-sender@example.org',
      SMTP_APP_PASSWORD: 'bench-app-password',
      MAIL_FROM: 'events@example.org',
    }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
