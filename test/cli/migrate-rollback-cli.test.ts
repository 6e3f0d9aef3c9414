import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_EVENT_SLUG } from '../../src/office/demo-seed.js';
import type { Db } from '../../src/db/connect.js';
import { migrationSource } from '../../src/db/migration-source.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';

/** Everything `migrate` creates in the public schema, as PostgreSQL describes it: a round trip must give back the same. */
async function schemaSnapshot(db: Db) {
  const columns = await db.raw(`
    SELECT table_name, column_name, ordinal_position, data_type, is_nullable, column_default, is_identity, is_generated, generation_expression
      FROM information_schema.columns WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`);
  const constraints = await db.raw(`
    SELECT c.conrelid::regclass::text AS table_name, c.conname, pg_get_constraintdef(c.oid) AS definition
      FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
     WHERE n.nspname = 'public' ORDER BY 1, 2`);
  const indexes = await db.raw(`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1, 2`);
  const triggers = await db.raw(`
    SELECT event_object_table, trigger_name, event_manipulation, action_timing, action_statement
      FROM information_schema.triggers WHERE trigger_schema = 'public' ORDER BY 1, 2, 3`);
  const functions = await db.raw(`
    SELECT p.proname, pg_get_functiondef(p.oid) AS definition
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = 'public' ORDER BY 1`);
  return { columns: columns.rows, constraints: constraints.rows, indexes: indexes.rows, triggers: triggers.rows, functions: functions.rows };
}

const publicTables = async (db: Db) =>
  (await db('pg_tables').where({ schemaname: 'public' }).select<Array<{ tablename: string }>>('tablename'))
    .map((t) => t.tablename)
    .filter((name) => !name.startsWith('knex_migrations'))
    .sort();
const appliedMigrations = async (db: Db) => (await db('knex_migrations').orderBy('id').select<Array<{ name: string }>>('name')).map((m) => m.name);
const columnExists = async (db: Db, table: string, column: string) =>
  (await db('information_schema.columns').where({ table_schema: 'public', table_name: table, column_name: column })).length === 1;

