import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { registerFromClients } from './scenarios/rate-limit.js';

// The 11th-gets-429 rule, Retry-After, another X-Forwarded-For address under TRUST_PROXY, and a rotated
// X-Forwarded-For without TRUST_PROXY are covered in test/http/register.test.ts; these are the cases it leaves out.

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const limited = [...Array.from({ length: 10 }, () => 303), 429];

describe('registration rate limit (issue 7, case 9)', () => {
  it('without TRUST_PROXY the limit follows the connection address: a second client address is unaffected when the first is limited', async () => {
    const run = await registerFromClients(tdb, {
      trustProxy: false,
      perClient: 11,
      clients: [
        ['first', { localAddress: '127.0.0.1' }],
        ['second', { localAddress: '127.0.0.2' }],
      ],
    });
    expect(run.statuses.get('first')).toEqual(limited);
    expect(run.statuses.get('second')).toEqual(limited);
    expect(run.registrations).toBe(20);
  });

  it('with TRUST_PROXY a client cannot get around the limit by putting its own X-Forwarded-For entries in front of the address the proxy appended', async () => {
    // Behind one proxy: the proxy connects from 127.0.0.1 and appends the address it saw (198.51.100.7) to whatever the client sent.
    const run = await registerFromClients(tdb, {
      trustProxy: true,
      perClient: 1,
      clients: Array.from({ length: 11 }, (_, i): [string, { localAddress: string; forwardedFor: string }] => [
        `forged-${i}`,
        { localAddress: '127.0.0.1', forwardedFor: `203.0.113.${i + 1}, 198.51.100.7` },
      ]),
    });
    expect([...run.statuses.values()].flat()).toEqual(limited);
    expect(run.registrations).toBe(10);
  });

  it('with TRUST_PROXY, clients behind the proxy are limited one by one: another client address is unaffected', async () => {
    const run = await registerFromClients(tdb, {
      trustProxy: true,
      perClient: 11,
      clients: [
        ['limited', { localAddress: '127.0.0.1', forwardedFor: '198.51.100.20' }],
        ['other', { localAddress: '127.0.0.1', forwardedFor: '198.51.100.21' }],
      ],
    });
    expect(run.statuses.get('limited')).toEqual(limited);
    expect(run.statuses.get('other')).toEqual(limited);
  });

  it('an IPv6 client is limited by its /48 (one site), so rotating addresses and /56 or /64 networks within it does not get around the limit; another /48 is unaffected', async () => {
    const run = await registerFromClients(tdb, {
      trustProxy: true,
      perClient: 1,
      clients: [
        ...Array.from({ length: 11 }, (_, i): [string, { localAddress: string; forwardedFor: string }] => [
          `rotating-${i}`,
          { localAddress: '127.0.0.1', forwardedFor: `2001:db8:1:${(i * 0x1701).toString(16)}::${(i + 1).toString(16)}` },
        ]),
        ['neighbour', { localAddress: '127.0.0.1', forwardedFor: '2001:db8:2::1' }],
      ],
    });
    expect(Array.from({ length: 11 }, (_, i) => run.statuses.get(`rotating-${i}`)).flat()).toEqual(limited);
    expect(run.statuses.get('neighbour')).toEqual([303]);
  });

  it('with TRUST_PROXY listing the proxies (CIDR ranges), a client connecting from any other address is counted by that address whatever X-Forwarded-For it forges, and its forged addresses add no rate-limit rows', async () => {
    await tdb.db('rate_limits').delete();
    const run = await registerFromClients(tdb, {
      trustProxy: '127.0.0.6/32, 2001:db8:ffff::/48',
      perClient: 1,
      clients: [
        ...Array.from({ length: 11 }, (_, i): [string, { localAddress: string; forwardedFor: string }] => [
          `forger-${i}`,
          { localAddress: '127.0.0.5', forwardedFor: `198.51.100.${i + 1}` },
        ]),
        ['proxied', { localAddress: '127.0.0.6', forwardedFor: '203.0.113.200' }],
        // Entries a client wrote in front of what the listed proxy appended are not believed either.
        ['proxied-with-forged-entry', { localAddress: '127.0.0.6', forwardedFor: '198.51.100.99, 203.0.113.201' }],
      ],
    });
    expect(Array.from({ length: 11 }, (_, i) => run.statuses.get(`forger-${i}`)).flat()).toEqual(limited);
    expect(run.statuses.get('proxied')).toEqual([303]);
    expect(run.statuses.get('proxied-with-forged-entry')).toEqual([303]);
    const keys = (await tdb.db('rate_limits').distinct('client_key')).map((row: { client_key: string }) => row.client_key);
    expect(keys).toEqual(expect.arrayContaining(['127.0.0.5', '203.0.113.200', '203.0.113.201']));
    expect(keys.filter((key) => key.startsWith('198.51.100.'))).toEqual([]);
  });
});
