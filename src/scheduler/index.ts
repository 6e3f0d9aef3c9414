import type { AppContext } from '../context.js';
import { readPeriodStates } from './period-claims.js';
import { JOB_PERIOD_KIND, MAX_ATTEMPTS_PER_PERIOD, RETRY_DELAY_MS, SCHEDULED_JOBS, jobAvailability, nextDueTimes, periodAt, type NextDue } from './periods.js';
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
    { timeZone: ctx.config.regional.timeZone, next: next?.map((due) => (due.enabled ? `${due.job} ${due.local}` : `${due.job} off: ${due.reason}`)) },
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
  const keys = SCHEDULED_JOBS.filter((job) => jobAvailability(ctx.config, job).enabled).map((job) => periodAt(ctx.config, job, now).key);
  const done = new Set<string>();
  const retryAt = new Map<string, Date>();
  for (const state of await readPeriodStates(ctx.db, keys)) {
    // A slot is attempted once; any row means this slot is taken.
    const running = state.claimedUntil && state.claimedUntil >= now;
    if (state.doneAt || (state.attempts >= MAX_ATTEMPTS_PER_PERIOD && !running) || JOB_PERIOD_KIND[state.job] === 'slot') {
      done.add(state.key);
    } else if (state.lastAttemptAt) {
      const afterRetryDelay = state.lastAttemptAt.getTime() + RETRY_DELAY_MS;
      retryAt.set(state.key, new Date(Math.max(afterRetryDelay, running && state.claimedUntil ? state.claimedUntil.getTime() : 0)));
    }
  }
  return nextDueTimes(ctx.config, now, done, retryAt);
}
