import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BIN, fakedClockEnv, runCli } from '../support/cli.js';
import { testEnv } from '../support/env.js';

const run = promisify(execFile);

/** Any command's start logs this warning (a setting that applies to nobody): a log line without a database. */
const WARNING = 'CHURCH_NETWORK_FORM_POSTS_PER_MINUTE is set while CHURCH_NETWORKS is not: it applies to nobody';
const env = (overrides: Record<string, string | undefined> = {}) => testEnv({ CHURCH_NETWORK_FORM_POSTS_PER_MINUTE: '5', ...overrides });

/** Runs `eventops config check` with stdout and stderr on a terminal (script(1) gives it a pseudo-terminal); what the terminal showed. */
async function atTerminal(overrides: Record<string, string | undefined> = {}): Promise<string> {
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-log-tty-'));
  const vars: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', ...fakedClockEnv() };
  for (const [key, value] of Object.entries(env(overrides))) if (value !== undefined) vars[key] = value;
  const command = `${JSON.stringify(process.execPath)} ${JSON.stringify(BIN)} config check`;
  const { stdout } = await run('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd, env: vars, timeout: 60_000 });
  return stdout.replace(/\u001b\[[0-9;]*m/g, '').replaceAll('\r', '');
}

describe('the log at a terminal and elsewhere', () => {
  it('at a terminal the log lines are pretty: a time, the level and the message, no JSON', async () => {
    const shown = await atTerminal();
    expect(shown).toMatch(new RegExp(`^\\[\\d{2}:\\d{2}:\\d{2}\\] WARN: ${WARNING}$`, 'm'));
    expect(shown).not.toContain('{"level":40');
  });

  it('through a pipe (cron, systemd, a container) they stay JSON lines', async () => {
    const result = await runCli(['config', 'check'], { env: env() });
    expect(result.code).toBe(0);
    const line = result.stderr.split('\n').find((text) => text.includes(WARNING));
    expect(JSON.parse(line ?? '')).toMatchObject({ level: 40, msg: WARNING });
  });

  it('LOG_FORMAT=json keeps JSON at a terminal; LOG_FORMAT=pretty makes a pipe pretty', async () => {
    const shown = await atTerminal({ LOG_FORMAT: 'json' });
    expect(shown).toContain(`"level":40`);
    expect(shown).toContain(`"msg":"${WARNING}"`);
    const piped = await runCli(['config', 'check'], { env: env({ LOG_FORMAT: 'pretty' }) });
    expect(piped.stderr).toMatch(new RegExp(`^\\[\\d{2}:\\d{2}:\\d{2}\\] WARN: ${WARNING}$`, 'm'));
    // Not a terminal: no colour codes in a file or a pipe.
    expect(piped.stderr).not.toContain('\u001b[');
  });

  it('a LOG_FORMAT the loader does not know stops the command with a message naming it (exit 78)', async () => {
    const result = await runCli(['config', 'check'], { env: env({ LOG_FORMAT: 'yaml' }) });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('LOG_FORMAT: json or pretty (or unset: pretty at a terminal, JSON otherwise)');
  });
});
