import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { seedDemoChurch } from '../../src/office/demo-seed.js';
import { addUser } from '../../src/office/users.js';
import { FixedClock } from '../../src/clock.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  for (const table of ['registrations', 'checkout_sessions', 'events', 'people', 'users', 'app_settings', 'error_logs']) await tdb.db(table).del();
});

const contextAt = (iso: string) => createTestContext({ db: tdb.db, env: { ALLOW_DEMO_SEED: 'true' }, clock: new FixedClock(new Date(iso)) });
const count = async (table: string) => Number((await tdb.db(table).count<Array<{ n: number }>>('* as n'))[0]?.n);

describe('demo seed', () => {
  it('on 29 February the dates years back fall on the 28th in a year without one', async () => {
    const ctx = contextAt('2028-02-29T01:00:00Z'); // 29 February in Sydney too
    expect(await seedDemoChurch(ctx)).toMatchObject({ seeded: true, users: 3 });
    const tom = await tdb.db('people').where({ first_name: 'Tom' }).first<{ birth_date: string; wedding_date: string }>();
    expect(tom).toMatchObject({ birth_date: '1967-02-28', wedding_date: '1998-02-28' });
    expect(await seedDemoChurch(ctx)).toMatchObject({ seeded: false });
  });

  it('is one transaction: a seed that fails halfway leaves nothing behind, so the next run is not refused by its own users', async () => {
    const ctx = contextAt('2026-11-22T00:00:00Z');
    await addUser(ctx, { email: 'office@demo.church.example', name: 'Olive Office', role: 'STAFF' });
    await expect(seedDemoChurch(ctx)).rejects.toThrow('a user with email office@demo.church.example already exists');
    expect({ users: await count('users'), settings: await count('app_settings'), people: await count('people') }).toEqual({ users: 1, settings: 0, people: 0 });

    await tdb.db('users').del();
    expect(await seedDemoChurch(ctx)).toMatchObject({ seeded: true, users: 3 });
  });
});
