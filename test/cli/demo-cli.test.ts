import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

const counts = async () => ({
  events: Number((await tdb.db('events').count<Array<{ count: number }>>('* as count'))[0]?.count),
  users: Number((await tdb.db('users').count<Array<{ count: number }>>('* as count'))[0]?.count),
  settings: Number((await tdb.db('app_settings').count<Array<{ count: number }>>('* as count'))[0]?.count),
});

describe('eventops demo', () => {
  it('refuses a database named by DATABASE_URL without ALLOW_DEMO_SEED=true, writing nothing', async () => {
    await tdb.db('app_settings').insert({ key: 'church.name', value: JSON.stringify('St Real Parish') });
    const before = await counts();
    const result = await runCli(['demo', '--seed-only'], { env: testEnv({ DATABASE_URL: tdb.url, NODE_ENV: 'development' }) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('embedded development database');
    expect(result.stderr).toContain('ALLOW_DEMO_SEED=true');
    expect(await counts()).toEqual(before);
    expect(before.events).toBe(0);
    expect((await tdb.db('app_settings').where({ key: 'church.name' }).first<{ value: unknown }>('value'))?.value).toBe('St Real Parish');
  });

  it('runs on that database with ALLOW_DEMO_SEED=true', async () => {
    const result = await runCli(['demo', '--seed-only'], {
      env: testEnv({ DATABASE_URL: tdb.url, NODE_ENV: 'development', ALLOW_DEMO_SEED: 'true' }),
    });
    expect(result.code).toBe(0);
    expect((await counts()).events).toBeGreaterThan(0);
  });

  it('runs on the embedded development database without ALLOW_DEMO_SEED', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-demo-'));
    fs.chmodSync(cwd, 0o755); // as root the embedded server runs as "postgres", which must reach .eventops/pg
    try {
      const result = await runCli(['demo', '--seed-only', '--json'], { env: testEnv({ NODE_ENV: 'development' }), cwd, timeoutMs: 120_000 });
      expect(result.stderr).not.toContain('ALLOW_DEMO_SEED');
      expect(result.code).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ seed: { seeded: true } });
    } finally {
      fs.rmSync(cwd, { recursive: true, force: true });
    }
  }, 120_000);
});
