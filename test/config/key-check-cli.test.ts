import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { BIN, fakedClockEnv, runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig, testEnv, TEST_KEYS } from '../support/env.js';
import { seedEncryptedRows, V2_ENV } from '../crypto/encrypted-fixture.js';

/** The database a church restored from its dump: values under v1 and, after a rotation, v2. */
let restored: TestDatabase;
let empty: TestDatabase;
beforeAll(async () => {
  [restored, empty] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  await seedEncryptedRows(restored.db, createFieldCipher(testConfig({ ENCRYPTION_KEY_V1: TEST_KEYS.v1 }).keyring), 'old');
  await seedEncryptedRows(restored.db, createFieldCipher(testConfig(V2_ENV).keyring), 'new');
});
afterAll(async () => {
  await Promise.all([restored.drop(), empty.drop()]);
});

/** The .env that goes with the restored database. */
const keptEnv = () => testEnv({ DATABASE_URL: restored.url, MIGRATE_ON_START: 'false', ...V2_ENV });
/** A fresh .env written for the restored database (`eventops init` on a new server): a new ENCRYPTION_KEY, no v2. */
const freshEnv = () => testEnv({ DATABASE_URL: restored.url, MIGRATE_ON_START: 'false', ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64') });

const PRODUCTION = {
  NODE_ENV: 'production',
  AUTH_URL: 'https://events.example.org',
  SMTP_USER: 'office@example.org',
  SMTP_APP_PASSWORD: 'app-password',
  CRON_SECRET: 'test-cron-secret-long-enough-for-production-use',
  CAPTCHA_SECRET_KEY: 'captcha-secret',
  CAPTCHA_SITE_KEY: 'captcha-site',
  IN_APP_CRON: 'false',
};

/** Runs `eventops serve` on a free port until it listens (then stops it with SIGTERM) or exits by itself. */
async function serveOnce(env: Record<string, string | undefined>): Promise<{ listened: boolean; code: number | null; stderr: string }> {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-keys-'));
  const fullEnv: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...fakedClockEnv() };
  for (const [key, value] of Object.entries(env)) if (value !== undefined) fullEnv[key] = value;
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd, env: fullEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let listened = false;
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    const address = /"address":"(http:\/\/[^"]+)"/.exec(stderr)?.[1];
    if (!listened && address) {
      listened = true;
      // Once it answers, its signal handlers are in place: SIGTERM stops it gracefully.
      void fetch(`${address}/healthz`).finally(() => child.kill('SIGTERM'));
    }
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  clearTimeout(timer);
  return { listened, code, stderr };
}

