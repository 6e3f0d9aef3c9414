import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';

// The vitest global setup compiles the CLI once per run, before any file starts, so this file spawns the built command.
const fixture = (name: string) => path.join(ROOT, 'test/fixtures', name);

let tdb: TestDatabase;
let env: Record<string, string | undefined>;
beforeAll(async () => {
  tdb = await createTestDatabase();
  env = testEnv({ DATABASE_URL: tdb.url, NODE_ENV: 'test' });
});
afterAll(async () => {
  await tdb.drop();
});

describe('administration commands as an operator runs them', () => {
  it('setup, users, people import and settings: exit 0 on success, 1 on refusal, 2 on usage errors', async () => {
    const setup = await runCli(['setup', '--email', 'office@example.org', '--name', 'Jane Citizen', '--json'], { env });
    expect(setup.stderr).toBe('');
    expect(setup.code).toBe(0);
    expect(JSON.parse(setup.stdout)).toMatchObject({ user: { email: 'office@example.org', role: 'ADMIN', createdBySetup: true } });

    const again = await runCli(['setup', '--email', 'other@example.org', '--name', 'Other'], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('users already exist');

    const missingOption = await runCli(['setup', '--email', 'x@example.org'], { env });
    expect(missingOption.code).toBe(2);
    expect(missingOption.stderr).toContain('--name');

    const badRole = await runCli(['users', 'add', '--email', 'p@example.org', '--name', 'Pat', '--role', 'OWNER'], { env });
    expect(badRole.code).toBe(2);
    const added = await runCli(['users', 'add', '--email', 'pastor@example.org', '--name', 'Sam Lee', '--role', 'PASTOR'], { env });
    expect(added.code).toBe(0);
    expect(added.stdout).toBe('added PASTOR Sam Lee <pastor@example.org>\n');

    const list = await runCli(['users', 'list', '--json'], { env });
    expect(list.code).toBe(0);
    const { users } = JSON.parse(list.stdout) as { users: Array<{ email: string; role: string }> };
    expect(users.map((u) => [u.email, u.role])).toEqual([
      ['office@example.org', 'ADMIN'],
      ['pastor@example.org', 'PASTOR'],
    ]);

    const imported = await runCli(['people', 'import', fixture('people.csv'), '--json'], { env });
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toEqual({ rows: 3, created: 3, updated: 0, unchanged: 0 });
    const reimported = await runCli(['people', 'import', fixture('people.csv')], { env });
    expect(reimported.code).toBe(0);
    expect(reimported.stdout).toBe('imported 3 rows: 0 created, 0 updated, 3 unchanged\n');

    const invalid = await runCli(['people', 'import', fixture('people-invalid.csv')], { env });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('row 2 (line 3): email');
    expect(invalid.stderr).toContain('row 4 (line 5): birth_date');
    expect(await tdb.db('people').count({ n: '*' }).first()).toEqual({ n: 3 });

    // A spreadsheet's "CSV" in Windows-1252 is refused, not stored with its accents replaced.
    const notUtf8 = await runCli(['people', 'import', fixture('people-windows-1252.csv')], { env });
    expect(notUtf8.code).toBe(2);
    expect(notUtf8.stderr).toContain('is not UTF-8 text');
    expect(await tdb.db('people').count({ n: '*' }).first()).toEqual({ n: 3 });

    const missingFile = await runCli(['people', 'import', fixture('no-such-file.csv')], { env });
    expect(missingFile.code).toBe(2);

    const people = await runCli(['people', 'list', '--json'], { env });
    expect(people.code).toBe(0);
    expect(people.stdout).toContain('"birthDate": "1985-03-14"');
    expect(people.stdout).not.toContain('WWC1234567E');
    // In words too, each person shows the address `people celebrations` is given.
    const peopleInWords = await runCli(['people', 'list'], { env });
    expect(peopleInWords.stdout).toMatch(/^Anna Nguyen {2}Anna\.Nguyen@example\.org {2}born 1985-03-14/m);
    expect(peopleInWords.stdout).not.toContain('WWC1234567E');

    const set = await runCli(['settings', 'set', 'cardFee.percent', '1.75'], { env });
    expect(set.code).toBe(0);
    const wrongType = await runCli(['settings', 'set', 'cardFee.fixed', 'thirty'], { env });
    expect(wrongType.code).toBe(2);
    expect(wrongType.stderr).toContain('cardFee.fixed');
    const unknownKey = await runCli(['settings', 'get', 'church.colour'], { env });
    expect(unknownKey.code).toBe(2);
    expect(unknownKey.stderr).toContain('church.name');
    const fee = await runCli(['settings', 'get', '--json'], { env });
    expect(fee.code).toBe(0);
    const { settings } = JSON.parse(fee.stdout) as { settings: Array<{ key: string; value: unknown; source: string }> };
    expect(settings.find((s) => s.key === 'cardFee.percent')).toEqual({ key: 'cardFee.percent', value: 1.75, source: 'setting' });
    expect(settings.find((s) => s.key === 'cardFee.fixed')).toEqual({ key: 'cardFee.fixed', value: 30, source: 'default' });
  }, 120_000);

  it('a command group or the bare command without a subcommand shows help and exits 2 (usage); asking for help exits 0', async () => {
    for (const args of [[], ['registrations'], ['alerts'], ['users']]) {
      const shown = await runCli(args, { env });
      expect(shown.code).toBe(2);
      expect(shown.stderr).toMatch(/Usage: eventops/);
    }
    for (const args of [['help'], ['help', 'registrations'], ['registrations', '--help']]) {
      expect((await runCli(args, { env })).code).toBe(0);
    }
  }, 60_000);

  it('every administration command explains itself with an example', async () => {
    for (const args of [['setup'], ['users', 'add'], ['users', 'list'], ['people', 'import'], ['people', 'list'], ['people', 'celebrations'], ['settings', 'get'], ['settings', 'set']]) {
      const help = await runCli([...args, '--help'], { env });
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/Examples?:\n {2}\$ eventops /);
    }
  }, 60_000);
});
