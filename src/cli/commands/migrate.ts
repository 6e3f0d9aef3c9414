import type { Command } from 'commander';
import { z } from 'zod';
import { UsageError } from '../../errors.js';
import { printResult, withContext } from '../io.js';

const actionSchema = z.enum(['latest', 'rollback', 'status']);

export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description('apply, roll back or list database migrations (for operators who set MIGRATE_ON_START=false)')
    .argument('[action]', 'latest | rollback | status', 'latest')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExamples:\n  $ eventops migrate\n  $ eventops migrate status --json')
    .action(async (action: string, options: { json?: boolean }) => {
      const parsed = actionSchema.safeParse(action);
      if (!parsed.success) throw new UsageError(`unknown migrate action "${action}"`, 'use latest, rollback or status');
      const { migrateLatest, migrateRollback, migrationStatus } = await import('../../db/migrate.js');
      await withContext(
        async (ctx) => {
          if (parsed.data === 'status') {
            const status = await migrationStatus(ctx.db);
            printResult(options, status, [
              `applied: ${status.applied.length}${status.applied.length ? ` (${status.applied.join(', ')})` : ''}`,
              `pending: ${status.pending.length}${status.pending.length ? ` (${status.pending.join(', ')})` : ''}`,
            ]);
          } else if (parsed.data === 'rollback') {
            const rolledBack = await migrateRollback(ctx.db);
            printResult(options, { rolledBack }, rolledBack.length ? `rolled back: ${rolledBack.join(', ')}` : 'nothing to roll back');
          } else {
            const applied = await migrateLatest(ctx.db);
            printResult(options, { applied }, applied.length ? `applied: ${applied.join(', ')}` : 'already up to date');
          }
        },
        { migrate: false },
      );
    });
}
