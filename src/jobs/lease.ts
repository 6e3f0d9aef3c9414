import crypto from 'node:crypto';
import type { AppContext } from '../context.js';
import { LeaseHeldError } from '../errors.js';
import { releaseLease, takeLease } from '../db/leases.js';

/**
 * Runs `fn` while holding the named lease; another live holder → LeaseHeldError
 * (exit 75, HTTP 409). The lease is released afterwards; a crashed holder's
 * lease simply expires after `ttlMs`.
 */
export async function withJobLease<T>(ctx: AppContext, name: string, ttlMs: number, fn: (holder: string) => Promise<T>): Promise<T> {
  const holder = `${process.pid}:${crypto.randomUUID()}`;
  const lease = await takeLease(ctx.db, { name, holder, now: ctx.clock.now(), ttlMs });
  if (!lease.acquired) throw new LeaseHeldError(name, lease.acquiredAt);
  try {
    return await fn(holder);
  } finally {
    await releaseLease(ctx.db, { name, holder }).catch((error: unknown) =>
      ctx.logger.warn({ err: error, lease: name }, 'could not release lease; it will expire'),
    );
  }
}
