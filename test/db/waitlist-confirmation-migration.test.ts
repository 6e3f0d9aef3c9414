import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateLatest } from '../../src/db/migrate.js';
import { down } from '../../migrations/20261207000200_waitlist_confirmation.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const MIGRATION = '20261207000200_waitlist_confirmation';
const JOINED = new Date('2026-11-01T00:00:00Z');

const entry = (eventId: string, state: string) => ({
  event_id: eventId,
  name_enc: 'x',
  email_enc: 'x',
  email_hash: `hash-${state}`,
  places: 1,
  state,
  created_at: JOINED,
  updated_at: JOINED,
});

describe('the waiting list\'s confirmation, as a migration', () => {
  it('up counts every entry already on a list as confirmed when it joined; down takes the entries never on a list off it', async () => {
    const event = await insertEvent(tdb.db, { waitlist_enabled: true });
    await tdb.db('waitlist_entries').insert([entry(event.id, 'UNCONFIRMED'), entry(event.id, 'LAPSED')]);
    await down(tdb.db);
    await tdb.db('knex_migrations').where({ name: MIGRATION }).delete();
    expect(await tdb.db('waitlist_entries').orderBy('email_hash').pluck('state')).toEqual(['LEFT', 'LEFT']);
    await tdb.db('waitlist_entries').insert(entry(event.id, 'WAITING'));

    expect(await migrateLatest(tdb.db)).toEqual([MIGRATION]);
    const waiting = await tdb.db('waitlist_entries').where({ state: 'WAITING' }).first<{ confirmed_at: Date }>();
    expect(waiting?.confirmed_at).toEqual(JOINED);
    await expect(tdb.db('waitlist_entries').insert(entry(event.id, 'NOT_A_STATE'))).rejects.toThrow(/waitlist_entries_state_check/);
  });
});
