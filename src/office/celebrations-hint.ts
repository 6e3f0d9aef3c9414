import type { AppContext } from '../context.js';
import { localDay } from '../local-time.js';
import type { SettingKey } from '../settings.js';

/**
 * A kind of celebration turned on after the in-app scheduler's run of today had it off: that run settled the day, so
 * today's people would wait for tomorrow unless someone runs the job now. (Cron's hourly lines run again and send
 * them; a run from the command line settles nothing.) The hint for `settings set`, or undefined.
 */
export async function celebrationsSkippedToday(ctx: Pick<AppContext, 'db' | 'config' | 'clock'>, key: SettingKey, value: unknown): Promise<string | undefined> {
  const kind = key === 'celebrations.birthdays' ? 'birthday' : key === 'celebrations.anniversaries' ? 'anniversary' : undefined;
  if (value !== true || kind === undefined || !ctx.config.jobs.inAppCron) return undefined;
  const { timeZone } = ctx.config.regional;
  const lastRun = await ctx.db('job_runs')
    .where({ job: 'send-celebrations', trigger: 'scheduler' })
    .whereNotNull('finished_at')
    .orderBy('started_at', 'desc')
    .first<{ started_at: Date; summary: { kinds?: string[] } | null } | undefined>('started_at', 'summary');
  if (!lastRun || localDay(lastRun.started_at, timeZone) !== localDay(ctx.clock.now(), timeZone)) return undefined;
  if ((lastRun.summary?.kinds ?? []).includes(kind)) return undefined;
  return `today's celebrations run had ${kind} emails off and the in-app scheduler will not run it again today: run \`eventops send-celebrations\` to send today's now`;
}
