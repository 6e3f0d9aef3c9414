import type { Db } from './connect.js';
import { migrationConfig, migrationSource } from './migration-source.js';

export async function migrateLatest(db: Db): Promise<string[]> {
  if (await everyMigrationApplied(db)) return [];
  const [, applied] = (await db.migrate.latest(migrationConfig)) as [number, string[]];
  return applied;
}

/** Whether the database lacks one of our migrations (or has one we do not know), found by reading only. */
export async function migrationsPending(db: Db): Promise<boolean> {
  return !(await everyMigrationApplied(db));
}

/**
 * One query instead of knex's eleven (table checks, lock, list, unlock) on
 * every start: true only when the applied list is exactly ours. Anything else
 * (no table yet, a pending migration, an applied one we do not know) goes
 * through knex's migrator, which takes its lock and reports as before.
 */
async function everyMigrationApplied(db: Db): Promise<boolean> {
  let applied: string[];
  try {
    applied = (await db(migrationConfig.tableName ?? 'knex_migrations').select<Array<{ name: string }>>('name')).map((row) => row.name);
  } catch (error) {
    if ((error as { code?: unknown }).code === '42P01') return false; // undefined_table: a new database
    throw error;
  }
  const ours = await migrationSource.getMigrations([]);
  return applied.length === ours.length && ours.every((name) => applied.includes(name));
}

export async function migrateRollback(db: Db): Promise<string[]> {
  const [, rolledBack] = (await db.migrate.rollback(migrationConfig)) as [number, string[]];
  return rolledBack;
}

export interface MigrationStatus {
  applied: string[];
  pending: string[];
}

export async function migrationStatus(db: Db): Promise<MigrationStatus> {
  const [completed, pending] = (await db.migrate.list(migrationConfig)) as [
    Array<{ name: string } | string>,
    Array<{ file: string } | string>,
  ];
  return {
    applied: completed.map((m) => (typeof m === 'string' ? m : m.name)),
    pending: pending.map((m) => (typeof m === 'string' ? m : m.file)),
  };
}

export interface RollbackPlan {
  /** The last batch, newest first, as a rollback would undo it. */
  migrations: string[];
  /** Tables that would no longer exist afterwards. */
  tables: string[];
  /** Columns (`table.column`) of the tables that stay that would no longer exist afterwards: their values are lost too. */
  columns: string[];
  /** Rows in the tables that would be dropped, for those that hold any. */
  rows: Record<string, number>;
  /** The last batch is every applied migration (a fresh install migrates in one batch): the rollback leaves no schema. */
  everyMigration: boolean;
}

/** Every column of every table in the public schema, in table then column order. */
async function publicColumns(conn: Db): Promise<Array<{ table: string; column: string }>> {
  const rows = await conn('information_schema.columns')
    .join('pg_tables', function () {
      this.on('pg_tables.tablename', 'columns.table_name').andOn('pg_tables.schemaname', 'columns.table_schema');
    })
    .where('columns.table_schema', 'public')
    .orderBy([{ column: 'columns.table_name' }, { column: 'columns.ordinal_position' }])
    .select<Array<{ table_name: string; column_name: string }>>('columns.table_name', 'columns.column_name');
  return rows.map((row) => ({ table: row.table_name, column: row.column_name }));
}

/** What `migrate rollback` would do and what it would delete, found by reading only. */
export async function planRollback(db: Db): Promise<RollbackPlan> {
  const table = migrationConfig.tableName ?? 'knex_migrations';
  const nothing = { migrations: [], tables: [], columns: [], rows: {}, everyMigration: false };
  if (!(await db.schema.hasTable(table))) return nothing;
  const batch = await db(table)
    .where('batch', db(table).max('batch'))
    .orderBy('id', 'desc')
    .select<Array<{ name: string }>>('name');
  const migrations = batch.map((row) => row.name);
  if (migrations.length === 0) return nothing;
  const { tables, columns } = await dryRunDown(db, migrations);
  const [{ applied }] = (await db(table).count({ applied: '*' })) as [{ applied: number }];
  return { migrations, tables, columns, rows: await rowCounts(db, tables), everyMigration: applied === migrations.length };
}

/** The tables that hold rows, with how many: what a rollback dropping them deletes for good. */
async function rowCounts(db: Db, tables: string[]): Promise<Record<string, number>> {
  const rows: Record<string, number> = {};
  for (const name of tables) {
    const [{ count }] = (await db(name).count({ count: '*' })) as [{ count: number }];
    if (count > 0) rows[name] = count;
  }
  return rows;
}

/**
 * Runs the batch's `down` functions inside a transaction that is always rolled
 * back (PostgreSQL DDL is transactional), so the answer is exact and nothing
 * changes. A short lock timeout keeps a busy database from queueing behind it.
 */
async function dryRunDown(db: Db, migrations: string[]): Promise<{ tables: string[]; columns: string[] }> {
  const trx = await db.transaction();
  try {
    await trx.raw(`SET LOCAL lock_timeout = '5s'`);
    const before = await publicColumns(trx);
    for (const name of migrations) await (await migrationSource.getMigration(name)).down?.(trx);
    const after = await publicColumns(trx);
    const tablesAfter = new Set(after.map((c) => c.table));
    const columnsAfter = new Set(after.map((c) => `${c.table}.${c.column}`));
    const tables = [...new Set(before.map((c) => c.table))].filter((t) => !tablesAfter.has(t));
    const columns = before
      .filter((c) => tablesAfter.has(c.table) && !columnsAfter.has(`${c.table}.${c.column}`))
      .map((c) => `${c.table}.${c.column}`);
    return { tables, columns };
  } finally {
    await trx.rollback();
  }
}
