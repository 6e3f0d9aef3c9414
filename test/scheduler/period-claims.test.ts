import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimPeriod, claimSlots, extendPeriodClaim, markPeriodDone, pruneSlots, releasePeriod } from '../../src/scheduler/period-claims.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { periodRow } from './support.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const t0 = new Date('2026-11-21T20:00:00Z');
const minutes = (n: number) => new Date(t0.getTime() + n * 60_000);
const TTL = 30 * 60_000;
const claim = (key: string, at: Date) => claimPeriod(tdb.db, { key, job: 'send-celebrations', now: at, claimTtlMs: TTL });

describe('period claims', () => {
  it('only one of many concurrent claimers gets a new period', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, () => claim('send-celebrations:a', t0)));
    expect(results.filter((r) => r.claimed)).toEqual([{ claimed: true, attempt: 1 }]);
    expect(results.filter((r) => !r.claimed).every((r) => !r.claimed && r.reason === 'running')).toBe(true);
  });

  it('a released attempt waits 30 minutes, and a period gets at most 3 attempts', async () => {
    const key = 'send-celebrations:b';
    expect(await claim(key, t0)).toEqual({ claimed: true, attempt: 1 });
    await releasePeriod(tdb.db, { key, attempt: 1, claimedAt: t0 });
    expect(await claim(key, minutes(29))).toEqual({ claimed: false, reason: 'waiting', retryAt: minutes(30) });
    expect(await claim(key, minutes(30))).toEqual({ claimed: true, attempt: 2 });
    await releasePeriod(tdb.db, { key, attempt: 2, claimedAt: minutes(30) });
    expect(await claim(key, minutes(60))).toEqual({ claimed: true, attempt: 3 });
    await releasePeriod(tdb.db, { key, attempt: 3, claimedAt: minutes(60) });
    expect(await claim(key, minutes(600))).toEqual({ claimed: false, reason: 'exhausted' });
  });

  it('attempts made before attemptsFrom no longer count: the digest has 3 attempts per local day, numbered afresh', async () => {
    const key = 'send-clearance-digest:2026-11';
    const claimDigest = (at: Date, attemptsFrom: Date) => claimPeriod(tdb.db, { key, job: 'send-clearance-digest', now: at, claimTtlMs: TTL, attemptsFrom });
    for (const [attempt, at] of [minutes(0), minutes(30), minutes(60)].entries()) {
      expect(await claimDigest(at, t0)).toEqual({ claimed: true, attempt: attempt + 1 });
      await releasePeriod(tdb.db, { key, attempt: attempt + 1, claimedAt: at });
    }
    expect(await claimDigest(minutes(600), t0)).toEqual({ claimed: false, reason: 'exhausted' });
    const nextDay = minutes(24 * 60);
    expect(await claimDigest(nextDay, nextDay)).toEqual({ claimed: true, attempt: 1 });
    expect(await periodRow(tdb.db, key)).toMatchObject({ attempts: 1, done_at: null });
  });

  it("yesterday's lapsed digest attempt can neither renew nor release today's attempt 1, which has the same number", async () => {
    const key = 'send-clearance-digest:2026-12';
    const claimDigest = (at: Date, attemptsFrom: Date) => claimPeriod(tdb.db, { key, job: 'send-clearance-digest', now: at, claimTtlMs: TTL, attemptsFrom });
    // Yesterday's attempt 1 claimed at noon, hung, and its claim lapsed; today's attempt 1 claims afresh (attempts restart with the local day).
    const yesterday = new Date('2026-12-02T12:00:00Z');
    const today = new Date('2026-12-03T13:00:00Z');
    expect(await claimDigest(yesterday, new Date('2026-12-02T00:00:00Z'))).toEqual({ claimed: true, attempt: 1 });
    expect(await claimDigest(today, new Date('2026-12-03T00:00:00Z'))).toEqual({ claimed: true, attempt: 1 });
    const todays = await periodRow(tdb.db, key);
    expect(todays).toMatchObject({ attempts: 1, last_attempt_at: today, claimed_until: new Date(today.getTime() + TTL) });

    // Yesterday's attempt still runs: its heartbeat and its release carry its own claim's timestamp.
    expect(await extendPeriodClaim(tdb.db, { key, attempt: 1, claimedAt: yesterday, until: new Date(today.getTime() + 3 * TTL) })).toBe(false);
    await releasePeriod(tdb.db, { key, attempt: 1, claimedAt: yesterday });
    await releasePeriod(tdb.db, { key, attempt: 1, claimedAt: yesterday, refundAttempt: true });
    expect(await periodRow(tdb.db, key)).toEqual(todays);

    // Today's attempt still owns it.
    expect(await extendPeriodClaim(tdb.db, { key, attempt: 1, claimedAt: today, until: new Date(today.getTime() + 2 * TTL) })).toBe(true);
    await releasePeriod(tdb.db, { key, attempt: 1, claimedAt: today });
    expect(await periodRow(tdb.db, key)).toMatchObject({ attempts: 1, claimed_until: null, last_attempt_at: today });
  });

  it('a done period is never claimed again', async () => {
    const key = 'send-celebrations:c';
    await claim(key, t0);
    await markPeriodDone(tdb.db, { key, now: minutes(1) });
    expect(await claim(key, minutes(120))).toEqual({ claimed: false, reason: 'done' });
    expect(await periodRow(tdb.db, key)).toMatchObject({ attempts: 1, done_at: minutes(1), claimed_until: null });
  });

  it('a live claim refuses others until it expires; renewing it keeps it live', async () => {
    const key = 'send-celebrations:d';
    await claim(key, t0);
    expect(await extendPeriodClaim(tdb.db, { key, attempt: 1, claimedAt: t0, until: minutes(60) })).toBe(true);
    expect(await claim(key, minutes(45))).toEqual({ claimed: false, reason: 'running' });
    expect(await claim(key, minutes(61))).toEqual({ claimed: true, attempt: 2 });
    // The first attempt's claim is no longer its own: it can neither renew nor release it.
    expect(await extendPeriodClaim(tdb.db, { key, attempt: 1, claimedAt: t0, until: minutes(200) })).toBe(false);
    await releasePeriod(tdb.db, { key, attempt: 1, claimedAt: t0 });
    expect((await periodRow(tdb.db, key))?.claimed_until).toEqual(minutes(61 + 30));
  });

  it('an attempt given back (lease held elsewhere) does not count towards the 3', async () => {
    const key = 'send-celebrations:e';
    await claim(key, t0);
    await releasePeriod(tdb.db, { key, attempt: 1, claimedAt: t0, refundAttempt: true });
    expect(await periodRow(tdb.db, key)).toMatchObject({ attempts: 0, claimed_until: null });
    expect(await claim(key, minutes(10))).toMatchObject({ reason: 'waiting' });
    expect(await claim(key, minutes(30))).toEqual({ claimed: true, attempt: 1 });
  });
});

