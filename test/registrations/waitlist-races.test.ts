import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cancelRegistration } from '../../src/admin/registrations/cancel.js';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { registerWithoutCard, SoldOutError } from '../../src/payments/register.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { OfferNotOpenError } from '../../src/registrations/waitlist/claim.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { entries, fullWaitlistEvent, placesHeld } from './waitlist-support.js';

/**
 * Each race runs concurrent transactions on real PostgreSQL. Every path that moves places (registering,
 * claiming, offering, expiring, cancelling) takes the event's row lock first, so none of them sees the
 * others half done.
 */
let tdb: TestDatabase;
let ctx: AppContext & { clock: FixedClock };
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(() => {
  ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date('2026-11-22T00:00:00Z')) }) as AppContext & { clock: FixedClock };
});
afterEach(async () => {
  await tdb.db('waitlist_entries').whereIn('state', ['WAITING', 'OFFERED']).update({ state: 'REMOVED' });
});

const office = { actor: 'office' };
const join = (event: EventRecord, email: string, places = 1) => addToWaitingList(ctx, event, { contact: { name: 'Waiting Family', email }, places }, { actor: 'test' });
const pass = () => runWaitlistPass(ctx, office);
const claim = (event: EventRecord, offer: { entryId: string; offerSeq: number }, email = 'claimer@example.org') =>
  registerWithoutCard(ctx, event, { contact: { name: 'Claimer', email }, attendees: [{ name: 'Claimer', tier: 'adult' }], family: false, payment: 'bank', waitlistOffer: offer });
const publicRegistration = (event: EventRecord, n: number) =>
  registerWithoutCard(ctx, event, { contact: { name: `Walk Up ${n}`, email: `walk-${n}@example.org` }, attendees: [{ name: `Walk Up ${n}`, tier: 'adult' }], family: false, payment: 'bank' });

async function settle<T>(promises: Array<Promise<T>>): Promise<{ won: T[]; refused: unknown[] }> {
  const results = await Promise.allSettled(promises);
  return {
    won: results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : [])),
    refused: results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : [])),
  };
}

async function offerOf(event: EventRecord, index = 0) {
  const entry = (await entries(tdb.db, event.id))[index];
  if (entry?.state !== 'OFFERED') throw new Error(`entry ${index} is ${entry?.state}, not OFFERED`);
  return { entryId: entry.id, offerSeq: entry.offer_seq };
}

describe('waiting-list races', () => {
  it('a freed place is offered once, however many passes run at once (servers, the sweep, the minute loop)', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 1);
    await join(event, 'a@example.org');
    await join(event, 'b@example.org');
    await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
    const results = await Promise.all([pass(), pass(), pass(), pass(), pass()]);
    expect(results.reduce((sum, r) => sum + r.offered, 0)).toBe(1);
    expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['OFFERED', 'WAITING']);
    expect(await tdb.db('queued_mail').where({ kind: 'waitlist-offer' }).count({ n: '*' }).first()).toEqual({ n: 1 });
    expect(await placesHeld(tdb.db, event.id)).toEqual({ registered: 0, offered: 1 });
  });

  it('a place is never sold publicly while an offer holds it, nor while anyone waits', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    await join(event, 'held@example.org');
    await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
    const { won, refused } = await settle<unknown>([publicRegistration(event, 1), pass(), publicRegistration(event, 2), publicRegistration(event, 3)]);
    expect(won).toHaveLength(1);
    expect(refused.length).toBe(3);
    expect(refused.every((error) => error instanceof SoldOutError)).toBe(true);
    expect(await placesHeld(tdb.db, event.id)).toEqual({ registered: 1, offered: 1 });
    // Nobody waits now, but the open offer still holds its place: for the form and for the office alike.
    await expect(publicRegistration(event, 4)).rejects.toBeInstanceOf(SoldOutError);
    const byOffice = (overCapacity: boolean) =>
      registerWithoutCard(
        ctx,
        event,
        { contact: { name: 'Office Add', email: 'office-add@example.org' }, attendees: [{ name: 'Office Add', tier: 'adult' }], family: false },
        { overCapacity, within: async () => {} },
      );
    await expect(byOffice(false)).rejects.toBeInstanceOf(SoldOutError);
    // The office can still go over the capacity knowingly.
    expect(await byOffice(true)).toMatchObject({ seatsLeftAfter: -1 });
  });

  it('a claimed offer link used again (even at the same moment) registers once; an expired one not at all', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    await join(event, 'claimer@example.org');
    await join(event, 'slow@example.org');
    for (const id of registrations) await cancelRegistration(ctx, { registration: id, ...office });
    expect(await pass()).toMatchObject({ offered: 2 });
    const first = await offerOf(event, 0);
    const { won, refused } = await settle([claim(event, first), claim(event, first, 'other@example.org'), claim(event, first)]);
    expect(won).toHaveLength(1);
    expect(refused.every((error) => error instanceof OfferNotOpenError)).toBe(true);
    await expect(claim(event, first)).rejects.toBeInstanceOf(OfferNotOpenError);

    const second = await offerOf(event, 1);
    ctx.clock.advance(24 * 3600_000);
    // Past its time, the link no longer claims, even before a pass has expired the offer.
    await expect(claim(event, second)).rejects.toBeInstanceOf(OfferNotOpenError);
    expect(await pass()).toMatchObject({ expired: 1 });
    await expect(claim(event, second)).rejects.toBeInstanceOf(OfferNotOpenError);
    expect(await tdb.db('registrations').where({ event_id: event.id }).whereNot('status', 'CANCELLED').count({ n: '*' }).first()).toEqual({ n: 1 });
    expect(await placesHeld(tdb.db, event.id)).toEqual({ registered: 1, offered: 0 });
  });

  it('no offer is made after the start, even when the start moves while the pass waits for the event', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 1);
    await join(event, 'late@example.org');
    await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
    const moving = await tdb.db.transaction();
    await moving('events').where({ id: event.id }).update({ starts_at: new Date('2026-11-21T23:00:00Z') });
    const waiting = pass();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await moving.commit();
    expect(await waiting).toMatchObject({ offered: 0 });
    expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['WAITING']);
  });

  it('an offer claimed while the office cancels another registration and a pass runs: every place counted once', async () => {
    for (let round = 0; round < 5; round++) {
      const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
      await join(event, `a-${round}@example.org`);
      await join(event, `b-${round}@example.org`);
      await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
      expect(await pass()).toMatchObject({ offered: 1 });
      const offer = await offerOf(event, 0);
      await Promise.all([claim(event, offer, `a-${round}@example.org`), cancelRegistration(ctx, { registration: registrations[1] as string, ...office }), pass()]);
      await pass();
      expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['CLAIMED', 'OFFERED']);
      expect(await placesHeld(tdb.db, event.id)).toEqual({ registered: 1, offered: 1 });
    }
  });
});
