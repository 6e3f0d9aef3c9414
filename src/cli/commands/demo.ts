import type { Command } from 'commander';
import { AppError, errorMessage } from '../../errors.js';
import { JOB_NAMES, type JobName, type JobSummary } from '../../jobs/types.js';
import { loadJobFunction } from '../../jobs/registry.js';
import { printResult } from '../io.js';

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description('development only: load a demo church into the local database and run every job once')
    .option('--json', 'print JSON')
    .option('--seed-only', 'load the demo church but run no job (e.g. to watch `eventops serve` send the emails)')
    .addHelpText(
      'after',
      '\nExample:\n  $ eventops init && eventops demo\n\nThe emails land in .eventops/outbox/ unless SMTP or the mail API is configured.',
    )
    .action(async (options: { json?: boolean; seedOnly?: boolean }) => {
      const { loadRuntimeConfig, openContext } = await import('../runtime.js');
      const loaded = loadRuntimeConfig();
      if (loaded.config.isProduction) {
        throw new AppError('demo_in_production', 'eventops demo never runs in production (NODE_ENV=production)', { exitCode: 1 });
      }
      // The demo overwrites the church's name and bank details and adds users: a real database is refused unless asked for.
      if (loaded.config.databaseUrl && !loaded.config.allowDemoSeed) {
        throw new AppError('demo_needs_embedded_database', 'eventops demo runs only on the embedded development database (DATABASE_URL is set)', {
          exitCode: 1,
          suggestion: 'unset DATABASE_URL to use the embedded database, or set ALLOW_DEMO_SEED=true if this database is a throwaway',
        });
      }
      // The demo seed may create users; the demo command allows it for its own run only.
      // The demo prints its own summary; routine info lines would only bury it.
      const logger = loaded.config.logLevel === 'info' ? loaded.logger.child({}, { level: 'warn' }) : loaded.logger;
      const ctx = await openContext({ logger, config: { ...loaded.config, allowDemoSeed: true } });
      try {
        const { seedDemoChurch, DEMO_EVENT_SLUG } = await import('../../office/demo-seed.js');
        const seed = await seedDemoChurch(ctx);
        const lines = [
          seed.seeded
            ? `Loaded the demo church: ${seed.users} users, ${seed.people} people, ${seed.registrations} registrations, an abandoned checkout and a week of errors.`
            : 'The demo church is already loaded; running the jobs again (what was sent stays sent).',
        ];
        const results: Array<{ job: JobName; summary?: JobSummary; error?: string }> = [];
        if (!options.seedOnly) {
          for (const job of JOB_NAMES) {
            try {
              const summary = await (await loadJobFunction(job))(ctx, { trigger: 'cli' });
              results.push({ job, summary });
              const counts = Object.entries(summary)
                .filter(([key, value]) => typeof value === 'number' && key !== 'runId')
                .map(([key, value]) => `${key} ${String(value)}`)
                .join(', ');
              const status = 'status' in summary ? ` (${String(summary.status)})` : '';
              lines.push(`  ${job.padEnd(22)} ${summary.outcome}${status}${counts ? `: ${counts}` : ''}`);
            } catch (error) {
              results.push({ job, error: errorMessage(error) });
              lines.push(`  ${job.padEnd(22)} failed: ${errorMessage(error)}`);
            }
          }
        }
        const mailer = await ctx.mailer();
        const where =
          mailer.kind === 'outbox' ? `Emails are in ${ctx.config.devOutboxDir} (open the .eml files in any mail program).` : `Emails went out through ${mailer.kind}.`;
        lines.push(
          where,
          `Next: \`eventops registrations list --event ${DEMO_EVENT_SLUG}\` shows who is coming; \`eventops status\` shows each run.`,
        );
        printResult(options, { seed, jobs: results, outbox: mailer.kind === 'outbox' ? ctx.config.devOutboxDir : undefined }, lines);
        if (results.some((r) => r.error || r.summary?.outcome === 'failed')) process.exitCode = 1;
      } finally {
        await ctx.close();
      }
    });
}
