import type { AppContext } from '../context.js';
import { runRecordedJob } from './run-recorded.js';
import type { JobOptions, JobSummary } from './types.js';
import type { ReconcileReport } from '../payments/reconcile/run.js';

export interface ReconcileSummary extends JobSummary, Partial<ReconcileReport> {
  job: 'reconcile';
  reason?: string;
}

/**
 * Our checkouts against the provider's sessions of the window (default 72 hours,
 * the provider's redelivery window). A dry run (the CLI without --apply) reports
 * and changes nothing; every other run repairs. `partial` while a difference
 * remains, so cron and the CLI exit 1 and the scheduler tries again.
 */
export async function reconcileCheckouts(ctx: AppContext, options: JobOptions): Promise<ReconcileSummary> {
  const dryRun = Boolean(options.dryRun);
  if (!ctx.config.payments) {
    ctx.logger.info('reconcile skipped: card payments are not configured');
    return { job: 'reconcile', outcome: 'skipped', dryRun, reason: 'card payments are not configured (PSP_SECRET_KEY, PSP_WEBHOOK_SECRET)' };
  }
  return runRecordedJob<ReconcileSummary>(ctx, 'reconcile', options, async () => {
    const { DEFAULT_RECONCILE_WINDOW_MS, reconcileWithProvider } = await import('../payments/reconcile/run.js');
    const report = await reconcileWithProvider(ctx, { sinceMs: options.sinceMs ?? DEFAULT_RECONCILE_WINDOW_MS, apply: !dryRun });
    options.onProgress?.({ listed: report.listed, repaired: report.repaired, unresolved: report.unresolved });
    return {
      job: 'reconcile',
      outcome: report.unresolved > 0 ? 'partial' : 'ok',
      dryRun,
      ...report,
      ...(dryRun ? { wouldDo: report.rows.filter((row) => row.action !== 'none').map((row) => `${row.action} ${row.session}: ${row.why}`) } : {}),
    };
  });
}
