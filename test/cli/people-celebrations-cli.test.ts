import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertPerson } from '../support/factories.js';

// The vitest global setup compiles the CLI once per run, so this file spawns the built command.
let tdb: TestDatabase;
let env: Record<string, string | undefined>;
let mary: string;
let john: string;
beforeAll(async () => {
  tdb = await createTestDatabase();
  env = testEnv({ DATABASE_URL: tdb.url, APP_TIMEZONE: 'UTC' });
  const { cipher } = createTestContext({ db: tdb.db });
  mary = (await insertPerson(tdb.db, cipher, { first_name: 'Mary', last_name: 'Smith', email: 'mary.smith@example.org', wedding_date: '1975-11-22' })).id;
  john = (await insertPerson(tdb.db, cipher, { first_name: 'John', last_name: 'Smith', email: 'john.smith@example.org', wedding_date: '1975-11-22' })).id;
  await tdb.db('people').where({ id: mary }).update({ spouse_id: john });
  await tdb.db('people').where({ id: john }).update({ spouse_id: mary });
});
afterAll(async () => {
  await tdb.drop();
});

const cli = (args: string[]) => runCli(['people', ...args], { env });
const flagOf = async (id: string) =>
  tdb.db('people').where({ id }).first('celebrations_off_at', 'celebrations_off_by', 'celebrations_off_note');

describe('eventops people celebrations: the office turns a person’s birthday and anniversary emails off and on', () => {
  it('an address whose domain has accents is taken as the import stored it (its ASCII form), typed either way', async () => {
    const { cipher } = createTestContext({ db: tdb.db });
    const jo = (await insertPerson(tdb.db, cipher, { first_name: 'Jo', last_name: 'Müller', email: 'jo@xn--mnchen-3ya.de' })).id;
    const off = await cli(['celebrations', 'jo@münchen.de', '--off']);
    expect(off.stderr).toBe('');
    expect(off.code).toBe(0);
    expect(await flagOf(jo)).toMatchObject({ celebrations_off_by: 'office' });
  });

  it('--off records it by the office with the note, list shows it, a second --off and an unknown email exit 1, --on turns them on again', async () => {
    const before = Date.now();
    const off = await cli(['celebrations', 'John.Smith@Example.org', '--off', '--note', 'died in October 2026']);
    expect(off.stderr).toBe('');
    expect(off.code).toBe(0);
    expect(off.stdout).toBe(
      'celebration emails to John Smith <john.smith@example.org> are off: no birthday email, nor an anniversary email to them and Mary Smith\n',
    );
    const stored = await flagOf(john);
    expect(stored).toMatchObject({ celebrations_off_by: 'office', celebrations_off_note: 'died in October 2026' });
    expect((stored.celebrations_off_at as Date).getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(await flagOf(mary)).toEqual({ celebrations_off_at: null, celebrations_off_by: null, celebrations_off_note: null });

    const list = await cli(['list']);
    const day = (stored.celebrations_off_at as Date).toISOString().slice(0, 10);
    expect(list.stdout).toContain(`John Smith  john.smith@example.org  married 1975-11-22  spouse Mary Smith  celebration emails off since ${day} (by the office: died in October 2026)`);
    expect(list.stdout).toMatch(/^Mary Smith {2}mary\.smith@example\.org {2}married 1975-11-22 {2}spouse John Smith$/m);
    const listed = JSON.parse((await cli(['list', '--json'])).stdout).people;
    expect(listed.find((p: { firstName: string }) => p.firstName === 'John').celebrationsOff).toEqual({
      at: (stored.celebrations_off_at as Date).toISOString(),
      by: 'office',
      note: 'died in October 2026',
    });
    expect(listed.find((p: { firstName: string }) => p.firstName === 'Mary').celebrationsOff).toBeNull();

    const again = await cli(['celebrations', 'john.smith@example.org', '--off']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`celebration emails to John Smith are already off (since ${day}, by office)`);
    expect(await flagOf(john)).toEqual(stored);

    const unknown = await cli(['celebrations', 'nobody@example.org', '--off']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('person nobody@example.org not found');

    const on = await cli(['celebrations', 'john.smith@example.org', '--on', '--json']);
    expect(on.code).toBe(0);
    expect(JSON.parse(on.stdout)).toEqual({
      person: { id: john, name: 'John Smith', email: 'john.smith@example.org', spouse: 'Mary Smith', celebrationsOff: null },
    });
    expect(await flagOf(john)).toEqual({ celebrations_off_at: null, celebrations_off_by: null, celebrations_off_note: null });
    const onAgain = await cli(['celebrations', 'john.smith@example.org', '--on']);
    expect(onAgain.code).toBe(1);
    expect(onAgain.stderr).toContain('celebration emails to John Smith are already on');
  }, 60_000);

  it('usage errors exit 2 and change nothing: neither or both of --off and --on, a malformed email, a note with --on', async () => {
    for (const args of [
      ['celebrations', 'mary.smith@example.org'],
      ['celebrations', 'mary.smith@example.org', '--off', '--on'],
      ['celebrations', 'mary.smith', '--off'],
      ['celebrations', 'mary.smith@example.org', '--on', '--note', 'back'],
      ['celebrations', '--off'],
    ]) {
      const result = await cli(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
    }
    expect(await flagOf(mary)).toEqual({ celebrations_off_at: null, celebrations_off_by: null, celebrations_off_note: null });
    const help = await cli(['celebrations', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/Examples:\n {2}\$ eventops people celebrations /);
  }, 60_000);
});
