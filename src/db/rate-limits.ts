import type { Db } from './connect.js';

/**
 * Fixed-window hit counters in PostgreSQL (table rate_limits), so a limit
 * holds across restarts and across every server on the same database. A
 * bucket names what is limited ("cron-bearer", "setup", "confirmation-email");
 * the client key is whom it is counted for (a client address, an email lookup
 * hash — never a plain address).
 */

export interface RateLimitHit {
  /** Hits in the current window, this one included. */
  hits: number;
  /** Milliseconds until the window ends and the count starts again. */
  ttlMs: number;
}

/**
 * Counts one hit in one statement: a new key or an ended window starts a new
 * window at 1, otherwise the count goes up. Concurrent hits on one key are
 * serialised by the row, so none is lost.
 */
export async function countRateLimitHit(
  db: Db,
  hit: { bucket: string; key: string; windowMs: number; now: Date },
): Promise<RateLimitHit> {
  const windowEndsAt = new Date(hit.now.getTime() + hit.windowMs);
  const result = await db.raw<{ rows: Array<{ hits: number; window_ends_at: Date }> }>(
    `INSERT INTO rate_limits AS r (bucket, client_key, hits, window_ends_at) VALUES (?, ?, 1, ?)
     ON CONFLICT (bucket, client_key) DO UPDATE SET
       hits = CASE WHEN r.window_ends_at <= ? THEN 1 ELSE r.hits + 1 END,
       window_ends_at = CASE WHEN r.window_ends_at <= ? THEN EXCLUDED.window_ends_at ELSE r.window_ends_at END
     RETURNING hits, window_ends_at`,
    [hit.bucket, hit.key, windowEndsAt, hit.now, hit.now],
  );
  const row = result.rows[0];
  if (!row) throw new Error('rate limit counter returned no row');
  return { hits: row.hits, ttlMs: Math.max(0, row.window_ends_at.getTime() - hit.now.getTime()) };
}

/** Deletes counters whose window ended before `before`; they would restart at 1 anyway. */
export async function purgeEndedRateLimits(db: Db, before: Date): Promise<number> {
  return db('rate_limits').where('window_ends_at', '<', before).delete();
}
