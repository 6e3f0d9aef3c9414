import type { Clock } from '../clock.js';
import type { Db } from './connect.js';

/**
 * Beyond this, a server's clock is treated as out of step with the database's. Claims on queued
 * mail and website notifications are timed by the database, but scheduler periods and job leases
 * by each server's clock, and the narrowest margin among them (a website post's timeout) is 10 s.
 */
export const MAX_CLOCK_OFFSET_MS = 5_000;

/** This server's clock minus the database's (positive: ahead), read at the midpoint of one round trip. */
export async function measureClockOffset(db: Db, clock: Clock): Promise<number> {
  const before = clock.now().getTime();
  const { rows } = await db.raw<{ rows: Array<{ now: Date }> }>('SELECT clock_timestamp() AS now');
  const after = clock.now().getTime();
  const databaseNow = rows[0]?.now;
  if (!databaseNow) throw new Error('the database did not report its time');
  return Math.round((before + after) / 2 - databaseNow.getTime());
}

export class ClockOffsetError extends Error {
  override name = 'ClockOffsetError';
}

/** A sentence for a server out of step, or undefined when it is in step. */
export function clockOffsetProblem(offsetMs: number): string | undefined {
  if (Math.abs(offsetMs) <= MAX_CLOCK_OFFSET_MS) return undefined;
  const seconds = Math.round(Math.abs(offsetMs) / 1000);
  const amount = seconds < 120 ? `${seconds} s` : `${Math.round(seconds / 60)} min`;
  return (
    `this server's clock is ${amount} ${offsetMs > 0 ? 'ahead of' : 'behind'} the database's: ` +
    'scheduler periods and job leases are timed by each server, so two servers could both run a job. ' +
    'Synchronise the clock (NTP, e.g. `timedatectl set-ntp true`)'
  );
}
