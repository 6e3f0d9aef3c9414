import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const DAY = 24 * 60 * 60_000;

async function errorRow(fingerprint: string, message: string, ageMs: number): Promise<void> {
  await tdb.db('error_logs').insert({
    fingerprint,
    error_class: 'TypeError',
    message,
    stack: `TypeError: ${message}`,
    source: 'http:POST /events/:slug/register',
    created_at: new Date(Date.now() - ageMs),
  });
}

describe('eventops errors: the week’s errors without a tracker', () => {
  it('lists the last 7 days grouped by fault, largest first with its newest message; status counts them and points to it', async () => {
    const env = testEnv({ DATABASE_URL: tdb.url, APP_TIMEZONE: 'UTC' });
    expect((await runCli(['errors'], { env })).stdout).toBe('no errors in the last 7 days\n');

    await errorRow('aaaa000000000001', 'price broke (older)', 3 * DAY);
    await errorRow('aaaa000000000001', 'price broke (newest)', 1 * DAY);
    await errorRow('bbbb000000000002', 'seat count broke', 2 * DAY);
    await errorRow('cccc000000000003', 'long ago', 30 * DAY);

    const listed = await runCli(['errors'], { env });
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^2× TypeError in http:POST \/events\/:slug\/register, last \d{4}-\d\d-\d\d \d\d:\d\d, first .+ \(aaaa000000000001\)$/);
    expect(lines[1]).toBe('   price broke (newest)');
    expect(lines[2]).toMatch(/^1× TypeError .+ \(bbbb000000000002\)$/);
    expect(listed.stdout).not.toContain('long ago');

    const json = JSON.parse((await runCli(['errors', '--json'], { env })).stdout) as { errors: Array<{ fingerprint: string; count: number }> };
    expect(json.errors.map((group) => [group.fingerprint, group.count])).toEqual([
      ['aaaa000000000001', 2],
      ['bbbb000000000002', 1],
    ]);

    const status = await runCli(['status'], { env });
    expect(status.stdout).toContain('errors in the last 7 days: 3 (`eventops errors` lists them)');
  });
});
