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

  it('reads .env from the working directory; a database it cannot reach leaves the keys unchecked with a note, exit 0', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-env-'));
    const env = testEnv();
    fs.writeFileSync(
      path.join(dir, '.env'),
      Object.entries(env).map(([k, v]) => `${k}=${v}`).join('\n') + '\nDATABASE_URL=postgres://u:p@127.0.0.1:1/none\n',
    );
    const result = await runCli(['config', 'check', '--json'], { cwd: dir });
    expect(result.code).toBe(0);
    const parsed = JSON.parse(result.stdout) as { config: { database: string }; keys: { checked: boolean; reason: string } };
    expect(parsed.config.database).toBe('postgres://u:******@127.0.0.1:1/none');
    expect(parsed.keys).toEqual({ checked: false, reason: expect.stringMatching(/^cannot read the database \(.*ECONNREFUSED/) });
  });

  it('warns, naming the file, when .env is readable or writable by group or others (a cp of .env.example); 0600 is quiet', async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-env-')));
    const file = path.join(dir, '.env');
    fs.writeFileSync(file, Object.entries(testEnv()).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
    fs.chmodSync(file, 0o644);
    const warning = `${file} is readable or writable by group or others (mode 0644) and holds secrets: chmod 600 .env`;
    const open = await runCli(['config', 'check', '--json'], { cwd: dir });
    expect(open.code).toBe(0);
    expect((JSON.parse(open.stdout) as { warnings: string[] }).warnings).toEqual([warning]);
    expect(open.stderr.split(warning)).toHaveLength(2); // logged once
    expect((await runCli(['config', 'check'], { cwd: dir })).stdout).toContain(`warning: ${warning}`);

    fs.chmodSync(file, 0o600);
    const closed = await runCli(['config', 'check', '--json'], { cwd: dir });
    expect(closed.code).toBe(0);
    expect((JSON.parse(closed.stdout) as { warnings: string[] }).warnings).toEqual([]);
    expect(closed.stderr).not.toContain('chmod 600');
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('masks a password or key carried in a query string: DATABASE_URL ?password=, WEBSITE_SYNC_URL ?key=, keeping sslmode readable', async () => {
    const env = testEnv({
      DATABASE_URL: 'postgres://app@db.example.org:5432/church?password=db-query-password&sslmode=require',
      DIRECT_URL: 'postgres://app@db.example.org:5432/church?PASSWORD=direct-query-password',
      WEBSITE_SYNC_URL: 'https://site.example.org/hook?key=website-query-key&token=website-query-token',
      WEBSITE_SYNC_SECRET: 'website-sync-secret',
    });
    const result = await runCli(['config', 'check', '--json'], { env });
    expect(result.code).toBe(0);
    for (const secret of ['db-query-password', 'direct-query-password', 'website-query-key', 'website-query-token']) {
      expect(result.stdout + result.stderr).not.toContain(secret);
    }
    const { config } = JSON.parse(result.stdout) as { config: { database: string; directUrl: string; websiteSync: { url: string } } };
    expect(config.database).toBe('postgres://app@db.example.org:5432/church?password=******&sslmode=require');
    expect(config.directUrl).toBe('postgres://app@db.example.org:5432/church?PASSWORD=******');
    expect(config.websiteSync.url).toBe('https://site.example.org/hook?key=******&token=******');
    const human = await runCli(['config', 'check'], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('password=******');
    expect(human.stdout).not.toContain('db-query-password');
  });

  it('with only one key of a pair the feature is off and config check warns, naming the missing variable', async () => {
    const cardKeyOnly = await runCli(['config', 'check', '--json'], { env: testEnv({ PSP_SECRET_KEY: 'sk_test_only_key' }) });
    expect(cardKeyOnly.code).toBe(0);
    const card = JSON.parse(cardKeyOnly.stdout) as { warnings: string[]; config: { cardPayments: { enabled: boolean }; websiteSync: unknown } };
    expect(card.config.cardPayments.enabled).toBe(false);
    expect(card.warnings).toEqual([expect.stringMatching(/^PSP_WEBHOOK_SECRET is unset .*card payments are off, registrations fall back to bank transfer/)]);
    expect(cardKeyOnly.stderr).toContain('PSP_WEBHOOK_SECRET is unset');
    expect(cardKeyOnly.stdout + cardKeyOnly.stderr).not.toContain('sk_test_only_key');

    const siteUrlOnly = await runCli(['config', 'check'], { env: testEnv({ WEBSITE_SYNC_URL: 'https://site.example.org/hook' }) });
    expect(siteUrlOnly.code).toBe(0);
    expect(siteUrlOnly.stdout).toContain('warning: WEBSITE_SYNC_SECRET is unset while WEBSITE_SYNC_URL is set: website sync is off');
    expect(siteUrlOnly.stdout).toContain('websiteSync: off');
  });

  it('in production a weak CRON_SECRET, SETUP_TOKEN or WEBSITE_SYNC_SECRET exits 78 naming it', async () => {
    const production = testEnv({
      NODE_ENV: 'production',
      DATABASE_URL: 'postgres://app:pw@db.example.org:5432/church',
      AUTH_URL: 'https://church.example.org',
      SMTP_USER: 'office@example.org',
      SMTP_APP_PASSWORD: 'app-password',
      CRON_SECRET: 'c'.repeat(32),
    });
    expect((await runCli(['config', 'check'], { env: production })).code).toBe(0);
    for (const variable of ['CRON_SECRET', 'SETUP_TOKEN', 'WEBSITE_SYNC_SECRET']) {
      const result = await runCli(['config', 'check'], {
        env: { ...production, WEBSITE_SYNC_URL: 'https://site.example.org/hook', WEBSITE_SYNC_SECRET: 'w'.repeat(32), SETUP_TOKEN: 's'.repeat(32), [variable]: 'abc' },
      });
      expect(result.code).toBe(78);
      expect(result.stderr).toContain(`${variable}: at least 32 characters in production`);
    }
  });

  it('a host with a port in HOST or SMTP_HOST exits 78, pointing at PORT and SMTP_PORT', async () => {
    const result = await runCli(['config', 'check'], { env: testEnv({ HOST: '127.0.0.1:3000', SMTP_HOST: 'smtp.gmail.com:587' }) });
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/HOST: .*use PORT/);
    expect(result.stderr).toMatch(/SMTP_HOST: .*use SMTP_PORT/);
  });

  it('a DATABASE_URL naming a TLS file that does not exist exits 78 naming the variable and the file', async () => {
    const result = await runCli(['config', 'check'], {
      env: testEnv({ DATABASE_URL: 'postgres://u:p@db.example.org/church?sslmode=verify-full&sslrootcert=/nonexistent/ca.crt' }),
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('DATABASE_URL: TLS files that exist and this user may read: cannot read the sslrootcert file /nonexistent/ca.crt (ENOENT)');
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
