import type { AppContext } from '../context.js';
import { attemptsLeft, readPeriodStates } from './period-claims.js';
import { JOB_PERIOD_KIND, RETRY_DELAY_MS, SCHEDULED_JOBS, attemptSpan, jobAvailability, nextDueTimes, periodAt, type NextDue, type Period } from './periods.js';
import { createScheduler, type Scheduler, type SchedulerOptions } from './scheduler.js';

export { createScheduler, defaultRunJob, DEFAULT_TICK_MS } from './scheduler.js';
export type { RunJob, Scheduler, SchedulerOptions, TickResult, TickRun, TickRunOutcome } from './scheduler.js';
export { duePeriod, formatLocal, jobAvailability, nextDueTimes, periodAt } from './periods.js';
export type { NextDue, Period, PeriodKind } from './periods.js';

/** For `eventops serve`: creates and starts the scheduler, logging when each job is next due. */
export async function startInAppScheduler(ctx: AppContext, options: Omit<SchedulerOptions, 'ctx'> = {}): Promise<Scheduler> {
  const scheduler = createScheduler({ ctx, ...options });
  const next = await readNextDueTimes(ctx).catch(() => undefined);
  ctx.logger.info(
    { timeZone: ctx.config.regional.timeZone, next: next?.map((due) => (due.enabled ? `${due.job} ${due.dueNow ? 'due now' : due.local}` : `${due.job} off: ${due.reason}`)) },
    'in-app scheduler started',
  );
  scheduler.start();
  return scheduler;
}

/**
 * For `eventops status`: each job's next due time, taking the database into
 * account (a done or exhausted period moves on to the next; a failed attempt
 * waits 30 minutes). One query.
 */
export async function readNextDueTimes(ctx: AppContext): Promise<NextDue[]> {
  const now = ctx.clock.now();
  const periods = new Map(
    SCHEDULED_JOBS.filter((job) => jobAvailability(ctx.config, job).enabled).map((job) => {
      const period = periodAt(ctx.config, job, now);
      return [period.key, period] as const;
    }),
  );
  const done = new Set<string>();
  const retryAt = new Map<string, Date>();
  for (const state of await readPeriodStates(ctx.db, [...periods.keys()])) {
    // A slot is attempted once; any row means this slot is taken.
    const running = state.claimedUntil && state.claimedUntil >= now;
    const period = periods.get(state.key) as Period;
    const span = attemptSpan(ctx.config, period, now);
    const exhausted = !running && attemptsLeft(state.attempts, state.lastAttemptAt, span.startsAt) === 0;
    if (state.doneAt || JOB_PERIOD_KIND[state.job] === 'slot' || (exhausted && span.endsAt >= period.endsAt)) {
      done.add(state.key);
    } else if (exhausted) {
      // The digest out of attempts today: tomorrow, while its window lasts.
      retryAt.set(state.key, span.endsAt);
    } else if (state.lastAttemptAt) {
      const afterRetryDelay = state.lastAttemptAt.getTime() + RETRY_DELAY_MS;
      retryAt.set(state.key, new Date(Math.max(afterRetryDelay, running && state.claimedUntil ? state.claimedUntil.getTime() : 0)));
    }
  }
  return nextDueTimes(ctx.config, now, done, retryAt);
}
