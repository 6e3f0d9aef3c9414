import type { AppConfig } from '../../../config/types.js';
import { AppError } from '../../../errors.js';

const WHEN_THERE_IS_ONE =
  'the outbox is for development: outside production, with neither SMTP_USER/SMTP_APP_PASSWORD nor MAILAPI_KEY set, mail is written to .eventops/outbox';

/** The dev outbox's directory; a typed error saying where mail goes instead when this configuration has none. */
export function outboxDirOf(config: Pick<AppConfig, 'devOutboxDir' | 'isProduction' | 'smtp' | 'mailApi'>): string {
  if (config.devOutboxDir) return config.devOutboxDir;
  if (config.mailApi) {
    throw new AppError('no_outbox', 'mail goes to the mail API (MAILAPI_KEY), not to files: there is no outbox to read', {
      suggestion: `the mail API's own log shows what was sent; ${WHEN_THERE_IS_ONE}`,
    });
  }
  if (config.smtp) {
    throw new AppError('no_outbox', `mail goes to SMTP (${config.smtp.host}:${config.smtp.port} as ${config.smtp.user}), not to files: there is no outbox to read`, {
      suggestion: `the mailbox's Sent folder shows what was sent; ${WHEN_THERE_IS_ONE}`,
    });
  }
  throw new AppError('no_outbox', 'in production mail is never written to files: there is no outbox to read', {
    suggestion: 'set SMTP_USER and SMTP_APP_PASSWORD, or MAILAPI_KEY and MAIL_FROM, so mail goes out',
  });
}

/** Said when the outbox holds nothing yet: what writes to it. */
export const OUTBOX_EMPTY_SUGGESTION =
  'mail is written there as it is sent: `eventops send-reminders`, `eventops demo`, or a registration while `eventops serve` runs';
