import { mailboxKey } from '../../../src/canonical-mailbox.js';
import { publicClient } from '../../../src/client-key.js';
import { CONFIRMATIONS_PER_ADDRESS_PER_HOUR } from '../../../src/registrations/email-caps.js';
import type { FloorContext } from './floor-context.js';

/**
 * The limits the rush floor keeps, as ours keeps them and counted where ours counts them (PostgreSQL's
 * `rate_limits`, shared by every server): the form's posts per address a minute (the church's network gets
 * its own, higher limit), the confirmation emails per client and per mailbox an hour (the church's network
 * has no per-client cap), and the unpaid places per client and per mailbox (counted in the seat statement).
 */

const HOUR_MS = 60 * 60_000;
/** PUBLIC_FORM_POSTS_PER_MINUTE of src/http/public-pages.ts (not imported: that module loads fastify). */
const FORM_POSTS_PER_MINUTE = 10;

/** One hit on a window counter: the same upsert ours runs (src/db/rate-limits.ts). Parameters: bucket, key, window end, now. */
export function rateLimitHitSql(bucket: string, key: string, now: string, windowEnd: string): string {
  return `INSERT INTO rate_limits AS r (bucket, client_key, hits, window_ends_at) VALUES (${bucket}, ${key}, 1, ${windowEnd})
     ON CONFLICT (bucket, client_key) DO UPDATE SET
       hits = CASE WHEN r.window_ends_at <= ${now} THEN 1 ELSE r.hits + 1 END,
       window_ends_at = CASE WHEN r.window_ends_at <= ${now} THEN EXCLUDED.window_ends_at ELSE r.window_ends_at END
     RETURNING hits, window_ends_at`;
}

export interface FloorClient {
  key: string;
  churchNetwork: boolean;
}

export function clientOf(ctx: FloorContext, remoteAddress: string): FloorClient {
  return publicClient(remoteAddress, ctx.config.limits.churchNetworks);
}

/** The form's limit per address a minute: undefined when within it, else the seconds to wait (Retry-After). */
export async function formPostRefused(ctx: FloorContext, client: FloorClient, route: string, now: Date): Promise<number | undefined> {
  const { rows } = await ctx.pool.query<{ hits: number; window_ends_at: Date }>(rateLimitHitSql('$1', '$2', '$3', '$4'), [
    route,
    client.key,
    now,
    new Date(now.getTime() + 60_000),
  ]);
  const row = rows[0];
  const max = client.churchNetwork ? ctx.config.limits.churchNetworkFormPostsPerMinute : FORM_POSTS_PER_MINUTE;
  if (!row || row.hits <= max) return undefined;
  return Math.ceil(Math.max(0, row.window_ends_at.getTime() - now.getTime()) / 1000);
}

/**
 * The hourly confirmation caps as CTEs of the statement that queues the mail (`client_hit`, `mailbox_hit`),
 * and the condition under which it is queued. `next` is the first free placeholder number; the values go
 * after the statement's own.
 */
export function confirmationCapsSql(
  ctx: FloorContext,
  client: FloorClient,
  email: string,
  now: Date,
  next: number,
): { ctes: string; within: string; values: unknown[] } {
  const values: unknown[] = [now, new Date(now.getTime() + HOUR_MS)];
  const param = (value: unknown, type: string) => `$${next + values.push(value) - 1}::${type}`;
  const at = `$${next}::timestamptz`;
  const end = `$${next + 1}::timestamptz`;
  const ctes: string[] = [];
  const within: string[] = [];
  if (!client.churchNetwork) {
    ctes.push(`client_hit AS (${rateLimitHitSql(param('confirmation-email-client', 'text'), param(client.key, 'text'), at, end)})`);
    within.push(`(SELECT hits FROM client_hit) <= ${ctx.config.limits.confirmationEmailsPerClientPerHour}`);
  }
  ctes.push(`mailbox_hit AS (${rateLimitHitSql(param('confirmation-email', 'text'), param(mailboxKey(ctx.cipher, email), 'text'), at, end)})`);
  within.push(`(SELECT hits FROM mailbox_hit) <= ${CONFIRMATIONS_PER_ADDRESS_PER_HOUR}`);
  return { ctes: ctes.join(', '), within: within.join(' AND '), values };
}
