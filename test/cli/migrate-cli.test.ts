import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationConfig } from '../../src/db/migration-source.js';
import { ROOT, runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

/** DATABASE_URL points nowhere: every migrate form must use DIRECT_URL. */
const env = () => testEnv({ DATABASE_URL: 'postgres://app:pw@127.0.0.1:1/unreachable', DIRECT_URL: tdb.url, MIGRATE_ON_START: 'false' });

const publicTables = async () =>
  (await tdb.db('pg_tables').where({ schemaname: 'public' }).select<Array<{ tablename: string }>>('tablename'))
    .map((t) => t.tablename)
    .filter((name) => !name.startsWith('knex_migrations'))
    .sort();
const appliedMigrations = async () => (await tdb.db('knex_migrations').orderBy('id').select<Array<{ name: string }>>('name')).map((m) => m.name);

describe('the knex command-line tool', () => {
  it("reads the .env where it was run (npx's INIT_CWD), though it changes into the knexfile's folder", async () => {
    const here = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-knexfile-'));
    const variables = Object.entries(env()).filter(([key]) => key !== 'PATH' && key !== 'HOME');
    fs.writeFileSync(path.join(here, '.env'), variables.map(([key, value]) => `${key}="${String(value)}"`).join('\n') + '\n', { mode: 0o600 });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [path.join(ROOT, 'node_modules/knex/bin/cli.js'), '--knexfile', path.join(ROOT, 'dist/knexfile.js'), 'migrate:status'],
      // Only what npx itself sets: every setting comes from the .env.
      { cwd: here, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', INIT_CWD: here } },
    );
    expect(stdout).toContain('No Pending Migration files Found');
  });
});

describe('eventops migrate', () => {
  it('every form connects with DIRECT_URL, not DATABASE_URL', async () => {
    const status = await runCli(['migrate', 'status', '--json'], { env: env() });
    expect(status.stderr).toBe('');
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toEqual({ applied: await appliedMigrations(), pending: [] });
    const latest = await runCli(['migrate', '--json'], { env: env() });
    expect(latest.code).toBe(0);
    expect(JSON.parse(latest.stdout)).toEqual({ applied: [] });
  });

  it('rollback without --confirm refuses (exit 2), prints the migrations and tables it would drop, and changes nothing', async () => {
    const tablesBefore = await publicTables();
    const migrationsBefore = await appliedMigrations();
    expect(tablesBefore).toContain('registrations');

    const human = await runCli(['migrate', 'rollback'], { env: env() });
    expect(human.code).toBe(2);
    expect(human.stdout).toContain(`would roll back: ${[...migrationsBefore].reverse().join(', ')}`);
    expect(human.stdout).toMatch(/would drop tables, with all their rows: .*registrations/);
    expect(human.stderr).toContain('--confirm');

    const json = await runCli(['migrate', 'rollback', '--json'], { env: env() });
    expect(json.code).toBe(2);
    const plan = JSON.parse(json.stdout) as { rolledBack: string[]; wouldRollBack: string[]; wouldDropTables: string[] };
    expect(plan.rolledBack).toEqual([]);
    expect(plan.wouldRollBack).toEqual([...migrationsBefore].reverse());
    expect([...plan.wouldDropTables].sort()).toEqual(tablesBefore);

    expect(await publicTables()).toEqual(tablesBefore);
    expect(await appliedMigrations()).toEqual(migrationsBefore);
  });

  it('rollback --confirm rolls the last batch back on DIRECT_URL; migrate applies it again', async () => {
    const migrationsBefore = await appliedMigrations();
    const rollback = await runCli(['migrate', 'rollback', '--confirm', '--json'], { env: env() });
    expect(rollback.code).toBe(0);
    expect(JSON.parse(rollback.stdout)).toEqual({ rolledBack: [...migrationsBefore].reverse() });
    expect(await publicTables()).toEqual([]);

    const latest = await runCli(['migrate', '--json'], { env: env() });
    expect(latest.code).toBe(0);
    expect(JSON.parse(latest.stdout)).toEqual({ applied: migrationsBefore });
    expect(await publicTables()).toContain('registrations');
  });

  it('rollback without --confirm names the columns the last batch would drop from tables that stay', async () => {
    // Make one migration that adds columns a batch of its own, as a deploy that added only it leaves it.
    const addsColumns = (await appliedMigrations()).find((name) => name.includes('celebrations_off'));
    await tdb.db.migrate.down({ ...migrationConfig, name: addsColumns });
    await tdb.db.migrate.up({ ...migrationConfig, name: addsColumns });
    const newest = (await appliedMigrations()).at(-1);
    expect(newest).toBe(addsColumns);

    const human = await runCli(['migrate', 'rollback'], { env: env() });
    expect(human.code).toBe(2);
    expect(human.stdout).toContain(`would roll back: ${newest}`);
    expect(human.stdout).not.toContain('would drop tables');
    expect(human.stdout).toContain(
      'would drop columns, with their values in every row: people.celebrations_off_at, people.celebrations_off_by, people.celebrations_off_note',
    );

    const json = await runCli(['migrate', 'rollback', '--json'], { env: env() });
    const plan = JSON.parse(json.stdout) as { wouldDropTables: string[]; wouldDropColumns: string[] };
    expect(plan.wouldDropTables).toEqual([]);
    expect(plan.wouldDropColumns).toEqual(['people.celebrations_off_at', 'people.celebrations_off_by', 'people.celebrations_off_note']);
    const columns = await tdb.db('information_schema.columns').where({ table_name: 'people', column_name: 'celebrations_off_at' });
    expect(columns).toHaveLength(1);
  });
});

describe('eventops migrate rollback on a fresh install (every migration in one batch)', () => {
  let fresh: TestDatabase;
  beforeAll(async () => {
    fresh = await createTestDatabase();
  });
  afterAll(async () => {
    await fresh.drop();
  });
  const freshEnv = () => testEnv({ DATABASE_URL: fresh.url, MIGRATE_ON_START: 'false' });

  it('without rows: the suggestion says the whole schema goes and to take a backup (pg_dump) before --confirm', async () => {
    const result = await runCli(['migrate', 'rollback'], { env: freshEnv() });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('suggestion: this batch is every migration: the rollback drops the whole schema; take a backup first (pg_dump');
    expect(result.stderr).toContain('then run `eventops migrate rollback --confirm`');
    expect(result.stderr).not.toContain('deleted for good');
  });

  it('with rows: the suggestion says plainly how many rows of which tables would be deleted for good; nothing changes', async () => {
    await fresh.db('events').insert([
      { slug: 'camp', title: 'Camp', starts_at: new Date('2027-03-12T07:00:00Z') },
      { slug: 'retreat', title: 'Retreat', starts_at: new Date('2027-04-12T07:00:00Z') },
    ]);
    await fresh.db('app_settings').insert({ key: 'church.name', value: JSON.stringify('Grace') });
    const result = await runCli(['migrate', 'rollback'], { env: freshEnv() });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/the tables it drops hold 3 rows \((?=.*events 2)(?=.*app_settings 1).*\), deleted for good; take a backup first \(pg_dump/);

    const json = await runCli(['migrate', 'rollback', '--json'], { env: freshEnv() });
    expect(json.code).toBe(2);
    const plan = JSON.parse(json.stdout) as { wouldDeleteRows: Record<string, number>; everyMigration: boolean };
    expect(plan).toMatchObject({ wouldDeleteRows: { events: 2, app_settings: 1 }, everyMigration: true });
    expect(await fresh.db('events').count({ n: '*' }).first()).toEqual({ n: 2 });
  });
});
