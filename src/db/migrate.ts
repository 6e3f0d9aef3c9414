import type { Db } from './connect.js';
import { migrationConfig } from './migration-source.js';

export async function migrateLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(migrationConfig)) as [number, string[]];
  return applied;
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
