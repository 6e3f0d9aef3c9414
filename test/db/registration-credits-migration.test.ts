import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { down } from '../../migrations/20261208001100_registration_credits.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { referenceNow } from '../support/test-now.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const MIGRATION = '20261208001100_registration_credits';

describe('one ledger: the registration_money view in place of the stored running sum', () => {
  it('rolls back to office_paid_minor filled from the payments, and forward again to the view', async () => {
    const at = referenceNow();
    const event = await insertEvent(tdb.db);
    const { id } = await insertRegistration(tdb.db, createTestContext({ db: tdb.db }).cipher, event.id, { status: 'PENDING', total_minor: 24000 });
    await tdb.db('registration_payments').insert([
      { registration_id: id, amount_minor: 5000, method: 'bank', recorded_by: 'office', recorded_at: at },
      { registration_id: id, amount_minor: 2500, method: 'cash', recorded_by: 'office', recorded_at: at },
    ]);
    await tdb.db('registration_credits').insert({ registration_id: id, kind: 'credit', fund: 'Camp scholarships', amount_minor: 4000, recorded_by: 'office', recorded_at: at });
    expect(await tdb.db('registration_money').where({ registration_id: id }).first()).toMatchObject({ office_paid_minor: 7500, credited_minor: 4000, balance_minor: 12500 });

    await down(tdb.db);
    await tdb.db('knex_migrations').where({ name: MIGRATION }).delete();
    expect(await tdb.db('registrations').where({ id }).first()).toMatchObject({ office_paid_minor: 7500 });
    expect(await tdb.db.schema.hasTable('registration_credits')).toBe(false);

    expect(await migrateLatest(tdb.db)).toContain(MIGRATION);
    expect(await tdb.db.schema.hasColumn('registrations', 'office_paid_minor')).toBe(false);
    expect(await tdb.db('registration_money').where({ registration_id: id }).first()).toMatchObject({ office_paid_minor: 7500, credited_minor: 0, balance_minor: 16500 });
  });
});
