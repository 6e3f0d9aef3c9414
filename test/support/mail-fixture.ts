import { afterAll, beforeAll, beforeEach } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/create.js';
import type { Mailer } from '../../src/mail/types.js';
import { testConfig } from './env.js';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from './smtp-sink.js';

export interface SinkAndMailer {
  /** The real SMTP server on loopback that keeps what it receives. */
  readonly sink: SmtpSink;
  /** The product's own SMTP mailer, pointed at the sink. */
  readonly mailer: Mailer;
}

/**
 * For a test file whose subprocesses or servers send mail: a real SMTP sink, started before the
 * file's tests, emptied before each test and closed after the last. Read `sink` inside tests and hooks.
 */
export function useSmtpSink(options: SmtpSinkOptions = {}): { readonly sink: SmtpSink } {
  let sink: SmtpSink | undefined;
  beforeAll(async () => {
    sink = await startSmtpSink(options);
  });
  beforeEach(() => sink?.clear());
  afterAll(async () => {
    await sink?.close();
  });
  return {
    get sink() {
      if (!sink) throw new Error('the SMTP sink starts in beforeAll: read it inside a test or a hook');
      return sink;
    },
  };
}

/**
 * For a test file that sends mail: a real SMTP sink and the product's mailer
 * pointed at it, started before the file's tests, emptied before each test and
 * closed after the last. Read `sink` and `mailer` inside tests and hooks.
 */
export function useSinkAndMailer(options: SmtpSinkOptions & { timeoutMs?: number } = {}): SinkAndMailer {
  const { timeoutMs = 2_000, ...sinkOptions } = options;
  const smtp = useSmtpSink(sinkOptions);
  let mailer: Mailer | undefined;
  beforeAll(async () => {
    mailer = await createMailer(testConfig(smtp.sink.configEnv()), silentLogger(), { timeoutMs });
  });
  afterAll(async () => {
    await mailer?.close();
  });
  return {
    get sink() {
      return smtp.sink;
    },
    get mailer() {
      if (!mailer) throw new Error('the mailer starts in beforeAll: read it inside a test or a hook');
      return mailer;
    },
  };
}
