import { describe, expect, it } from 'vitest';
import { CONFIG_FUZZ, configFuzzCases, fuzzConfigValue } from '../../soak/cases/hostile-input.js';
import { runCli } from '../support/cli.js';
import { testEnv } from '../support/env.js';

describe('configuration fuzzed: every validated variable with malformed values', () => {
  const cases = configFuzzCases();

  it(`refuses all ${cases.length} malformed values, each naming its variable and never echoing the value`, () => {
    const outcomes = cases.map(([variable, value]) => fuzzConfigValue(variable, value));
    expect(outcomes.filter((o) => !o.named.includes(o.variable)).map((o) => `${o.variable}=${o.value}`)).toEqual([]);
    expect(outcomes.filter((o) => o.echoed).map((o) => `${o.variable}=${o.value}`)).toEqual([]);
    expect(new Set(outcomes.map((o) => o.variable)).size).toBe(Object.keys(CONFIG_FUZZ).length);
  });

  it.each([
    ['SMTP_PORT', '70000'],
    ['AUTH_URL', 'javascript:alert(1)'],
    ['ENCRYPTION_KEY', 'c2hvcnQ='],
    ['APP_TIMEZONE', 'Mars/Olympus'],
    ['LOG_LEVEL', 'verbose'],
    ['CRON_SECRET', 'abc # set by ops'],
  ])('the built command exits 78 for %s=%s, naming the variable without its value', async (variable, value) => {
    const result = await runCli(['config', 'check'], { env: testEnv({ [variable]: value }) });
    expect(result.code).toBe(78);
    expect(result.stderr + result.stdout).toContain(variable);
    expect(result.stderr + result.stdout).not.toContain(value);
  });
});
