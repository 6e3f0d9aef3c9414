import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrateLatest, migrateRollback } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeEach(async () => {
  tdb = await createTestDatabase();
});
afterEach(async () => {
  await tdb.drop();
});

const appliedMigrations = async () => (await tdb.db('knex_migrations').orderBy('id').pluck('name')) as string[];

describe('the migration check every command runs at start', () => {
  it('with every migration applied it is one query, and applies nothing', async () => {
    const before = await appliedMigrations();
    const queries: string[] = [];
    const record = (query: { sql: string }) => queries.push(query.sql);
    tdb.db.on('query', record);
    try {
      expect(await migrateLatest(tdb.db)).toEqual([]);
    } finally {
      tdb.db.off('query', record);
    }
    expect(queries).toEqual(['select "name" from "knex_migrations"']);
    expect(await appliedMigrations()).toEqual(before);
  });

  it('with migrations missing it goes through the migrator and applies them', async () => {
    const before = await appliedMigrations();
    await migrateRollback(tdb.db);
    expect(await appliedMigrations()).toEqual([]);

    expect(await migrateLatest(tdb.db)).toEqual(before);
    expect(await appliedMigrations()).toEqual(before);
  });

  it('an applied migration this build does not know is still reported by the migrator, not skipped', async () => {
    await tdb.db('knex_migrations').insert({ name: '29990101000000_from_a_newer_build', batch: 99, migration_time: new Date() });

    await expect(migrateLatest(tdb.db)).rejects.toThrow(/corrupt/i);
  });
});
