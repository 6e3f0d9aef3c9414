import type { Command } from 'commander';
import { z } from 'zod';
import type { RollbackPlan } from '../../db/migrate.js';
import { UsageError } from '../../errors.js';
import { printResult } from '../io.js';

const actionSchema = z.enum(['latest', 'rollback', 'status']);

/**
 * On a fresh install every migration is one batch, so the rollback this suggests drops the whole
 * schema: the backup comes first, and rows it would delete are named.
 */
function rollbackSuggestion(plan: RollbackPlan, all?: boolean): string {
  const counted = Object.entries(plan.rows);
  const total = counted.reduce((sum, [, rows]) => sum + rows, 0);
  const whole = plan.everyMigration ? ['this batch is every migration: the rollback drops the whole schema'] : [];
  const loses = counted.length
    ? [`the tables it drops hold ${total} row${total === 1 ? '' : 's'} (${counted.map(([table, rows]) => `${table} ${rows}`).join(', ')}), deleted for good`]
    : [];
  const backup = `take a backup first (pg_dump --format=custom --file=before-rollback.dump "<DIRECT_URL or DATABASE_URL>"), then run \`eventops migrate rollback${all ? ' --all' : ''} --confirm\``;
  return [...whole, ...loses, backup].join('; ');
}

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply, roll back or list database migrations (for operators who set MIGRATE_ON_START=false); uses DIRECT_URL')
    .argument('[action]', 'latest | rollback | status', 'latest')
    .option('--confirm', 'with rollback: really roll back (without it, only print what would be dropped)')
    .option('--all', 'with rollback: every applied migration, not only the last batch')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops migrate\n  $ eventops migrate status --json\n  $ eventops migrate rollback            what the last batch\'s rollback would drop (nothing changed)\n  $ eventops migrate rollback --confirm  roll it back, dropping those tables and columns with their data (take a pg_dump backup first)\n  $ eventops migrate rollback --all --confirm  roll back every migration (an empty database)\n\nEach migration rolls back in a transaction of its own: a failure stops there, names the migration\nand leaves it and the older ones applied (the newer ones stay rolled back).\n\nExit codes: 0 ok, 1 failure, 2 rollback without --confirm, 78 configuration.',
    )
    .action(async (action: string, options: { json?: boolean; confirm?: boolean; all?: boolean }) => {
      const parsed = actionSchema.safeParse(action);
      if (!parsed.success) throw new UsageError(`unknown migrate action "${action}"`, 'use latest, rollback or status');
      if (options.all && parsed.data !== 'rollback') throw new UsageError('--all goes with rollback only', 'run `eventops migrate rollback --all`');
      const { migrateLatest, migrateRollback, migrationStatus, planRollback } = await import('../../db/migrate.js');
      const { loadRuntimeConfig, openContext } = await import('../runtime.js');
      const loaded = loadRuntimeConfig();
      // Migrations run on DIRECT_URL (default DATABASE_URL), as they do on start: a pooler in front of DATABASE_URL may not carry DDL.
      const config = { ...loaded.config, databaseUrl: loaded.config.directUrl ?? loaded.config.databaseUrl };
      const ctx = await openContext({ ...loaded, config }, { migrate: false });
      try {
        if (parsed.data === 'status') {
          const status = await migrationStatus(ctx.db);
          printResult(options, status, [
            `applied: ${status.applied.length}${status.applied.length ? ` (${status.applied.join(', ')})` : ''}`,
            `pending: ${status.pending.length}${status.pending.length ? ` (${status.pending.join(', ')})` : ''}`,
          ]);
        } else if (parsed.data === 'rollback' && !options.confirm) {
          const plan = await planRollback(ctx.db, { all: options.all });
          printResult(
            options,
            { rolledBack: [], wouldRollBack: plan.migrations, wouldDropTables: plan.tables, wouldDropColumns: plan.columns, wouldDeleteRows: plan.rows, everyMigration: plan.everyMigration },
            [
              plan.migrations.length ? `would roll back: ${plan.migrations.join(', ')}` : 'nothing to roll back',
              ...(plan.tables.length ? [`would drop tables, with all their rows: ${plan.tables.join(', ')}`] : []),
              ...(plan.columns.length ? [`would drop columns, with their values in every row: ${plan.columns.join(', ')}`] : []),
            ],
          );
          if (plan.migrations.length > 0) {
            throw new UsageError('migrate rollback drops data: nothing was changed', rollbackSuggestion(plan, options.all));
          }
        } else if (parsed.data === 'rollback') {
          const rolledBack = await migrateRollback(ctx.db, { all: options.all });
          printResult(options, { rolledBack }, rolledBack.length ? `rolled back: ${rolledBack.join(', ')}` : 'nothing to roll back');
        } else {
          const applied = await migrateLatest(ctx.db);
          printResult(options, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
        }
      } finally {
        await ctx.close();
      }
    });
}
