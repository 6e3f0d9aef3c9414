import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { testEnv } from '../support/env.js';

describe('eventops config check', () => {
  it('exits 0 and masks every secret', async () => {
    const env = testEnv({ SMTP_USER: 'office@example.org', SMTP_APP_PASSWORD: 'pw-app-secret', PSP_SECRET_KEY: 'sk_test_secretvalue', PSP_WEBHOOK_SECRET: 'whsec_secretvalue' });
    const result = await runCli(['config', 'check', '--json'], { env });
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as { valid: boolean; config: { cardPayments: { enabled: boolean } } };
    expect(parsed.valid).toBe(true);
    expect(parsed.config.cardPayments.enabled).toBe(true);
    for (const secret of [env.AUTH_SECRET, env.ENCRYPTION_KEY, env.CRON_SECRET, 'pw-app-secret', 'sk_test_secretvalue', 'whsec_secretvalue']) {
      expect(result.stdout + result.stderr).not.toContain(secret as string);
    }
  });

  it('exits 78 naming every invalid variable, without echoing values', async () => {
    const result = await runCli(['config', 'check'], {
      env: testEnv({ AUTH_SECRET: 'too-short-secret', APP_CURRENCY: 'ZZZ', NODE_ENV: 'production' }),
    });
    expect(result.code).toBe(78);
    for (const name of ['AUTH_SECRET', 'APP_CURRENCY', 'DATABASE_URL']) expect(result.stderr).toContain(name);
    expect(result.stderr).not.toContain('too-short-secret');
    expect(result.stdout).toBe('');
  });

  it('reads .env from the working directory and connects to no service', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-env-'));
    const env = testEnv();
    fs.writeFileSync(
      path.join(dir, '.env'),
      Object.entries(env).map(([k, v]) => `${k}=${v}`).join('\n') + '\nDATABASE_URL=postgres://u:p@127.0.0.1:1/none\n',
    );
    const result = await runCli(['config', 'check', '--json'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout).config.database).toBe('postgres://u:******@127.0.0.1:1/none');
  });

  it('a missing ENCRYPTION_KEY is reported together with the other problems', async () => {
    const result = await runCli(['config', 'check'], { env: testEnv({ ENCRYPTION_KEY: undefined, APP_TIMEZONE: 'Nowhere/City' }) });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('ENCRYPTION_KEY');
    expect(result.stderr).toContain('APP_TIMEZONE');
  });
});

describe('eventops command line', () => {
  it('--version prints NEXT_PUBLIC_APP_VERSION and NEXT_PUBLIC_GIT_SHA when set, else the package version', async () => {
    const withBuild = await runCli(['--version'], { env: { NEXT_PUBLIC_APP_VERSION: '2.4.0', NEXT_PUBLIC_GIT_SHA: 'abc1234' } });
    expect(withBuild).toMatchObject({ code: 0, stdout: '2.4.0 (abc1234)\n' });
    const plain = await runCli(['--version']);
    expect(plain.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('an unknown command or option exits 2 (usage)', async () => {
    expect((await runCli(['no-such-command'])).code).toBe(2);
    expect((await runCli(['config', 'check', '--no-such-flag'])).code).toBe(2);
  });

  it('--help shows examples and the exit codes', async () => {
    const result = await runCli(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Examples:');
    expect(result.stdout).toContain('78 configuration');
  });
});
