import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { getEventBySlug } from '../../src/office/events.js';
import { publicSeatCount } from '../../src/registrations/registrations.js';
import { registerForEvent, SoldOutError } from '../../src/signup/register.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const clock = new FixedClock(new Date('2026-11-22T01:00:00Z'));
const settledWithin = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise.then(() => 'settled' as const, () => 'settled' as const), new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), ms))]);

describe('a post refused on the places its page read', () => {
  it('is refused without waiting for the event lock; one that fits waits for it and takes its places', async () => {
    const ctx = createTestContext({ db: tdb.db, clock });
    const { slug, id } = await insertEvent(tdb.db, { capacity: 4 });
    const event = (await getEventBySlug(tdb.db, slug))!;
    const post = (email: string, names: string[], seen: Awaited<ReturnType<typeof publicSeatCount>>) =>
      registerForEvent(ctx, event, {
        contact: { name: 'A Family', email },
        attendees: names.map((name) => ({ name, tier: 'adult' })),
        family: false,
        payment: 'bank',
        client: '203.0.113.9',
        seen: { event, count: seen },
      });
    await post('first@example.org', ['Ana', 'Ben', 'Cy'], await publicSeatCount(tdb.db, event, clock.now()));
    const seen = await publicSeatCount(tdb.db, event, clock.now());
    expect(seen.seatsLeft).toBe(1);

    // Another registration holds the event's lock.
    const holder = await tdb.db.transaction();
    try {
      await holder('events').where({ id }).forUpdate().first();
      const tooMany = post('too-many@example.org', ['Dee', 'Eve'], seen);
      expect(await settledWithin(tooMany, 2_000)).toBe('settled');
      const refusal = await tooMany.catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(SoldOutError);
      expect((refusal as SoldOutError).seatsLeft).toBe(1);
      // The form given back shows the places as the page read them.
      expect((refusal as SoldOutError).standing?.count.seatsLeft).toBe(1);

      const fits = post('fits@example.org', ['Fay'], seen);
      expect(await settledWithin(fits, 300)).toBe('waiting');
      await holder.commit();
      expect(await fits).toMatchObject({ kind: 'registered', status: 'PENDING' });
    } finally {
      if (!holder.isCompleted()) await holder.rollback();
    }
    const places = await tdb.db('registrations').where({ event_id: id }).whereIn('status', ['PENDING', 'PAID']).sum({ n: 'attendee_count' }).first();
    expect(Number(places?.n)).toBe(4);
    expect(await tdb.db('registrations').where({ event_id: id, contact_email_hash: ctx.cipher.lookupHash('email', 'too-many@example.org') }).first()).toBeUndefined();
  });
});
