import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
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
    await tdb.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).update({ state: 'REMOVED' });
  });
});

describe('one event that fails', () => {
  it('does not hold up the pass for the others: each event is settled on its own, and the failure goes into the error log for the digest', async () => {
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date('2026-11-22T00:00:00Z')) });
    const events = [];
    for (let n = 0; n < 3; n++) {
      const { event } = await fullWaitlistEvent(tdb.db, ctx.cipher, 1);
      await addToWaitingList(ctx, event, { contact: { name: `Family ${n}`, email: `family-${n}@example.org` }, places: 1 }, { actor: 'test' });
      await tdb.db('events').where({ id: event.id }).update({ capacity: 2 });
      events.push(event);
    }
    // The pass takes the events in id order: the first one fails, as a database fault would fail it.
    const [broken, ...others] = [...events].sort((a, b) => (a.id < b.id ? -1 : 1));
    await tdb.db.raw(`CREATE FUNCTION refuse_offer() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'could not write the offer of entry %', NEW.id; END $$`);
    await tdb.db.raw(`CREATE TRIGGER refuse_offer BEFORE UPDATE ON waitlist_entries FOR EACH ROW WHEN (NEW.event_id = '${broken?.id}' AND NEW.state = 'OFFERED') EXECUTE FUNCTION refuse_offer()`);
    const loop = startWaitlistLoop(ctx, { intervalMs: 25 });
    try {
      const deadline = Date.now() + 5_000;
      while ((await tdb.db('error_logs').where({ source: 'scheduler:waitlist' }).count<{ n: number }>({ n: '*' }).first())?.n === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 25));
      }
    } finally {
      await loop.stop();
      await tdb.db.raw('DROP TRIGGER refuse_offer ON waitlist_entries');
      await tdb.db.raw('DROP FUNCTION refuse_offer()');
    }
    for (const event of others) expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['OFFERED']);
    expect((await entries(tdb.db, broken?.id as string)).map((e) => e.state)).toEqual(['WAITING']);
    const [logged] = await tdb.db('error_logs').where({ source: 'scheduler:waitlist' }).select('message', 'context');
    expect(logged?.message).toMatch(/could not write the offer of entry/);
    expect(logged?.context).toEqual({ eventId: broken?.id });

    // Mended, the next pass offers its place too.
    expect(await runWaitlistPass(ctx, { actor: 'test' })).toMatchObject({ offered: 1 });
    await tdb.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).update({ state: 'REMOVED' });
  });

  it('in sweep-checkouts, is recorded in the error log and the sweep still settles the others and succeeds', async () => {
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date('2026-11-22T00:00:00Z')) });
    const events = [];
    for (let n = 0; n < 2; n++) {
      const { event } = await fullWaitlistEvent(tdb.db, ctx.cipher, 1);
      await addToWaitingList(ctx, event, { contact: { name: `Sweep ${n}`, email: `sweep-${n}@example.org` }, places: 1 }, { actor: 'test' });
      await tdb.db('events').where({ id: event.id }).update({ capacity: 2 });
      events.push(event);
    }
    const [broken, other] = [...events].sort((a, b) => (a.id < b.id ? -1 : 1));
    await tdb.db.raw(`CREATE FUNCTION refuse_offer() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'could not write the offer of entry %', NEW.id; END $$`);
    await tdb.db.raw(`CREATE TRIGGER refuse_offer BEFORE UPDATE ON waitlist_entries FOR EACH ROW WHEN (NEW.event_id = '${broken?.id}' AND NEW.state = 'OFFERED') EXECUTE FUNCTION refuse_offer()`);
    try {
      expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ outcome: 'ok', waitlistOffered: 1 });
    } finally {
      await tdb.db.raw('DROP TRIGGER refuse_offer ON waitlist_entries');
      await tdb.db.raw('DROP FUNCTION refuse_offer()');
    }
    expect((await entries(tdb.db, other?.id as string)).map((e) => e.state)).toEqual(['OFFERED']);
    expect(await tdb.db('error_logs').where({ source: 'job:sweep-checkouts' }).pluck('context')).toEqual([{ eventId: broken?.id }]);
    await tdb.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).update({ state: 'REMOVED' });
  });
});
