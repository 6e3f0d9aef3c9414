import { afterAll, beforeAll } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { createTestContext } from './context.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { testEnv } from './env.js';
import { followRealClock } from './test-now.js';
import { useSinkAndMailer, type SinkAndMailer } from './mail-fixture.js';

export interface OfficeCli {
  readonly mail: SinkAndMailer;
  /** The test file's own database. */
  readonly db: TestDatabase['db'];
  /** The environment the command-line subprocess runs with: this database and the SMTP sink. */
  readonly env: Record<string, string | undefined>;
  /** An in-process context on the same database and sink, a minute ahead of the real clock the subprocess runs on. */
  context(): AppContext;
}

/** A database of its own and an SMTP sink for a test file that runs the office's commands in a subprocess. */
export function useOfficeCli(): OfficeCli {
  // The subprocess runs on the real clock: the factories' default dates follow it in this file.
  followRealClock();
  const mail = useSinkAndMailer({ timeoutMs: 5_000 });
  let tdb: TestDatabase | undefined;
  let env: Record<string, string | undefined> | undefined;
  beforeAll(async () => {
    tdb = await createTestDatabase();
    env = testEnv({ DATABASE_URL: tdb.url, ...mail.sink.configEnv() });
  });
  afterAll(async () => {
    await tdb?.drop();
  });
  const opened = (): TestDatabase => {
    if (!tdb) throw new Error('the office database is opened in beforeAll');
    return tdb;
  };
  return {
    mail,
    get db() {
      return opened().db;
    },
    get env() {
      opened();
      return env as Record<string, string | undefined>;
    },
    context: () =>
      createTestContext({ db: opened().db, mailer: mail.mailer, env: mail.sink.configEnv(), clock: new FixedClock(new Date(Date.now() + 60_000)) }),
  };
}
