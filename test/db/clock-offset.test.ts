import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { clockOffsetProblem, MAX_CLOCK_OFFSET_MS, measureClockOffset } from '../../src/db/clock-offset.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const minute = 60_000;

describe("a server's clock against the database's", () => {
  it('a clock in step measures within a round trip of zero, and raises nothing', async () => {
    const offset = await measureClockOffset(tdb.db, { now: () => new Date() });
    expect(Math.abs(offset)).toBeLessThan(1_000);
    expect(clockOffsetProblem(offset)).toBeUndefined();
  });

  it('a clock four minutes ahead or behind is measured as such and named, with what to do', async () => {
    const ahead = await measureClockOffset(tdb.db, new FixedClock(new Date(Date.now() + 4 * minute)));
    expect(ahead).toBeGreaterThan(4 * minute - 5_000);
    expect(ahead).toBeLessThan(4 * minute + 5_000);
    expect(clockOffsetProblem(ahead)).toMatch(/^this server's clock is 4 min ahead of the database's: .*Synchronise the clock \(NTP/);

    const behind = await measureClockOffset(tdb.db, new FixedClock(new Date(Date.now() - 30_000)));
    expect(clockOffsetProblem(behind)).toMatch(/^this server's clock is 3\d s behind the database's/);
  });

  it('up to the limit the clocks are in step; beyond it they are not', () => {
    expect(clockOffsetProblem(MAX_CLOCK_OFFSET_MS)).toBeUndefined();
    expect(clockOffsetProblem(-MAX_CLOCK_OFFSET_MS)).toBeUndefined();
    expect(clockOffsetProblem(MAX_CLOCK_OFFSET_MS + 1)).toMatch(/ahead of the database's/);
  });
});

describe('serve reports a clock out of step when it starts', () => {
  it('a server four minutes ahead writes a ClockOffsetError to the error log, which the error digest then mails; one in step writes nothing', async () => {
    const { reportClockOffset } = await import('../../src/ops/clock-check.js');
    const { silentLogger } = await import('../../src/logger.js');
    expect(await reportClockOffset({ db: tdb.db, clock: { now: () => new Date() }, logger: silentLogger() })).toBeDefined();
    expect(await tdb.db('error_logs').where({ source: 'serve:clock' })).toHaveLength(0);

    await reportClockOffset({ db: tdb.db, clock: new FixedClock(new Date(Date.now() + 4 * minute)), logger: silentLogger() });
    const [row] = await tdb.db('error_logs').where({ source: 'serve:clock' });
    expect(row).toMatchObject({ error_class: 'ClockOffsetError' });
    expect(row.message).toMatch(/^this server's clock is 4 min ahead of the database's/);
  });
});
