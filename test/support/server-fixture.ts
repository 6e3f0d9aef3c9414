import { afterAll, beforeAll, beforeEach } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { createTestContext } from './context.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { startTestServer, type TestServer } from './http.js';
import { useSinkAndMailer, type SinkAndMailer } from './mail-fixture.js';

export interface ServerWithSink {
  readonly tdb: TestDatabase;
  readonly server: TestServer;
  readonly clock: FixedClock;
  readonly mail: SinkAndMailer;
  /** A fresh context on the file's database, mailer and clock (as the server's). */
  context(): AppContext;
}

/**
 * For an HTTP test file: its own database, the real server on it with mail going to the SMTP sink,
 * and a fixed clock set back to `now` before each test, when `truncate` (a comma-separated list
 * of tables) is emptied. Read `tdb` and `server` inside tests and hooks.
 */
export function useServerWithSink(options: { now: Date; truncate: string }): ServerWithSink {
  const clock = new FixedClock(options.now);
  const mail = useSinkAndMailer();
  let tdb: TestDatabase | undefined;
  let server: TestServer | undefined;
  const context = () => createTestContext({ db: started(tdb).db, mailer: mail.mailer, clock, env: mail.sink.configEnv() });
  beforeAll(async () => {
    tdb = await createTestDatabase();
    server = await startTestServer(context());
  });
  afterAll(async () => {
    await server?.close();
    await tdb?.drop();
  });
  beforeEach(async () => {
    clock.set(options.now);
    await started(tdb).db.raw(`TRUNCATE ${options.truncate} CASCADE`);
  });
  return {
    get tdb() {
      return started(tdb);
    },
    get server() {
      return started(server);
    },
    clock,
    mail,
    context,
  };
}

function started<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('the server starts in beforeAll: read it inside a test or a hook');
  return value;
}
