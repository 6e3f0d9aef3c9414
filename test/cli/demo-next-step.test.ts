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

describe('eventops demo', () => {
  it('ends with a next step that lists the demo registrations, and that step works', async () => {
    // demo seeds only the embedded database unless told it may seed this one.
    const env = testEnv({ DATABASE_URL: tdb.url, ALLOW_DEMO_SEED: 'true' });
    const demo = await runCli(['demo', '--seed-only'], { env });
    expect(demo.code).toBe(0);
    const lastLine = demo.stdout.trimEnd().split('\n').at(-1) ?? '';
    expect(lastLine).toBe('Next: `eventops registrations list --event demo-family-camp` shows who is coming; `eventops status` shows each run.');

    const suggested = /`(eventops registrations list[^`]*)`/.exec(lastLine)?.[1]?.split(' ').slice(1) ?? [];
    const list = await runCli([...suggested, '--json'], { env });
    expect(list.code).toBe(0);
    const { registrations } = JSON.parse(list.stdout) as { registrations: Array<{ event: string }> };
    expect(registrations.length).toBe(await tdb.db('registrations').count<{ n: number }>({ n: '*' }).first().then((row) => Number(row?.n)));
    expect(registrations.length).toBeGreaterThan(0);
    expect(new Set(registrations.map((r) => r.event))).toEqual(new Set(['demo-family-camp']));
  });
});
