import type { FastifyRateLimitStore, FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import ipaddr from 'ipaddr.js';
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

/** The one key every address that cannot be read shares: each its own key would be a limit per made-up string. */
export const UNPARSEABLE_CLIENT = 'unparseable';

/**
 * The client a limit counts: an IPv4 address as it is (an IPv4-mapped IPv6 one as IPv4), an
 * IPv6 address by its /64, the block one household or server is normally given; counting each
 * address of it apart would let one client rotate through 2^64 of them. Some proxies append
 * the client's port (`203.0.113.5:40000`, `[2001:db8::1]:443`), new on every connection, so
 * it is dropped first.
 */
export function rateLimitClient(ip: string): string {
  const host = withoutPort(ip);
  if (!ipaddr.isValid(host)) return UNPARSEABLE_CLIENT;
  const address = ipaddr.process(host);
  if (address.kind() === 'ipv4') return address.toString();
  const prefix = (address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return `${prefix.join(':')}::/64`;
}

/** `a.b.c.d:port` and `[v6]:port` (or `[v6]`) without the port; a bare IPv6 address, colons and all, as it is. */
function withoutPort(ip: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d*)?$/.exec(ip);
  if (bracketed) return bracketed[1] ?? '';
  const ipv4WithPort = /^([\d.]+):\d*$/.exec(ip);
  return ipv4WithPort?.[1] ?? ip;
}