describe('slot claims', () => {
  it('each slot key is won once, by one of two concurrent claimers', async () => {
    const slots = [
      { key: 'send-reminders:2026-11-22T10:30Z', job: 'send-reminders' as const },
      { key: 'sweep-checkouts:2026-11-22T10:30Z', job: 'sweep-checkouts' as const },
    ];
    const now = new Date('2026-11-22T10:30:00Z');
    const slotEnd = new Date('2026-11-22T11:00:00Z');
    const [a, b] = await Promise.all([claimSlots(tdb.db, { slots, now, slotEnd }), claimSlots(tdb.db, { slots, now, slotEnd })]);
    expect([...a!, ...b!].sort()).toEqual(slots.map((s) => s.key).sort());
    expect(await claimSlots(tdb.db, { slots, now, slotEnd })).toEqual(new Set());
  });

  it('pruning deletes only old rows of the interval jobs', async () => {
    await claimSlots(tdb.db, { slots: [{ key: 'send-reminders:2026-11-01T00:00Z', job: 'send-reminders' }], now: new Date('2026-11-01T00:00:00Z'), slotEnd: new Date('2026-11-01T00:30:00Z') });
    await claim('send-celebrations:2026-11-01', new Date('2026-11-01T00:00:00Z'));
    const deleted = await pruneSlots(tdb.db, { jobs: ['send-reminders', 'sweep-checkouts'], before: new Date('2026-11-10T00:00:00Z') });
    expect(deleted).toBe(1);
    expect(await periodRow(tdb.db, 'send-reminders:2026-11-01T00:00Z')).toBeUndefined();
    expect(await periodRow(tdb.db, 'send-celebrations:2026-11-01')).toBeDefined();
  });
});
