import { FixedClock, type Clock } from '../../src/clock.js';
import type { AppConfig } from '../../src/config/types.js';
import type { AppContext } from '../../src/context.js';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import type { Db } from '../../src/db/connect.js';
import { silentLogger, type Logger } from '../../src/logger.js';
import type { Mailer } from '../../src/mail/types.js';
import { testConfig } from './env.js';
import { referenceNow } from './test-now.js';

export interface TestContextOptions {
  db: Db;
  config?: AppConfig;
  env?: Record<string, string | undefined>;
  clock?: Clock;
  logger?: Logger;
  mailer?: Mailer;
}

export function createTestContext(options: TestContextOptions): AppContext & { clock: Clock } {
  const config = options.config ?? testConfig(options.env);
  const mailer = options.mailer;
  return {
    config,
    db: options.db,
    clock: options.clock ?? new FixedClock(referenceNow()),
    logger: options.logger ?? silentLogger(),
    cipher: createFieldCipher(config.keyring),
    mailer: async () => {
      if (!mailer) throw new Error('this test context has no mailer; pass one to createTestContext');
      return mailer;
    },
  };
}
