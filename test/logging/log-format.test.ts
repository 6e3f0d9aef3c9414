import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { describeConfig } from '../../src/config/describe.js';
import { chooseLogFormat, createLogger, type LogFormat } from '../../src/logger.js';
import { testEnv } from '../support/env.js';

/** A logger of the given format whose lines are kept in memory. */
function capture(format: LogFormat) {
  const written: string[] = [];
  const logger = createLogger({ level: 'info', format, destination: { write: (line: string) => void written.push(line) } });
  return { logger, text: () => written.join('') };
}

const SECRET_TOKEN = 'tok_live_3f9a1c0e7b';
const SECRET_PASSWORD = 'hunter2-but-longer';
const BEARER = 'Bearer cron-secret-value';

function logSecrets(logger: ReturnType<typeof createLogger>) {
  logger.info(
    { link: { token: SECRET_TOKEN }, smtp: { password: SECRET_PASSWORD }, req: { method: 'GET', url: '/api/cron/send-reminders', headers: { authorization: BEARER } } },
    'cron request answered',
  );
}

describe('log format', () => {
  it('at a terminal the log is pretty; anywhere else (a pipe, systemd, cron) it is JSON lines', () => {
    expect(chooseLogFormat(undefined, true)).toBe('pretty');
    expect(chooseLogFormat(undefined, false)).toBe('json');
  });

  it('LOG_FORMAT forces either format, terminal or not', () => {
    expect(chooseLogFormat('json', true)).toBe('json');
    expect(chooseLogFormat('pretty', false)).toBe('pretty');
  });

  it('pretty lines are readable (level, message, fields on their own lines), not JSON', () => {
    const { logger, text } = capture('pretty');
    logger.warn({ openEvents: 2 }, 'registration is open without a captcha');
    const out = text();
    expect(out).toMatch(/WARN.*registration is open without a captcha/);
    expect(out).toMatch(/openEvents: 2/);
    expect(() => JSON.parse(out.split('\n')[0] ?? '')).toThrow();
  });

  it('pretty lines redact the same secrets the JSON lines do: tokens, passwords and the Authorization header never appear', () => {
    for (const format of ['pretty', 'json'] as const) {
      const { logger, text } = capture(format);
      logSecrets(logger);
      const out = text();
      expect(out, format).toContain('cron request answered');
      expect(out, format).toContain('[redacted]');
      expect(out, format).not.toContain(SECRET_TOKEN);
      expect(out, format).not.toContain(SECRET_PASSWORD);
      expect(out, format).not.toContain('cron-secret-value');
    }
  });

  it('JSON stays the default of createLogger: one parseable object a line', () => {
    const written: string[] = [];
    createLogger({ destination: { write: (line: string) => void written.push(line) } }).info('hello');
    expect(JSON.parse(written[0] ?? '')).toMatchObject({ level: 30, msg: 'hello' });
  });
});

describe('LOG_FORMAT in the configuration', () => {
  it('json or pretty is taken, unset leaves the choice to the terminal, and `config check` shows it', () => {
    expect(loadConfig(testEnv({ LOG_FORMAT: 'pretty' })).config.logFormat).toBe('pretty');
    expect(loadConfig(testEnv({ LOG_FORMAT: 'json' })).config.logFormat).toBe('json');
    const unset = loadConfig(testEnv()).config;
    expect(unset.logFormat).toBeUndefined();
    expect(describeConfig(unset).log).toEqual({ level: 'info', format: 'pretty at a terminal, else json' });
  });

  it('any other value stops boot with a message naming the variable and the values it takes', () => {
    let error: unknown;
    try {
      loadConfig(testEnv({ LOG_FORMAT: 'text' }));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([{ variable: 'LOG_FORMAT', expected: 'json or pretty (or unset: pretty at a terminal, JSON otherwise)' }]);
  });
});
