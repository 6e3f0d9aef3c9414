import type { Db } from './connect.js';
import type { Knex } from 'knex';

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
  const counted = rateLimitHitSql({ bucket: hit.bucket, key: hit.key, windowEndsAt, now: hit.now });
  const result = await db.raw<{ rows: Array<{ hits: number; window_ends_at: Date }> }>(counted.sql, counted.bindings);
  const row = result.rows[0];
  if (!row) throw new Error('rate limit counter returned no row');
  return { hits: row.hits, ttlMs: Math.max(0, row.window_ends_at.getTime() - hit.now.getTime()) };
}

/**
 * countRateLimitHit's upsert as SQL with `?` placeholders, for a statement that counts a hit on its way (a CTE).
 * `onlyIf`, an SQL condition without placeholders, leaves the hit uncounted (and the statement returns no row) when false.
 */
export function rateLimitHitSql(hit: { bucket: string; key: string; windowEndsAt: Date; now: Date; onlyIf?: string }): { sql: string; bindings: Knex.RawBinding[] } {
  return {
    sql: `INSERT INTO rate_limits AS r (bucket, client_key, hits, window_ends_at) SELECT ?::text, ?::text, 1, ?::timestamptz${hit.onlyIf ? ` WHERE ${hit.onlyIf}` : ''}
     ON CONFLICT (bucket, client_key) DO UPDATE SET
       hits = CASE WHEN r.window_ends_at <= ?::timestamptz THEN 1 ELSE r.hits + 1 END,
       window_ends_at = CASE WHEN r.window_ends_at <= ?::timestamptz THEN EXCLUDED.window_ends_at ELSE r.window_ends_at END
     RETURNING hits, window_ends_at`,
    bindings: [hit.bucket, hit.key, hit.windowEndsAt, hit.now, hit.now],
  };
}

/** Deletes counters whose window ended before `before`; they would restart at 1 anyway. */
export async function purgeEndedRateLimits(db: Db, before: Date): Promise<number> {
  return db('rate_limits').where('window_ends_at', '<', before).delete();
}
