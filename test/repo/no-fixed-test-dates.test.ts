import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/cli.js';

// A default date written into the test support goes stale on the day the real clock passes it (an event that
// "starts on 5 December" was in the past from then on, and every CLI test built on it failed). Defaults are
// measured from test/support/test-now.ts, the one file that names the fixed instant in-process clocks start at.
const SUPPORT = path.join(ROOT, 'test', 'support');
const THE_ONE_FIXED_INSTANT = 'test-now.ts';
// An instant (a timestamp or a `new Date('2026-…')`), not a date of birth, which is data rather than a clock.
const LITERAL_INSTANT = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}|new Date\(\s*['"`]\d{4}-\d{2}-\d{2}|Date\.UTC\(\s*\d{4}/;

export function literalInstants(source: string): string[] {
  return source.split('\n').filter((line) => LITERAL_INSTANT.test(line)).map((line) => line.trim());
}

describe('the test support has no literal instants', () => {
  it('no file in test/support but test-now.ts writes a fixed date or timestamp', () => {
    const offenders = fs
      .readdirSync(SUPPORT)
      .filter((name) => name.endsWith('.ts') && name !== THE_ONE_FIXED_INSTANT)
      .flatMap((name) => literalInstants(fs.readFileSync(path.join(SUPPORT, name), 'utf8')).map((line) => `${name}: ${line}`));
    expect(offenders).toEqual([]);
  });

  it('the rule catches the shapes a fixed default takes, and leaves a date of birth alone', () => {
    expect(literalInstants("starts_at: new Date('2026-12-05T08:00:00Z'),")).toHaveLength(1);
    expect(literalInstants("const at = '2026-11-20T23:30:00.000Z';")).toHaveLength(1);
    expect(literalInstants('const now = new Date(Date.UTC(2026, 10, 22));')).toHaveLength(1);
    expect(literalInstants("dateOfBirth: '2016-09-14',")).toEqual([]);
  });
});
