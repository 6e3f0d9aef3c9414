import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { registerWithoutCard, SoldOutError } from '../../src/signup/register.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { OfferNotOpenError } from '../../src/registrations/waitlist/claim.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { closeGate, untilWaitingForLocks } from '../support/race-gate.js';
import { entries, fullWaitlistEvent, placesHeld } from './waitlist-support.js';

/**
 * Each race runs concurrent transactions on real PostgreSQL. Every path that moves places (registering,
 * claiming, offering, expiring, cancelling) takes the event's row lock first, so none of them sees the
 * others half done. A gate (test/support/race-gate.ts) holds the racers at their first write until each
 * has read what it decides on, or waits behind the lock that protects the race; each test names that lock,
 * and fails without it.
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
/** The office's `registrations add`: it may take any free place, waiting list or not; `overCapacity` goes past the capacity knowingly. */
const byOffice = (event: EventRecord, overCapacity: boolean) =>
  registerWithoutCard(
    ctx,
    event,
    { contact: { name: 'Office Add', email: 'office-add@example.org' }, attendees: [{ name: 'Office Add', tier: 'adult' }], family: false },
    { overCapacity, within: async () => {} },
  );

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
  // Protected by the event's row lock (lockEventForSeats): each pass counts the free places under it. Without it,
  // all five passes have counted the one free place by the time the gate opens, and each offers it to someone.
  it('a freed place is offered once, however many passes run at once (servers, the sweep, the minute loop)', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 1);
    await join(event, 'a@example.org');
    await join(event, 'b@example.org');
    await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
    // A pass's first write is to the list (expiring the offers past their time): the gate holds it there.
    const gate = await closeGate(tdb.db, ['waitlist_entries']);
    const passes = Array.from({ length: 5 }, () => gate.started(pass()));
    await gate.waiting(5);
    await gate.open();
    const { won, refused } = await settle(passes);
    expect(refused).toEqual([]);
    expect(won.reduce((sum, r) => sum + r.offered, 0)).toBe(1);
    expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['OFFERED', 'WAITING']);
    expect(await tdb.db('queued_mail').where({ kind: 'waitlist-offer' }).count({ n: '*' }).first()).toEqual({ n: 1 });
    expect(await placesHeld(tdb.db, event.id)).toEqual({ registered: 0, offered: 1 });
  });

  // Protected by the event's row lock: the pass and the office's add both decide on the freed place from counts
  // read under it. Without it, both have counted the place free by the time the gate opens, and both take it.
  // The public form's registrations are refused whatever the locks: places held and entries waiting are counted
  // in one statement, so the form sees either someone waiting or the offer holding the place.
  it('a place is never sold publicly while an offer holds it, nor while anyone waits, nor to the office as well as offered', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    await join(event, 'held@example.org');
    await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
    // The pass first: it counts the freed place and waits at the gate (under the event's lock, holding it); then the
    // others, which write registrations. The office's add waits behind the lock, or without it at the gate.
    const gate = await closeGate(tdb.db, ['waitlist_entries', 'registrations']);
    const racers: Array<Promise<unknown>> = [gate.started(pass())];
    await gate.waiting(1);
    for (const n of [1, 2, 3]) racers.push(gate.started(publicRegistration(event, n)));
    racers.push(gate.started(byOffice(event, false)));
    await gate.waiting(2);
    await gate.open();
    const { won, refused } = await settle(racers);
    expect(won).toEqual([{ offered: 1, expired: 0, lapsed: 0 }]);
    expect(refused.length).toBe(4);
    expect(refused.every((error) => error instanceof SoldOutError)).toBe(true);
    expect(await placesHeld(tdb.db, event.id)).toEqual({ registered: 1, offered: 1 });
    // Nobody waits now, but the open offer still holds its place: for the form and for the office alike.
    await expect(publicRegistration(event, 4)).rejects.toBeInstanceOf(SoldOutError);
    await expect(byOffice(event, false)).rejects.toBeInstanceOf(SoldOutError);
    // The office can still go over the capacity knowingly.
    expect(await byOffice(event, true)).toMatchObject({ seatsLeftAfter: -1 });
  });

  it('a claimed offer link used again (even at the same moment) registers once; an expired one not at all', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    await join(event, 'claimer@example.org');
    await join(event, 'slow@example.org');
    for (const id of registrations) await cancelRegistration(ctx, { registration: id, ...office });
    expect(await pass()).toMatchObject({ offered: 2 });
    const first = await offerOf(event, 0);
    // Protected by the offer's entry row lock, taken twice: lockOpenOffer reads the offer FOR UPDATE, and
    // markOfferClaimed's UPDATE … WHERE state = 'OFFERED' takes it again and reads the state again; the event's row
    // lock in front serialises the claims as well. Any one of the three keeps one claim; without all three, each
    // claim has read the offer open by the time the gate (at the registration's insert) opens, and each registers.
    const gate = await closeGate(tdb.db, ['registrations']);
    const claims = [claim(event, first), claim(event, first, 'other@example.org'), claim(event, first)].map((c) => gate.started(c));
    await gate.waiting(3);
    await gate.open();
    const { won, refused } = await settle(claims);
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

  // Protected by the event's row lock: the pass reads the event FOR UPDATE, so it waits for the move and reads the
  // new start. Without it, the pass reads the old start without waiting and makes the offer.
  it('no offer is made after the start, even when the start moves while the pass waits for the event', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 1);
    await join(event, 'late@example.org');
    await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
    const moving = await tdb.db.transaction();
    await moving('events').where({ id: event.id }).update({ starts_at: new Date('2026-11-21T23:00:00Z') });
    const waiting = pass();
    await untilWaitingForLocks(tdb.db, 1, [waiting]);
    await moving.commit();
    expect(await waiting).toMatchObject({ offered: 0 });
    expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['WAITING']);
  });

  // Protected by the event's row lock: the two passes (say the minute loop and a server's) both decide on the place
  // the cancellation frees. Without it, both have counted that place free by the time the gate opens, and both offer
  // it. The claim and the cancellation alone cannot miscount even without the lock: places are counted in one
  // statement and each of them commits whole, so a pass sees each either done or not begun.
  it('an offer claimed while the office cancels another registration and passes run: every place counted once', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx.cipher, 2);
    await join(event, 'a@example.org');
    await join(event, 'b@example.org');
    await join(event, 'c@example.org');
    await cancelRegistration(ctx, { registration: registrations[0] as string, ...office });
    expect(await pass()).toMatchObject({ offered: 1 });
    const offer = await offerOf(event, 0);
    // In this order: the claim waits at the gate (holding the event's lock, under it); the cancellation is done (or
    // waits behind the claim); then the passes count the places and wait at the gate or behind the lock.
    const gate = await closeGate(tdb.db, ['waitlist_entries']);
    const racers: Array<Promise<unknown>> = [gate.started(claim(event, offer, 'a@example.org'))];
    await gate.waiting(1);
    const cancelling = gate.started(cancelRegistration(ctx, { registration: registrations[1] as string, ...office }));
    racers.push(cancelling);
    await gate.waiting(2, [cancelling]);
    racers.push(gate.started(pass()), gate.started(pass()));
    await gate.waiting(3);
    await gate.open();
    expect((await settle(racers)).refused).toEqual([]);
    await pass();
    expect((await entries(tdb.db, event.id)).map((e) => e.state)).toEqual(['CLAIMED', 'OFFERED', 'WAITING']);
    expect(await placesHeld(tdb.db, event.id)).toEqual({ registered: 1, offered: 1 });
  });
});
