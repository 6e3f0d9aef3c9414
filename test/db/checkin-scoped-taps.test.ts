import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { down } from '../../migrations/20261207000400_checkin_scoped_taps.js';
import { migrateLatest } from '../../src/db/migrate.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const MIGRATION = '20261207000400_checkin_scoped_taps';
const AT = new Date('2026-12-05T08:00:00Z');

describe('check-in tap ids scoped to their link', () => {
  it('rolls back to one id across links (keeping the earliest of a pair two links sent) and forward again', async () => {
    const event = await insertEvent(tdb.db);
    const link = async (label: string) =>
      (
        await tdb.db('checkin_links')
          .insert({ event_id: event.id, label, token_hash: label, created_by: 'office', created_at: AT, expires_at: new Date(AT.getTime() + 3_600_000) })
          .returning<Array<{ id: string }>>('id')
      )[0]?.id as string;
    const front = await link('front');
    const side = await link('side');
    const id = '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0001';
    await tdb.db('checkin_nonces').insert([
      { link_id: side, id, received_at: new Date(AT.getTime() + 1_000) },
      { link_id: front, id, received_at: AT },
    ]);

    await down(tdb.db);
    await tdb.db('knex_migrations').where({ name: MIGRATION }).delete();
    expect(await tdb.db('checkin_nonces').select('link_id', 'id')).toEqual([{ link_id: front, id }]);
    expect(await tdb.db.schema.hasColumn('checkin_log', 'outside_event_days')).toBe(false);

    expect(await migrateLatest(tdb.db)).toContain(MIGRATION);
    await tdb.db('checkin_nonces').insert({ link_id: side, id, received_at: AT });
    expect(await tdb.db('checkin_nonces').count({ n: '*' }).first()).toEqual({ n: 2 });
    await expect(tdb.db('checkin_nonces').insert({ link_id: null, id: '6f1c1c64-0d1a-4a39-9a55-4f2b6c7a0002', received_at: AT })).rejects.toThrow(/null value/);
  });
});
