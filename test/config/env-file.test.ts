import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { valuesCutAtHash } from '../../src/config/env-file.js';
import { runCli } from '../support/cli.js';
import { testEnv } from '../support/env.js';

/** A working directory whose .env holds the test environment plus the given raw lines. */
function dirWithEnvFile(lines: string[], omit: string[] = []): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-envfile-'));
  const base = Object.entries(testEnv())
    .filter(([key]) => !omit.includes(key))
    .map(([key, value]) => `${key}=${value}`);
  fs.writeFileSync(path.join(dir, '.env'), [...base, ...lines, ''].join('\n'));
  return dir;
}

describe('.env values holding "#" (dotenv cuts an unquoted value at "#")', () => {
  it('an unquoted value starting with "#" is refused by name with a hint to quote it', async () => {
    const result = await runCli(['config', 'check'], { cwd: dirWithEnvFile(['THEME_PRIMARY=#1E40AF']) });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('THEME_PRIMARY: a quoted value when it starts with "#" (THEME_PRIMARY="#…")');
  });

  it('a trailing comment is refused by name, as for the process environment, without echoing the value', async () => {
    const result = await runCli(['config', 'check'], { cwd: dirWithEnvFile(['CRON_SECRET=abc-file-value # note'], ['CRON_SECRET']) });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('CRON_SECRET: no trailing comment on the line');
    expect(result.stderr).not.toContain('abc-file-value');
  });

  it('an unquoted value with "#" inside (an SMTP password) is refused rather than cut short', async () => {
    const result = await runCli(['config', 'check'], {
      cwd: dirWithEnvFile(['SMTP_USER=office@example.org', 'SMTP_APP_PASSWORD=pass#word']),
    });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('SMTP_APP_PASSWORD: a quoted value when it contains "#"');
    expect(result.stderr).not.toContain('pass#word');
  });

  it('quoted values keep their "#"', async () => {
    const cwd = dirWithEnvFile([
      'THEME_PRIMARY="#1E40AF"',
      "THEME_ACCENT='#0F766E'",
      'SMTP_USER=office@example.org',
      'SMTP_APP_PASSWORD="pass#word # not a comment"',
      'SMTP_HOST=127.0.0.1',
      '# a whole-line comment is fine',
    ]);
    const result = await runCli(['config', 'check', '--json'], { cwd });
    expect(result.code).toBe(0);
    const { config } = JSON.parse(result.stdout) as { config: { theme: { primary: string; accent: string }; mail: { transport: string } } };
    expect(config.theme).toMatchObject({ primary: '#1E40AF', accent: '#0F766E' });
    expect(config.mail.transport).toBe('SMTP');
  });

  it('a variable set in the environment wins, so its line in .env is not judged', async () => {
    const result = await runCli(['config', 'check', '--json'], {
      cwd: dirWithEnvFile(['THEME_PRIMARY=#1E40AF']),
      env: { THEME_PRIMARY: '#123456' },
    });
    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { config: { theme: { primary: string } } }).config.theme.primary).toBe('#123456');
  });

  it('scans lines as dotenv does: export prefixes, multi-line quoted values, whole-line comments', () => {
    const text = [
      '# THEME_PRIMARY=#ignored',
      'export CRON_SECRET=abc #x',
      'CERT="-----BEGIN',
      'X=#inside-a-quoted-value',
      '-----END"',
      'AUTH_URL=http://127.0.0.1:3000/#fragment',
      'EMPTY=',
      'PLAIN=no-hash-here',
    ].join('\r\n');
    expect(valuesCutAtHash(text).map((p) => p.variable)).toEqual(['CRON_SECRET', 'AUTH_URL']);
  });
});

describe('a .env that cannot be read', () => {
  it('stops every command with exit 78, naming .env and the reason with a hint, instead of a launcher crash', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-envfile-'));
    fs.mkdirSync(path.join(dir, '.env')); // EISDIR fails for root too, unlike a chmod 000 file
    for (const args of [['config', 'check'], ['status']]) {
      const result = await runCli(args, { cwd: dir, env: testEnv() });
      expect(result.code).toBe(78);
      expect(result.stderr).toContain(`.env: a file eventops can read (EISDIR reading ${path.join(fs.realpathSync(dir), '.env')})`);
      expect(result.stderr).toContain("run eventops as the file's owner or fix its permissions");
      expect(result.stderr).not.toContain('npm run build');
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
