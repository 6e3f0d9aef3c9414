import { systemClock, type Clock } from '../clock.js';
import type { AppConfig } from '../config/types.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createMailApiMailer } from './mail-api.js';
import { createOutboxMailer } from './outbox.js';
import { createSmtpMailer } from './smtp.js';
import type { Mailer } from './types.js';

export interface CreateMailerOptions {
  /** Overrides the transport timeouts (SMTP 30 s, mail API 15 s); tests use a short one. */
  timeoutMs?: number;
  /** Names the dev outbox files. */
  clock?: Clock;
}

const SMTP_TIMEOUT_MS = 30_000;
const MAIL_API_TIMEOUT_MS = 15_000;

/**
 * The one mailer for the configuration: the mail API when MAILAPI_KEY is set,
 * else SMTP, else (outside production) the dev outbox. nodemailer is loaded
 * only here, on first use.
 */
export async function createMailer(config: AppConfig, logger: Logger, options: CreateMailerOptions = {}): Promise<Mailer> {
  const from = config.mailFrom === undefined ? undefined : { address: config.mailFrom, name: config.mailFromName };
  if (config.mailApi) {
    return createMailApiMailer({ api: config.mailApi, from, logger, timeoutMs: options.timeoutMs ?? MAIL_API_TIMEOUT_MS });
  }
  if (config.smtp) {
    return createSmtpMailer({ smtp: config.smtp, from, logger, timeoutMs: options.timeoutMs ?? SMTP_TIMEOUT_MS });
  }
  if (config.devOutboxDir && !config.isProduction) {
    return createOutboxMailer({ dir: config.devOutboxDir, from, logger, clock: options.clock ?? systemClock });
  }
  return unconfiguredMailer();
}

function unconfiguredMailer(): Mailer {
  return {
    kind: 'none',
    async send() {
      throw new AppError('mail_not_configured', 'no mail transport is configured', {
        suggestion: 'set SMTP_USER and SMTP_APP_PASSWORD, or MAILAPI_KEY and MAIL_FROM',
      });
    },
    async close() {},
  };
}
