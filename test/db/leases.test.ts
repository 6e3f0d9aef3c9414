import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseLease, renewLease, takeLease } from '../../src/db/leases.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const t0 = new Date('2026-11-22T00:00:00Z');
const minutes = (n: number) => n * 60_000;

describe('leases', () => {
  it('a live lease refuses another holder and names the holder and start time', async () => {
    const first = await takeLease(tdb.db, { name: 'a', holder: 'run-1', now: t0, ttlMs: minutes(30) });
    expect(first.acquired).toBe(true);
    const second = await takeLease(tdb.db, { name: 'a', holder: 'run-2', now: new Date(t0.getTime() + minutes(5)), ttlMs: minutes(30) });
    expect(second).toMatchObject({ acquired: false, holder: 'run-1', acquiredAt: t0 });
  });

  it('an expired lease from a crashed holder is taken over', async () => {
    await takeLease(tdb.db, { name: 'b', holder: 'crashed', now: t0, ttlMs: minutes(30) });
    const later = await takeLease(tdb.db, { name: 'b', holder: 'next', now: new Date(t0.getTime() + minutes(31)), ttlMs: minutes(30) });
    expect(later.acquired).toBe(true);
    const row = await tdb.db('leases').where({ name: 'b' }).first();
    expect(row.holder).toBe('next');
  });

  it('only one of many concurrent takers gets a free lease', async () => {
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => takeLease(tdb.db, { name: 'c', holder: `r${i}`, now: t0, ttlMs: minutes(30) })),
    );
    expect(results.filter((r) => r.acquired)).toHaveLength(1);
  });

  it('renew and release act only for the holder', async () => {
    await takeLease(tdb.db, { name: 'd', holder: 'owner', now: t0, ttlMs: minutes(1) });
    expect(await renewLease(tdb.db, { name: 'd', holder: 'intruder', now: t0, ttlMs: minutes(30) })).toBe(false);
    expect(await renewLease(tdb.db, { name: 'd', holder: 'owner', now: t0, ttlMs: minutes(30) })).toBe(true);
    await releaseLease(tdb.db, { name: 'd', holder: 'intruder' });
    expect(await tdb.db('leases').where({ name: 'd' }).first()).toBeDefined();
    await releaseLease(tdb.db, { name: 'd', holder: 'owner' });
    expect(await tdb.db('leases').where({ name: 'd' }).first()).toBeUndefined();
  });
});
