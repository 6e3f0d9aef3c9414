import type { Db } from '../db/connect.js';

/**
 * What one check-in link may ask of the server in a minute, whoever holds it: each request costs 1, and each tap
 * it records 1 more. A live link is never stopped by the guessers' limit (checkin-routes.ts), so without this a
 * link's holder could run the roll and its transactions as fast as they could send. 300 is far above a door's
 * pace (a volunteer taps one arrival every few seconds; a phone back online sends its queue in uploads of
 * MOST_TAPS_PER_UPLOAD), and the page keeps whatever was refused and sends it again.
 */
export const LINK_BUDGET_PER_MINUTE = 300;
/** The most taps one upload records; the rest of a longer queue is left for the page's next upload. */
export const MOST_TAPS_PER_UPLOAD = 100;

const WINDOW_MS = 60_000;
const BUCKET = 'checkin-link';

/**
 * Spends `cost` of the link's budget for the current minute in one statement (rate_limits, keyed by the link's
 * id): spent and true when it fits; nothing spent and the seconds until the minute ends when it does not.
 */
export async function spendLinkBudget(db: Db, linkId: string, cost: number, now: Date): Promise<{ ok: true } | { ok: false; retryAfterSeconds: number }> {
  const windowEndsAt = new Date(now.getTime() + WINDOW_MS);
  const spent = await db.raw<{ rows: unknown[] }>(
    `INSERT INTO rate_limits AS r (bucket, client_key, hits, window_ends_at) VALUES (?, ?, ?, ?)
     ON CONFLICT (bucket, client_key) DO UPDATE SET
       hits = CASE WHEN r.window_ends_at <= ? THEN EXCLUDED.hits ELSE r.hits + EXCLUDED.hits END,
       window_ends_at = CASE WHEN r.window_ends_at <= ? THEN EXCLUDED.window_ends_at ELSE r.window_ends_at END
     WHERE r.window_ends_at <= ? OR r.hits + EXCLUDED.hits <= ?
     RETURNING 1`,
    [BUCKET, linkId, cost, windowEndsAt, now, now, now, LINK_BUDGET_PER_MINUTE],
  );
  if (spent.rows.length === 1) return { ok: true };
  const row = await db('rate_limits').where({ bucket: BUCKET, client_key: linkId }).first<{ window_ends_at: Date } | undefined>('window_ends_at');
  const left = row ? row.window_ends_at.getTime() - now.getTime() : WINDOW_MS;
  return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(left / 1000)) };
}
