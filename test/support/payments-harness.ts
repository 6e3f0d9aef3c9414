import { Writable } from 'node:stream';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { createLogger, type Logger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/create.js';
import type { Mailer } from '../../src/mail/types.js';
import { createTestContext } from './context.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { startFakeProvider, type FakeProvider } from './fake-provider.js';
import { insertUser } from './factories.js';
import { startTestServer, type TestServer } from './http.js';
import { referenceNow } from './test-now.js';
import { TEST_WEBHOOK_SECRET } from './webhook-events.js';

/**
 * Everything a card-payment reliability run needs, wired as in production: its
 * own database, the local provider (checkout API + signed webhook deliveries),
 * the real HTTP server the provider delivers to, and an ADMIN to alert.
 */
export interface PaymentsHarness {
  tdb: TestDatabase;
  ctx: AppContext & { clock: FixedClock };
  provider: FakeProvider;
  server: TestServer;
  /** Every log line the server and the services wrote, when `captureLogs` was asked for. */
  logs: LogCapture;
  close(): Promise<void>;
}

export interface PaymentsHarnessOptions {
  /** Extra environment on top of testEnv() and the provider's PSP_* variables. */
  env?: Record<string, string | undefined>;
  /** Capture pino output (level debug) instead of discarding it. */
  captureLogs?: boolean;
  now?: Date;
  /** Insert an ADMIN (the alert recipient) before starting; default true. */
  admin?: boolean;
  /** Give the context the real mailer its configuration describes (e.g. SMTP_* of a sink in `env`). */
  realMailer?: boolean;
}

export interface LogCapture {
  lines: string[];
  text(): string;
}

/** A pino logger writing into memory, so a test can search everything that was logged. */
export function captureLogger(level = 'debug'): { logger: Logger; logs: LogCapture } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      lines.push(...chunk.toString('utf8').split('\n').filter((line) => line.length > 0));
      callback();
    },
  });
  return { logger: createLogger({ level, destination }), logs: { lines, text: () => lines.join('\n') } };
}

export async function startPaymentsHarness(options: PaymentsHarnessOptions = {}): Promise<PaymentsHarness> {
  const tdb = await createTestDatabase();
  const clock = new FixedClock(options.now ?? referenceNow());
  // The provider lives on the same clock, so its sessions' creation times fall in reconcile's window as ours do.
  const provider = await startFakeProvider({ webhookSecret: TEST_WEBHOOK_SECRET, now: () => clock.now() });
  const capture = options.captureLogs ? captureLogger() : undefined;
  const ctx = createTestContext({
    db: tdb.db,
    env: { ...provider.configEnv(), ...options.env },
    clock,
    logger: capture?.logger,
  }) as AppContext & { clock: FixedClock };
  let mailer: Mailer | undefined;
  if (options.realMailer) {
    const created = await createMailer(ctx.config, ctx.logger, { timeoutMs: 10_000 });
    mailer = created;
    ctx.mailer = async () => created;
  }
  if (options.admin !== false) await insertUser(tdb.db, ctx.cipher, { email: 'treasurer@example.org', role: 'ADMIN' });
  const server = await startTestServer(ctx);
  provider.setWebhookUrl(`${server.url}/api/stripe/webhook`);
  return {
    tdb,
    ctx,
    provider,
    server,
    logs: capture?.logs ?? { lines: [], text: () => '' },
    async close() {
      await server.close();
      await provider.close();
      await mailer?.close();
      await tdb.drop();
    },
  };
}
