import type { Db } from './connect.js';
import { AppError, EXIT, errorMessage } from '../errors.js';
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

/** A rollback that stopped: the migration whose `down` failed, and those rolled back before it (they stay rolled back). */
export class MigrationRollbackError extends AppError {
  constructor(
    readonly migration: string,
    readonly rolledBack: string[],
    cause: unknown,
  ) {
    const before = rolledBack.length ? `rolled back before it (and still rolled back): ${rolledBack.join(', ')}` : 'nothing was rolled back';
    super('migration_rollback_failed', `rolling back ${migration} failed: ${errorMessage(cause)}`, {
      exitCode: EXIT.failure,
      cause,
      suggestion: `${before}; ${migration} and every migration before it are still applied. Fix what stopped it, then run the rollback again, or \`eventops migrate\` to apply the rolled-back ones again`,
    });
    this.name = 'MigrationRollbackError';
  }
}

const MIGRATIONS_TABLE = migrationConfig.tableName ?? 'knex_migrations';
const LOCK_TABLE = `${MIGRATIONS_TABLE}_lock`;

/** The applied migrations a rollback undoes, newest first: the last batch, or with `all` every one. */
async function rollbackTargets(db: Db, options: { all?: boolean }): Promise<string[]> {
  if (!(await db.schema.hasTable(MIGRATIONS_TABLE))) return [];
  const rows = await db(MIGRATIONS_TABLE)
    .modify((q) => {
      if (!options.all) q.where('batch', db(MIGRATIONS_TABLE).max('batch'));
    })
    .orderBy('id', 'desc')
    .select<Array<{ name: string }>>('name');
  const names = rows.map((row) => row.name);
  const known = new Set(await migrationSource.getMigrations([]));
  const unknown = names.filter((name) => !known.has(name));
  if (unknown.length) {
    throw new AppError('migration_unknown', `applied migrations this version does not have: ${unknown.join(', ')}`, {
      suggestion: 'roll back with the version of eventops that applied them',
    });
  }
  return names;
}

/** knex's lock flag, taken as knex takes it, so neither a `migrate` nor a server's start migrates while the rollback runs. */
async function takeMigrationLock(db: Db): Promise<void> {
  await db.transaction(async (trx) => {
    const row = await trx(LOCK_TABLE).forUpdate().first<{ is_locked: number } | undefined>('is_locked');
    if (row?.is_locked) {
      throw new AppError('migration_locked', 'another migration run holds the migration lock: nothing was rolled back', {
        suggestion: 'wait for it to finish; if none is running, release it with `npx knex --knexfile dist/knexfile.js migrate:unlock`',
      });
    }
    if (row) await trx(LOCK_TABLE).update({ is_locked: 1 });
    else await trx(LOCK_TABLE).insert({ is_locked: 1 });
  });
}

async function freeMigrationLock(db: Db): Promise<void> {
  await db(LOCK_TABLE).update({ is_locked: 0 });
}

/** One migration's `down` and its row in the migrations table, in one transaction: both happen or neither. */
async function rollBackOne(db: Db, name: string): Promise<void> {
  await db.transaction(async (trx) => {
    await (await migrationSource.getMigration(name)).down?.(trx);
    await trx(MIGRATIONS_TABLE).where({ name }).del();
  });
}

/**
 * Rolls back the last batch (or, with `all`, every applied migration), newest first, one
 * transaction per migration. knex's own rollback also runs each `down` in a transaction of its
 * own but deletes its row from knex_migrations after that transaction commits, and its error does
 * not say which migration failed; here the row goes in the same transaction, and a failure stops
 * the run with a MigrationRollbackError naming the migration: those rolled back before it stay
 * rolled back, it and every older one stay applied.
 */
export async function migrateRollback(db: Db, options: { all?: boolean } = {}): Promise<string[]> {
  const targets = await rollbackTargets(db, options);
  if (targets.length === 0) return [];
  await takeMigrationLock(db);
  const rolledBack: string[] = [];
  try {
    for (const name of targets) {
      try {
        await rollBackOne(db, name);
      } catch (error) {
        throw new MigrationRollbackError(name, rolledBack, error);
      }
      rolledBack.push(name);
    }
  } finally {
    await freeMigrationLock(db);
  }
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
  /** The last batch (or every applied migration), newest first, as a rollback would undo it. */
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

/** What `migrate rollback` (with `all`: `--all`) would do and what it would delete, found by reading only. */
export async function planRollback(db: Db, options: { all?: boolean } = {}): Promise<RollbackPlan> {
  const migrations = await rollbackTargets(db, options);
  if (migrations.length === 0) return { migrations: [], tables: [], columns: [], rows: {}, everyMigration: false };
  const { tables, columns } = await dryRunDown(db, migrations);
  const [{ applied }] = (await db(MIGRATIONS_TABLE).count({ applied: '*' })) as [{ applied: number }];
  return { migrations, tables, columns, rows: await rowCounts(db, tables), everyMigration: Number(applied) === migrations.length };
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
    for (const name of migrations) {
      try {
        await (await migrationSource.getMigration(name)).down?.(trx);
      } catch (error) {
        throw new AppError('migration_rollback_would_fail', `the rollback would stop at ${name}: ${errorMessage(error)}; nothing was changed`, {
          cause: error,
          suggestion: `fix what stops it first: \`eventops migrate rollback --confirm\` would roll back the migrations newer than ${name}, then stop there`,
        });
      }
    }
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
