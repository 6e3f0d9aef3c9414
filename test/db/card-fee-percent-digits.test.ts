import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateLatest } from '../../src/db/migrate.js';
import { getCardFeeRate } from '../../src/settings.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const MIGRATION = '20261123001700_card_fee_percent_digits';

async function storeThenMigrate(percent: unknown): Promise<unknown> {
  await tdb.db('app_settings').insert({ key: 'cardFee.percent', value: JSON.stringify(percent) }).onConflict('key').merge();
  await tdb.db('knex_migrations').where({ name: MIGRATION }).delete();
  expect(await migrateLatest(tdb.db)).toEqual([MIGRATION]);
  return (await tdb.db('app_settings').where({ key: 'cardFee.percent' }).first<{ value: unknown }>())?.value;
}

describe('a card fee percent stored with more than 4 decimals', () => {
  it('is rounded to 4 decimals, so it is charged instead of the default rate', async () => {
    expect(await storeThenMigrate(1.755555)).toBe(1.7556);
    expect(await getCardFeeRate(tdb.db)).toEqual({ percent: 1.7556, fixed: 30 });
  });

  it('a valid value, or one out of range, is left as it is', async () => {
    expect(await storeThenMigrate(2.25)).toBe(2.25);
    expect(await storeThenMigrate(12.123456)).toBe(12.123456);
  });
});