describe('migrate rollback --all on the data the product writes (the demo church, cash, a partial payment, a refund)', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => {
    await tdb.drop();
  });
  const env = () => testEnv({ DATABASE_URL: tdb.url, NODE_ENV: 'development', ALLOW_DEMO_SEED: 'true', MIGRATE_ON_START: 'false' });
  const cli = async (args: string[]) => {
    const result = await runCli(args, { env: env() });
    return result;
  };
  const ok = async (args: string[]) => {
    const result = await cli(args);
    expect(result.stderr, args.join(' ')).toBe('');
    expect(result.code, args.join(' ')).toBe(0);
    return result;
  };

  it('every down migration runs on that data: the dry run and the real one roll back all, and migrate restores the same schema', async () => {
    await ok(['demo', '--seed-only']);
    const pending = await tdb.db('registrations').where({ status: 'PENDING', payment_method: 'bank' }).orderBy('contact_name').select<Array<{ id: string; total_minor: number }>>('id', 'total_minor');
    expect(pending).toHaveLength(2);
    const [ruth, tom] = pending as [{ id: string; total_minor: number }, { id: string; total_minor: number }];
    // Paid in full in cash: the registration's method becomes cash, which the first office migration allowed.
    await ok(['registrations', 'mark-paid', paymentReference(tom.id), '--amount', String(tom.total_minor / 100), '--method', 'cash']);
    await ok(['registrations', 'mark-paid', paymentReference(ruth.id), '--amount', '10', '--partial', '--method', 'other']);
    // A registration paid, cancelled, and its money paid back in cash by hand.
    const added = await ok(['registrations', 'add', '--event', DEMO_EVENT_SLUG, '--name', 'Ada Refund', '--email', 'ada@example.org', '--attendee', 'Ada Refund:adult', '--json']);
    const { registration } = JSON.parse(added.stdout) as { registration: { reference: string; totalMinor: number } };
    await ok(['registrations', 'mark-paid', registration.reference, '--amount', String(registration.totalMinor / 100)]);
    await ok(['registrations', 'cancel', registration.reference]);
    await ok(['registrations', 'record-refund', registration.reference, '--amount', String(registration.totalMinor / 100), '--method', 'cash']);
    // Help with the cost from a fund, and a bus seat bought with a ticket: rows of the newest migrations.
    await ok(['registrations', 'credit', paymentReference(ruth.id), '--amount', '5', '--fund', 'Camp scholarships']);
    const demo = await tdb.db('events').where({ slug: DEMO_EVENT_SLUG }).first<{ pricing: string | Record<string, unknown> }>('pricing');
    const pricing = typeof demo?.pricing === 'string' ? (JSON.parse(demo.pricing) as Record<string, unknown>) : (demo?.pricing ?? {});
    await tdb.db('events').where({ slug: DEMO_EVENT_SLUG }).update({ pricing: JSON.stringify({ ...pricing, addons: [{ id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee', stock: 40 }] }) });
    await ok(['registrations', 'add', '--event', DEMO_EVENT_SLUG, '--name', 'Bo Bus', '--email', 'bo@example.org', '--attendee', 'Bo Bus:adult', '--addon', '1:bus']);
    expect(await tdb.db('registration_addons').count({ n: '*' }).first()).toEqual({ n: 1 });
    expect(await tdb.db('registrations').where({ payment_method: 'cash' }).count({ n: '*' }).first()).toEqual({ n: 1 });
    expect(await tdb.db('registration_payments').whereIn('method', ['cash', 'other']).count({ n: '*' }).first()).toEqual({ n: 2 });
    expect(await tdb.db('registration_refunds').where({ method: 'cash' }).count({ n: '*' }).first()).toEqual({ n: 1 });

    const before = await schemaSnapshot(tdb.db);
    const migrations = await appliedMigrations(tdb.db);
    expect(migrations).toEqual(await migrationSource.getMigrations([]));

    const dryRun = await cli(['migrate', 'rollback', '--all', '--json']);
    expect(dryRun.code).toBe(2);
    expect(JSON.parse(dryRun.stdout)).toMatchObject({ rolledBack: [], wouldRollBack: [...migrations].reverse(), everyMigration: true });
    expect(dryRun.stderr).toContain('eventops migrate rollback --all --confirm');
    expect(await appliedMigrations(tdb.db)).toEqual(migrations);

    const rollback = await cli(['migrate', 'rollback', '--all', '--confirm', '--json']);
    expect(rollback.stderr).toBe('');
    expect(rollback.code).toBe(0);
    expect(JSON.parse(rollback.stdout)).toEqual({ rolledBack: [...migrations].reverse() });
    expect(await publicTables(tdb.db)).toEqual([]);
    expect(await appliedMigrations(tdb.db)).toEqual([]);
    expect(await tdb.db('knex_migrations_lock').first('is_locked')).toEqual({ is_locked: 0 });

    const latest = await cli(['migrate', '--json']);
    expect(latest.code).toBe(0);
    expect(JSON.parse(latest.stdout)).toEqual({ applied: migrations });
    expect(await schemaSnapshot(tdb.db)).toEqual(before);
  }, 120_000);
});

describe('a rollback that fails stops at the failing migration, names it, and keeps one transaction per migration', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase();
  });
  afterAll(async () => {
    await tdb.drop();
  });
  const env = () => testEnv({ DATABASE_URL: tdb.url, MIGRATE_ON_START: 'false' });

  it("an operator's view on events.ends_at stops the rollback of event_ends_at: the newer ones stay rolled back, it and the older ones stay applied", async () => {
    const migrations = await appliedMigrations(tdb.db);
    const failing = '20261128000400_event_ends_at';
    const newer = migrations.slice(migrations.indexOf(failing) + 1).reverse();
    // Every migration after it is rolled back first (newest first), whatever later ones are added.
    expect(newer.slice(-3)).toEqual(['20261130000100_registration_refunds', '20261129000100_operations_alerts_lookups', '20261128000500_registrations_by_event']);
    await tdb.db.raw('CREATE VIEW camp_dates AS SELECT slug, ends_at FROM events');

    const dryRun = await runCli(['migrate', 'rollback', '--all'], { env: env() });
    expect(dryRun.code).toBe(1);
    expect(dryRun.stderr).toContain(`the rollback would stop at ${failing}: `);
    expect(dryRun.stderr).toContain('nothing was changed');
    expect(await appliedMigrations(tdb.db)).toEqual(migrations);

    const rollback = await runCli(['migrate', 'rollback', '--all', '--confirm'], { env: env() });
    expect(rollback.code).toBe(1);
    expect(rollback.stderr).toContain(`eventops: rolling back ${failing} failed: `);
    expect(rollback.stderr).toContain('other objects depend on it');
    expect(rollback.stderr).toContain(`rolled back before it (and still rolled back): ${newer.join(', ')}; ${failing} and every migration before it are still applied`);
    expect(rollback.stderr).not.toContain('unexpected error');

    expect(await appliedMigrations(tdb.db)).toEqual(migrations.slice(0, migrations.indexOf(failing) + 1));
    expect(await publicTables(tdb.db)).not.toContain('registration_refunds');
    // The failing migration's down ran in its own transaction: its check, dropped before the column failed, is back.
    expect(await columnExists(tdb.db, 'events', 'ends_at')).toBe(true);
    expect(await tdb.db('pg_constraint').where({ conname: 'events_ends_after_start_check' })).toHaveLength(1);
    expect(await tdb.db('knex_migrations_lock').first('is_locked')).toEqual({ is_locked: 0 });

    await tdb.db.raw('DROP VIEW camp_dates');
    const latest = await runCli(['migrate', '--json'], { env: env() });
    expect(latest.code).toBe(0);
    expect(JSON.parse(latest.stdout)).toEqual({ applied: [...newer].reverse() });
  }, 60_000);
});
