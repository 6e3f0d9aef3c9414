import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { startWaitlistLoop, WAITLIST_PASS_MS } from '../../src/scheduler/waitlist-loop.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { entries, fullWaitlistEvent } from '../registrations/waitlist-support.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('the waiting-list pass of `serve`', () => {
  it('runs well within a minute, and offers a place freed by any path (here a raised capacity) without the sweep', async () => {
    expect(WAITLIST_PASS_MS).toBeLessThanOrEqual(30_000);
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date('2026-11-22T00:00:00Z')) });
    const { event } = await fullWaitlistEvent(tdb.db, ctx.cipher, 1);
    await addToWaitingList(ctx, event, { contact: { name: 'Loop Family', email: 'loop@example.org' }, places: 1 }, { actor: 'test' });
    const loop = startWaitlistLoop(ctx, { intervalMs: 25 });
    try {
      await tdb.db('events').where({ id: event.id }).update({ capacity: 2 });
      const deadline = Date.now() + 5_000;
      while ((await entries(tdb.db, event.id))[0]?.state !== 'OFFERED' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    } finally {
      await loop.stop();
    }
    expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['OFFERED']);
    expect(await tdb.db('waitlist_history').where({ action: 'offered' }).pluck('actor')).toEqual(['waitlist offers']);
  });
});