describe('config check: the encryption keys against the database', () => {
  it('the .env that goes with the database passes (exit 0), saying how many stored values it read', async () => {
    const result = await runCli(['config', 'check', '--json'], { env: keptEnv() });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).keys).toEqual({ checked: true, values: 3 });
    const human = await runCli(['config', 'check'], { env: keptEnv() });
    expect(human.stdout).toContain('The encryption keys open what the database holds (3 stored values read).');
  });

  it('a fresh .env for a restored database exits 78 naming the missing key version and what to do; prints no configuration', async () => {
    const result = await runCli(['config', 'check'], { env: freshEnv() });
    expect(result.code).toBe(78);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("this configuration's encryption keys do not open what the database holds");
    expect(result.stderr).toContain('ENCRYPTION_KEY_V2 is not set, but users.email_enc holds values written with key v2');
    expect(result.stderr).toContain('suggestion: restore the .env that goes with this database');
    const json = await runCli(['config', 'check', '--json'], { env: freshEnv() });
    expect(json.code).toBe(78);
    expect(JSON.parse(json.stderr.trim().split('\n').at(-1) as string).error).toMatchObject({ code: 'encryption_keys_mismatch', exitCode: 78 });
  });

  it('with v2 restored but a new ENCRYPTION_KEY, exits 78 naming key v1 through the lookup hashes', async () => {
    const result = await runCli(['config', 'check'], { env: { ...keptEnv(), ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64'), ENCRYPTION_KEY_V1: undefined, ENCRYPTION_KEY_ID: undefined } });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('ENCRYPTION_KEY (key v1) is not the key the lookup hashes in users.email_hash were made with');
  });

  it('an empty database passes with any keys; an unreachable one is a note, not a failure', async () => {
    const fresh = await runCli(['config', 'check', '--json'], { env: testEnv({ DATABASE_URL: empty.url, ENCRYPTION_KEY: crypto.randomBytes(32).toString('base64') }) });
    expect(fresh.code).toBe(0);
    expect(JSON.parse(fresh.stdout).keys).toEqual({ checked: true, values: 0 });
    const unreachable = await runCli(['config', 'check'], { env: testEnv({ DATABASE_URL: 'postgres://u:secret-pw@127.0.0.1:1/none' }) });
    expect(unreachable.code).toBe(0);
    expect(unreachable.stdout).toMatch(/note: encryption keys not checked against the database: cannot read the database \(.*ECONNREFUSED/);
    expect(unreachable.stdout + unreachable.stderr).not.toContain('secret-pw');
  });

  it('nothing is changed: the check reads only', async () => {
    const count = async () => (await restored.db('users').count({ n: '*' }).first()) as { n: number };
    const before = await count();
    await runCli(['config', 'check'], { env: freshEnv() });
    expect(await count()).toEqual(before);
  });
});

describe('serve: the encryption keys at start', () => {
  it('refuses to start (exit 78, never listening) with keys that do not open the database', async () => {
    const result = await serveOnce(freshEnv());
    expect(result.listened).toBe(false);
    expect(result.code).toBe(78);
    // The newest values are under v2, which it lacks; the older ones under v1 show its key v1 is not the database's.
    expect(result.stderr).toContain('ENCRYPTION_KEY is not the key v1 that wrote users.email_enc');
  }, 60_000);

  it('starts with the right key v1 but without v2 (a rotation that reaches this server last), logging what it cannot read', async () => {
    const result = await serveOnce(testEnv({ DATABASE_URL: restored.url, MIGRATE_ON_START: 'false' }));
    expect(result.listened).toBe(true);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('ENCRYPTION_KEY_V2 is not set, but users.email_enc holds values written with key v2; this server cannot read those values until it has that key too');
  }, 60_000);

  it('starts with the .env that goes with the database', async () => {
    const result = await serveOnce(keptEnv());
    expect(result.listened).toBe(true);
    expect(result.code).toBe(0);
  }, 60_000);
});

describe('TRUST_PROXY behind the https proxy', () => {
  const warning = "behind a proxy every member shares the proxy's address and its rate limit: set TRUST_PROXY=true";

  it('config check warns in production when AUTH_URL is https and TRUST_PROXY is off, and exits 0', async () => {
    const off = await runCli(['config', 'check', '--json'], { env: testEnv({ ...PRODUCTION, DATABASE_URL: empty.url }) });
    expect(off.code).toBe(0);
    expect((JSON.parse(off.stdout) as { warnings: string[] }).warnings).toEqual([expect.stringContaining(warning)]);
    const human = await runCli(['config', 'check'], { env: testEnv({ ...PRODUCTION, DATABASE_URL: empty.url, TRUST_PROXY: 'false' }) });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/warning: TRUST_PROXY is off while AUTH_URL is https.*set TRUST_PROXY=true/);

    const on = await runCli(['config', 'check', '--json'], { env: testEnv({ ...PRODUCTION, DATABASE_URL: empty.url, TRUST_PROXY: 'true' }) });
    expect((JSON.parse(on.stdout) as { warnings: string[] }).warnings).toEqual([]);
    const development = await runCli(['config', 'check', '--json'], { env: testEnv({ DATABASE_URL: empty.url, AUTH_URL: 'https://events.example.org' }) });
    expect((JSON.parse(development.stdout) as { warnings: string[] }).warnings).toEqual([]);
  });

  it('config check and serve warn when HOST is not loopback while TRUST_PROXY is on, and still go on; an invalid TRUST_PROXY stops both with 78', async () => {
    const exposed = "HOST is 0.0.0.0, not a loopback address, while TRUST_PROXY is on (trusted: 127.0.0.0/8, ::1/128)";
    const open = await runCli(['config', 'check', '--json'], { env: testEnv({ DATABASE_URL: empty.url, HOST: '0.0.0.0', TRUST_PROXY: 'true' }) });
    expect(open.code).toBe(0);
    expect((JSON.parse(open.stdout) as { warnings: string[] }).warnings).toEqual([expect.stringContaining(exposed)]);
    const loopback = await runCli(['config', 'check', '--json'], { env: testEnv({ DATABASE_URL: empty.url, HOST: '::1', TRUST_PROXY: '10.0.0.0/8' }) });
    expect((JSON.parse(loopback.stdout) as { warnings: string[] }).warnings).toEqual([]);
    const off = await runCli(['config', 'check', '--json'], { env: testEnv({ DATABASE_URL: empty.url, HOST: '0.0.0.0' }) });
    expect((JSON.parse(off.stdout) as { warnings: string[] }).warnings).toEqual([]);

    const served = await serveOnce(testEnv({ DATABASE_URL: empty.url, HOST: '0.0.0.0', TRUST_PROXY: 'true' }));
    expect(served.listened).toBe(true);
    expect(served.code).toBe(0);
    expect(served.stderr).toContain(exposed);

    const invalid = await runCli(['config', 'check'], { env: testEnv({ DATABASE_URL: empty.url, TRUST_PROXY: '10.0.0.0/33' }) });
    expect(invalid.code).toBe(78);
    expect(invalid.stderr + invalid.stdout).toContain('TRUST_PROXY');
    const refused = await serveOnce(testEnv({ DATABASE_URL: empty.url, TRUST_PROXY: 'everyone' }));
    expect(refused.listened).toBe(false);
    expect(refused.code).toBe(78);
  }, 60_000);

  it('serve logs the warning at start in production and still starts; not with TRUST_PROXY=true', async () => {
    const off = await serveOnce(testEnv({ ...PRODUCTION, DATABASE_URL: empty.url }));
    expect(off.listened).toBe(true);
    expect(off.code).toBe(0);
    expect(off.stderr).toContain(warning);
    const on = await serveOnce(testEnv({ ...PRODUCTION, DATABASE_URL: empty.url, TRUST_PROXY: 'true' }));
    expect(on.listened).toBe(true);
    expect(on.code).toBe(0);
    expect(on.stderr).not.toContain('TRUST_PROXY');
  }, 60_000);
});
