import type { Db } from '../../src/db/connect.js';

/**
 * Makes racing transactions meet at the dangerous point, without sleeps. A blocker transaction holds
 * `LOCK TABLE … IN EXCLUSIVE MODE` on the tables the racers write: plain reads pass it, writes and
 * `SELECT … FOR UPDATE` wait for it. The test starts the racers, waits until enough of them wait for a
 * lock, and opens the gate. Under the lock being tested, the racer that took it first waits at the gate
 * and the others wait for it before they have read anything; without that lock, every racer has read
 * the same counts by the time the gate opens, and each acts on them.
 */
export interface RaceGate {
  /** A racer started by the test: its failure is kept for the test to read, never reported as unhandled. */
  started<T>(racer: Promise<T>): Promise<T>;
  /**
   * Resolves once at least `count` sessions wait for a lock (the gate's, or one a racer holds), or every one of
   * `racers` (by default every racer started) has settled.
   */
  waiting(count: number, racers?: Array<Promise<unknown>>): Promise<void>;
  /** Commits the blocker: the racers go on. */
  open(): Promise<void>;
}

export async function closeGate(db: Db, tables: string[]): Promise<RaceGate> {
  const blocker = await db.transaction();
  await blocker.raw(`LOCK TABLE ${tables.map(() => '??').join(', ')} IN EXCLUSIVE MODE`, tables);
  const racers: Array<Promise<unknown>> = [];
  let opened = false;
  const open = async () => {
    if (opened) return;
    opened = true;
    await blocker.commit();
  };
  return {
    started(racer) {
      racer.catch(() => {});
      racers.push(racer);
      return racer;
    },
    async waiting(count, some = racers) {
      try {
        await untilWaitingForLocks(db, count, some);
      } catch (error) {
        // Never leave the racers queued behind a gate nobody will open.
        await open();
        throw error;
      }
    },
    open,
  };
}

/**
 * Polls until at least `count` sessions of the test's database wait for a lock, or every one of
 * `racers` has settled (a racer that no longer waits where the test expected it to); fails after
 * `timeoutMs`.
 */
export async function untilWaitingForLocks(db: Db, count: number, racers: Array<Promise<unknown>> = [], timeoutMs = 10_000): Promise<void> {
  let settled = false;
  if (racers.length > 0) void Promise.allSettled(racers).then(() => (settled = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const waiting = await lockWaiters(db);
    if (waiting >= count || settled) return;
    if (Date.now() > deadline) throw new Error(`${waiting} of ${count} racers came to wait for a lock within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Sessions of this database waiting for a heavyweight lock (a table, a row, another transaction). */
async function lockWaiters(db: Db): Promise<number> {
  const result = await db.raw<{ rows: Array<{ n: number }> }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
  );
  return result.rows[0]?.n ?? 0;
}
