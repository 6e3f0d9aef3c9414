import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateLatest } from '../../src/db/migrate.js';
import { down } from '../../migrations/20261126000100_event_calendar_sequence.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const MIGRATION = '20261126000100_event_calendar_sequence';
const CREATED = new Date('2026-10-01T00:00:00Z');

describe('the calendar sequence of events made before it existed', () => {
  it('starts from the SEQUENCE reminders already sent (seconds from creation to the last change), so calendars take the next one as newer', async () => {
    await down(tdb.db);
    await tdb.db('knex_migrations').where({ name: MIGRATION }).delete();
    const untouched = await insertEvent(tdb.db, { created_at: CREATED, updated_at: CREATED });
    const edited = await insertEvent(tdb.db, { created_at: CREATED, updated_at: new Date(CREATED.getTime() + 3 * 86_400_000 + 1_500) });

    expect(await migrateLatest(tdb.db)).toEqual([MIGRATION]);

    const sequence = async (id: string) => (await tdb.db('events').where({ id }).first<{ calendar_sequence: number }>())?.calendar_sequence;
    expect(await sequence(untouched.id)).toBe(0);
    expect(await sequence(edited.id)).toBe(3 * 86_400 + 1);
  });
});
