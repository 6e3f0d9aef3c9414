import http from 'node:http';
import type { TestDatabase } from '../../support/db.js';
import { createTestContext } from '../../support/context.js';
import { insertEvent } from '../../support/factories.js';
import { startTestServer } from '../../support/http.js';

/**
 * Case 9: registrations posted from distinct client addresses. Loopback has a
 * whole /8, so real different source addresses (127.0.0.x) are used, not only
 * headers; X-Forwarded-For is whatever the "client" or a proxy put there.
 */

export const REGISTRATIONS_PER_MINUTE = 10;

export interface Client {
  /** Source address of the TCP connection (a 127.0.0.0/8 address). */
  localAddress: string;
  /** X-Forwarded-For as it reaches the server, if any. */
  forwardedFor?: string;
}

export interface RateLimitRun {
  /** Statuses per client label, in order. */
  statuses: Map<string, number[]>;
  requests: number;
  registrations: number;
}

function post(url: string, client: Client, body: string): Promise<number> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        localAddress: client.localAddress,
        agent: false,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          ...(client.forwardedFor ? { 'x-forwarded-for': client.forwardedFor } : {}),
        },
        timeout: 10_000,
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      },
    );
    request.on('timeout', () => request.destroy(new Error('registration request timed out')));
    request.on('error', reject);
    request.end(body);
  });
}

/**
 * Starts the real server (TRUST_PROXY as given), then each labelled client in
 * turn posts `perClient` valid bank-transfer registrations (one attendee) to an
 * event without a capacity limit.
 */
export async function registerFromClients(
  tdb: TestDatabase,
  /** trustProxy: false (off), true (TRUST_PROXY=true) or the TRUST_PROXY value itself (a list of proxies). */
  options: { trustProxy: boolean | string; clients: Array<[string, Client]>; perClient: number; concurrent?: boolean },
): Promise<RateLimitRun> {
  const event = await insertEvent(tdb.db, { capacity: null });
  const ctx = createTestContext({ db: tdb.db, env: { TRUST_PROXY: typeof options.trustProxy === 'string' ? options.trustProxy : options.trustProxy ? 'true' : undefined } });
  const server = await startTestServer(ctx);
  // A mailbox per post: one mailbox may hold only so many unpaid places of an event, a cap these runs are not about.
  let posted = 0;
  const body = () =>
    new URLSearchParams({ name: 'Jo Citizen', email: `jo${(posted += 1)}@example.org`, payment: 'bank', attendee_name: 'Jo', attendee_tier: 'adult' }).toString();
  const url = `${server.url}/events/${event.slug}/register`;
  const statuses = new Map<string, number[]>();
  try {
    const runClient = async ([label, client]: [string, Client]) => {
      const seen: number[] = [];
      statuses.set(label, seen);
      for (let i = 0; i < options.perClient; i++) seen.push(await post(url, client, body()));
    };
    if (options.concurrent) await Promise.all(options.clients.map(runClient));
    else for (const client of options.clients) await runClient(client);
  } finally {
    await server.close();
  }
  const registrations = (await tdb.db('registrations').where({ event_id: event.id })).length;
  return { statuses, requests: options.clients.length * options.perClient, registrations };
}

/** Requests answered other than 303 (registered) or 429 (limited), and clients let through more than the limit. */
export function limiterViolations(run: RateLimitRun, sameClient: (label: string) => string = (label) => label): string[] {
  const violations: string[] = [];
  const acceptedPerClient = new Map<string, number>();
  for (const [label, statuses] of run.statuses) {
    for (const status of statuses) if (status !== 303 && status !== 429) violations.push(`${label}: answered ${status}`);
    const key = sameClient(label);
    acceptedPerClient.set(key, (acceptedPerClient.get(key) ?? 0) + statuses.filter((s) => s === 303).length);
  }
  for (const [client, accepted] of acceptedPerClient) {
    if (accepted > REGISTRATIONS_PER_MINUTE) violations.push(`${client}: ${accepted} registrations accepted in a minute`);
  }
  return violations;
}
