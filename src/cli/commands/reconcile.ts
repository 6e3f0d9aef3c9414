import type { Command } from 'commander';
import { z } from 'zod';
import { AppError, EXIT, UsageError } from '../../errors.js';
import type { ReconcileSummary } from '../../jobs/reconcile.js';
import { printResult, withContext } from '../io.js';
import { counted } from '../../plural.js';

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

const optionsSchema = z.object({
  since: z
    .string()
    .regex(/^\d{1,4}[mhd]$/, { error: 'must be a duration such as 72h, 90m or 3d' })
    .transform((text) => Number(text.slice(0, -1)) * UNIT_MS[text.slice(-1) as keyof typeof UNIT_MS])
    .refine((ms) => ms > 0, { error: 'must be longer than zero' }),
  apply: z.boolean().optional(),
  json: z.boolean().optional(),
});

/** eventops reconcile: the same job function as POST /api/cron/reconcile and the scheduler, but a report unless --apply. */
export function registerReconcileCommand(program: Command): void {
  program
    .command('reconcile')
    .description("compare our card checkouts with the provider's sessions and, with --apply, repair the differences (suggested: hourly)")
    .option('--since <duration>', 'how far back to look, e.g. 72h, 90m, 3d', '72h')
    .option('--apply', 'repair: complete paid checkouts, record unpaid ones, apply missed refunds and disputes, alert on mismatches')
    .option('--json', 'print the report as JSON')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eventops reconcile\n  $ eventops reconcile --since 24h --apply\n\n' +
        'Never refunds; its only change at the provider is expiring a session our side has expired.\n' +
        'Exit codes: 0 everything matches or was repaired, 1 a difference remains, 2 usage, 78 configuration.',
    )
    .action(async (raw: unknown) => {
      const parsed = optionsSchema.safeParse(raw);
      if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => `--${issue.path.join('.')} ${issue.message}`);
        throw new UsageError(`invalid arguments: ${problems.join('; ')}`, 'see `eventops reconcile --help`');
      }
      const options = parsed.data;
      const summary = await withContext(async (ctx) => {
        if (!ctx.config.payments) {
          throw new AppError('payments_not_configured', 'card payments are not configured, so there is nothing to reconcile', {
            exitCode: EXIT.config,
            suggestion: 'set PSP_SECRET_KEY and PSP_WEBHOOK_SECRET',
          });
        }
        const { reconcileCheckouts } = await import('../../jobs/reconcile.js');
        return reconcileCheckouts(ctx, { trigger: 'cli', dryRun: !options.apply, sinceMs: options.since });
      });
      printResult(options, summary, describe(summary, Boolean(options.apply)));
      if (summary.outcome !== 'ok') process.exitCode = EXIT.failure;
    });
}

function describe(summary: ReconcileSummary, applied: boolean): string[] {
  const rows = summary.rows ?? [];
  const header = { session: 'SESSION', ours: 'OURS', provider: 'PROVIDER', action: 'ACTION' };
  const shown = rows.map((row) => ({ session: row.session, ours: row.ours, provider: row.provider, action: row.result ? `${row.action}: ${row.result}` : row.action }));
  const width = (key: keyof typeof header) => Math.max(header[key].length, ...shown.map((row) => row[key].length));
  const line = (row: typeof header) => [row.session.padEnd(width('session')), row.ours.padEnd(width('ours')), row.provider.padEnd(width('provider')), row.action].join('  ');
  const events = summary.eventsSince ? ` and ${counted(summary.events ?? 0, 'refund or dispute event', 'refund or dispute events')} since ${summary.eventsSince}` : '';
  const totals = `${counted(summary.listed ?? 0, 'provider session', 'provider sessions')} since ${summary.since ?? '?'}${events}: ${summary.matched ?? 0} matched, ${summary.repaired ?? 0} repaired, ${summary.unresolved ?? 0} unresolved`;
  const hint = !applied && (summary.unresolved ?? 0) > 0 ? ['Nothing was changed: run again with --apply to repair.'] : [];
  return [...(shown.length > 0 ? [line(header), ...shown.map(line)] : []), totals, ...hint];
}
