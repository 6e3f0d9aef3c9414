import { createTestDatabase } from '../../test/support/db.js';
import { REGISTRATIONS_PER_MINUTE, limiterViolations, registerFromClients, type Client } from '../../test/reliability/scenarios/rate-limit.js';
import { repeatRounds, reportProblems, type CaseOptions, type CaseResult } from '../support/result.js';

/** Case 9, soak form: many clients at once, direct and behind a proxy, some forging X-Forwarded-For. */
export async function run(options: CaseOptions = {}): Promise<CaseResult> {
  let requests = 0;
  let lost = 0;
  let duplicates = 0;
  let forged = 0;
  const { rounds, problems } = await repeatRounds(options, 30_000, async (index) => {
    const tdb = await createTestDatabase();
    const found: string[] = [];
    try {
      const perClient = 12 + (index % 4);
      // Direct: distinct connection addresses, each rotating a spoofed X-Forwarded-For.
      const direct: Array<[string, Client]> = Array.from({ length: 8 }, (_, i) => [`127.0.0.${i + 2}`, { localAddress: `127.0.0.${i + 2}`, forwardedFor: `10.${index}.${i}.1` }]);
      const directRun = await registerFromClients(tdb, { trustProxy: false, clients: direct, perClient, concurrent: true });
      // Behind one proxy (127.0.0.1): 8 clients, each sending 20 requests with a different forged entry in front.
      const proxied: Array<[string, Client]> = [];
      for (let c = 0; c < 8; c++) {
        for (let r = 0; r < 20; r++) proxied.push([`client-${c}/forged-${r}`, { localAddress: '127.0.0.1', forwardedFor: `203.0.${r}.${c + 1}, 198.51.100.${c + 1}` }]);
      }
      const proxiedRun = await registerFromClients(tdb, { trustProxy: true, clients: proxied, perClient: 1, concurrent: true });
      forged += direct.length * perClient + proxied.length;
      requests += directRun.requests + proxiedRun.requests;

      found.push(...limiterViolations(directRun), ...limiterViolations(proxiedRun, (label) => label.split('/')[0] ?? label));
      const clients = direct.length + 8;
      // Every client gets exactly its 10: fewer would be legitimate registrations lost, more a limit escaped.
      const allowed = clients * REGISTRATIONS_PER_MINUTE;
      const registered = directRun.registrations + proxiedRun.registrations;
      lost += Math.max(0, allowed - registered);
      duplicates += Math.max(0, registered - allowed);
      if (registered !== allowed) found.push(`${registered} registrations for ${clients} clients (expected ${allowed})`);
      return found;
    } finally {
      await tdb.drop();
    }
  });
  reportProblems('rate-limit', problems);
  return {
    case: 'rate-limit',
    load: `${rounds} round(s): 8 direct clients on their own loopback addresses and 8 behind a proxy, concurrently`,
    faults: `${forged} requests with a spoofed or forged X-Forwarded-For`,
    inputs: requests,
    lost,
    duplicates,
    passed: problems.length === 0 && lost === 0 && duplicates === 0,
  };
}
