import type { AppConfig } from './config/types.js';
import type { Clock } from './clock.js';
import type { Db } from './db/connect.js';
import type { FieldCipher } from './crypto/field-cipher.js';
import type { Logger } from './logger.js';
import type { Mailer } from './mail/types.js';

/** What every service takes: no globals, so tests substitute any part. */
export interface AppContext {
  config: AppConfig;
  db: Db;
  clock: Clock;
  logger: Logger;
  cipher: FieldCipher;
  /** Created on first use so commands that send no mail never open a transport. */
  mailer(): Promise<Mailer>;
}
