import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { AppContext } from '../context.js';
import { countRateLimitHit } from '../db/rate-limits.js';

type Incr = FastifyRateLimitStore['incr'];
type Callback = Parameters<Incr>[1];

interface RouteLimit {
  /** The bucket: a route's `groupId`, so several routes can share one count (every cron job). */
  groupId?: string;
  routeInfo?: { method?: string | string[]; url?: string };
}

/**
 * A store for @fastify/rate-limit (its `store` option) that keeps the counts
 * in PostgreSQL through countRateLimitHit: limits survive restarts and are
 * shared by every server on the database. The plugin calls `child` once per
 * limited route and `incr(key, callback, timeWindow, max)` once per request.
 */
export function postgresRateLimitStore(ctx: Pick<AppContext, 'db' | 'clock'>): FastifyRateLimitStoreCtor {
  class PostgresRateLimitStore implements FastifyRateLimitStore {
    constructor(
      _options: unknown,
      private readonly bucket = 'global',
      private readonly keySuffix = '',
    ) {}

    incr(key: string, callback: Callback, timeWindow?: number): void {
      // The plugin appends the route's groupId to the client key; the bucket already says it.
      const client = this.keySuffix && key.endsWith(this.keySuffix) ? key.slice(0, -this.keySuffix.length) : key;
      countRateLimitHit(ctx.db, { bucket: this.bucket, key: client, windowMs: timeWindow ?? 60_000, now: ctx.clock.now() }).then(
        (hit) => callback(null, { current: hit.hits, ttl: hit.ttlMs }),
        (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))),
      );
    }

    // Declared as the route's options; at run time it is the route's merged limit settings.
    child(routeOptions: object): FastifyRateLimitStore {
      const { groupId, routeInfo } = routeOptions as RouteLimit;
      const route = `${[routeInfo?.method ?? ''].flat().join(',')} ${routeInfo?.url ?? ''}`;
      return new PostgresRateLimitStore(undefined, groupId ?? route, groupId ?? '');
    }
  }
  return PostgresRateLimitStore as unknown as FastifyRateLimitStoreCtor;
}
