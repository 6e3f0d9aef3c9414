import { afterAll, beforeAll, beforeEach } from 'vitest';
import { setSetting } from '../../src/settings.js';
import { createTestDatabase, type TestDatabase } from './db.js';

/**
 * A database of its own for a celebrations test file: emptied of people, claims, settings and runs
 * before each test, then both kinds of celebration email switched on (the settings dated `on`).
 */
export function useCelebrationsDatabase(on: Date): { readonly db: TestDatabase['db'] } {
  let tdb: TestDatabase | undefined;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => {
    await tdb?.drop();
  });
  beforeEach(async () => {
    const { db } = opened();
    await db.raw('TRUNCATE people, celebration_claims, app_settings, job_runs, error_logs CASCADE');
    await setSetting(db, 'celebrations.birthdays', true, on);
    await setSetting(db, 'celebrations.anniversaries', true, on);
  });
  const opened = (): TestDatabase => {
    if (!tdb) throw new Error('the celebrations database is opened in beforeAll');
    return tdb;
  };
  return {
    get db() {
      return opened().db;
    },
  };
}
