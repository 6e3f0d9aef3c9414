import type { Command } from 'commander';
import type { JobName } from '../../jobs/types.js';
import type { OperationsStatus } from '../../jobs/status.js';
import { counted } from '../../plural.js';
import { printResult, withContext } from '../io.js';

function formatAge(seconds: number): string {
  if (seconds < 90) return `${seconds}s ago`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)}m ago`;
  if (seconds < 36 * 3600) return `${Math.round(seconds / 3600)}h ago`;
  return `${Math.round(seconds / 86400)}d ago`;
}

function oldestSync(oldest: OperationsStatus['oldestWebsiteSync']): string {
  if (!oldest) return '';
  const tries = oldest.attempts === 1 ? '1 try' : `${oldest.attempts} tries`;
  return ` (oldest queued ${formatAge(oldest.ageSeconds)}, ${tries}${oldest.lastError ? `, last error: ${oldest.lastError}` : ''})`;
}

const RECONCILE_OVERDUE_S = 3 * 3600;

/**
 * With card payments on and cron running the jobs, a crontab whose reconcile line is still commented out (the
 * example's default) never repairs a payment whose webhook was lost: said, with what to do.
 */
export function reconcileOverdue(status: OperationsStatus, options: { cardPayments: boolean; inAppScheduler: boolean }): string | undefined {
  if (!options.cardPayments || options.inAppScheduler) return undefined;
  const lastRun = status.jobs.find((job) => job.job === 'reconcile')?.lastRun;
  if (lastRun && lastRun.ageSeconds <= RECONCILE_OVERDUE_S) return undefined;
  const since = lastRun ? `has not run since ${formatAge(lastRun.ageSeconds)}` : 'has never run';
  return `warning: card payments are on and reconcile ${since}: a payment whose webhook was lost is not registered until it runs (enable its hourly line in the crontab)`;
}

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description("each job's last run, outcome and age; open alerts; pending website deliveries and queued mail; this server's clock against the database's")
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  $ eventops status --json')
    .action(async (options: { json?: boolean }) => {
      const [{ readOperationsStatus }, { readNextDueTimes }, { measureClockOffset, clockOffsetProblem }] = await Promise.all([
        import('../../jobs/status.js'),
        import('../../scheduler/index.js'),
        import('../../db/clock-offset.js'),
      ]);
      await withContext(async (ctx) => {
        const status = await readOperationsStatus(ctx.db, ctx.clock.now());
        const clockOffsetMs = await measureClockOffset(ctx.db, ctx.clock);
        // With the in-app scheduler off (cron runs the jobs) it has no next run to show.
        const inAppScheduler = ctx.config.jobs.inAppCron;
        const nextDue = new Map((inAppScheduler ? await readNextDueTimes(ctx) : []).map((due) => [due.job, due]));
        const schedule = (job: JobName) => {
          const due = nextDue.get(job);
          if (!due) return '';
          if (!due.enabled) return `  in-app: off (${due.reason})`;
          // Not the time of the question, which is past by the time it is read: the job runs at the server's next check.
          const when = due.dueNow ? "due now (at the server's next check, every 5 minutes)" : due.local;
          return `  next (in-app): ${when}${due.purgeOnly ? `, old rows purged only (${due.purgeOnly})` : ''}`;
        };
        const lines = status.jobs.map(({ job, lastRun }) =>
          (lastRun
            ? `${job.padEnd(22)} ${String(lastRun.outcome ?? 'running').padEnd(8)} ${formatAge(lastRun.ageSeconds).padEnd(9)} via ${lastRun.trigger}${lastRun.error ? `  error: ${lastRun.error}` : ''}`
            : `${job.padEnd(22)} never run`) + schedule(job),
        );
        lines.push(
          '',
          inAppScheduler ? 'in-app scheduler: on (IN_APP_CRON)' : 'in-app scheduler: off (IN_APP_CRON is not true): cron or the /api/cron endpoints run the jobs',
          `open operations alerts: ${status.openAlerts}`,
          `pending website-sync deliveries: ${status.pendingWebsiteSync}${oldestSync(status.oldestWebsiteSync)}`,
          `queued mail: ${status.pendingMail} pending, ${status.failedMail} failed`,
          `errors in the last 7 days: ${status.errorsLastWeek}${status.errorsLastWeek > 0 ? ' (`eventops errors` lists them)' : ''}`,
          ...(!status.waitingLists?.length
            ? ['waiting lists: nobody waiting']
            : status.waitingLists.flatMap((list) => [
                `waiting list ${list.slug}: ${list.waiting} waiting, ${counted(list.offers, 'open offer', 'open offers')} holding ${counted(list.placesOffered, 'place', 'places')}${list.unconfirmed > 0 ? `, ${list.unconfirmed} unconfirmed` : ''}`,
                ...(list.stranded ? [`  ${counted(list.stranded.places, 'place', 'places')} free, not offered: ${list.stranded.reason}`] : []),
              ])),
          `clock: ${clockOffsetProblem(clockOffsetMs) ?? `in step with the database (${clockOffsetMs} ms)`}`,
        );
        const overdue = reconcileOverdue(status, { cardPayments: ctx.config.payments !== undefined, inAppScheduler });
        if (overdue) lines.push(overdue);
        printResult(options, { ...status, inAppScheduler, nextDue: [...nextDue.values()], clockOffsetMs, warnings: overdue ? [overdue] : [] }, lines);
      });
    });
}
