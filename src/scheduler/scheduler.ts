import type { AppContext } from '../context.js';
import { LeaseHeldError } from '../errors.js';
import { loadJobFunction } from '../jobs/registry.js';
import type { JobName, JobOutcome, JobSummary } from '../jobs/types.js';
import { claimPeriod, claimSlots, extendPeriodClaim, markPeriodDone, pruneSlots, releasePeriod } from './period-claims.js';
import { DIGEST_ATTEMPTS_PER_DAY, JOB_PERIOD_KIND, MAX_ATTEMPTS_PER_PERIOD, SCHEDULED_JOBS, attemptSpan, jobAvailability, localDate, periodAt, type Period } from './periods.js';

export const DEFAULT_TICK_MS = 5 * 60_000;
/** How long an attempt's claim lasts without renewal; a running attempt renews it every third of this. */
export const DEFAULT_CLAIM_TTL_MS = 30 * 60_000;
/** Slot rows of the 30-minute jobs (and hourly rows) are kept this long, then deleted. */
const SLOT_ROWS_KEPT_MS = 2 * 24 * 3600_000;

/** `stopping` is aborted by stop(): a job that listens (send-reminders) leaves the rest of its work for the next run. */
export type RunJob = (name: JobName, stopping: AbortSignal) => Promise<JobSummary>;

export interface SchedulerOptions {
  ctx: AppContext;
  /** Runs one job; default: the job function from the registry with trigger `scheduler`. */
  runJob?: RunJob;
  tickMs?: number;
  claimTtlMs?: number;
}

/** `lease-held`: another run (cron, CLI) held the job's lease; `error`: the job threw. */
export type TickRunOutcome = JobOutcome | 'lease-held' | 'error';

export interface TickRun {
  job: JobName;
  periodKey: string;
  attempt: number;
  outcome: TickRunOutcome;
  /** The period was marked done and will not run again. */
  done: boolean;
}

export interface TickResult {
  at: Date;
  runs: TickRun[];
  /** Set when the tick did nothing because another tick of this scheduler was still running, or it was stopped. */
  skipped?: 'tick-in-progress' | 'stopped';
}

export interface Scheduler {
  /** Ticks at once, then every tickMs after the previous tick finished. The timer never keeps the process alive. */
  start(): void;
  /**
   * Stops the timer and waits for a running job to finish; starts no new job. A running send-reminders
   * is asked to stop after the sends on the wire, so a server stopping mid-event leaves it promptly.
   */
  stop(): Promise<void>;
  tick(): Promise<TickResult>;
}

export function defaultRunJob(ctx: AppContext): RunJob {
  return async (name, stopping) => {
    const availability = jobAvailability(ctx.config, name);
    const purgeOnly = availability.enabled && availability.purgeOnly !== undefined;
    return (await loadJobFunction(name))(ctx, { trigger: 'scheduler', signal: stopping, ...(purgeOnly ? { purgeOnly } : {}) });
  };
}

/**
 * The in-app scheduler. Each tick runs every job that is due (see periods.ts)
 * and whose period it can claim in the database, one at a time. What is done is
 * in scheduler_periods; this process only remembers, as shortcuts, periods it
 * knows are settled or waiting, and the clearance digest's attempts today
 * (at most three per local day per process; a restart resets the count). The
 * database counts the digest's attempts per local day as well, so a digest
 * that keeps failing is tried again on each later day of its window.
 *
 * A LeaseHeldError (another run of the job, e.g. from cron, is in progress)
 * gives the period's attempt back and waits 30 minutes: the other run is doing
 * the work, and the next attempt usually finds it done (the digest answers
 * already-sent). It still counts towards the digest's attempts per day.
 */
export function createScheduler(options: SchedulerOptions): Scheduler {
  const { ctx } = options;
  const runJob = options.runJob ?? defaultRunJob(ctx);
  const tickMs = options.tickMs ?? DEFAULT_TICK_MS;
  const claimTtlMs = options.claimTtlMs ?? DEFAULT_CLAIM_TTL_MS;
  const timeZone = ctx.config.regional.timeZone;
  const enabledJobs = SCHEDULED_JOBS.filter((job) => jobAvailability(ctx.config, job).enabled);
  const slotJobs = enabledJobs.filter((job) => JOB_PERIOD_KIND[job] === 'slot');
  const periodJobs = enabledJobs.filter((job) => JOB_PERIOD_KIND[job] !== 'slot');
  /** Period jobs that SCHEDULED_JOBS puts before the 30-minute ones (reconcile), and the rest. */
  const firstSlotIndex = SCHEDULED_JOBS.findIndex((job) => JOB_PERIOD_KIND[job] === 'slot');
  const periodJobsBeforeSlots = periodJobs.filter((job) => SCHEDULED_JOBS.indexOf(job) < firstSlotIndex);
  const periodJobsAfterSlots = periodJobs.filter((job) => !periodJobsBeforeSlots.includes(job));
  /** Rows of these are pruned after two days, like the slots': one a slot or an hour adds up. */
  const prunedJobs = enabledJobs.filter((job) => JOB_PERIOD_KIND[job] === 'slot' || JOB_PERIOD_KIND[job] === 'hour');

  /** Period keys this process knows will not run again, with when they stop mattering. */
  const settled = new Map<string, number>();
  /** Period keys whose next attempt is not before this instant (ms). */
  const notBefore = new Map<string, number>();
  /** The last period computed per job, reused while the clock stays inside it. */
  const periods = new Map<JobName, Period>();
  const digestAttempts = { day: '', count: 0 };
  let slotsPrunedOn = '';

  let current: Promise<TickResult> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let started = false;
  const stopping = new AbortController();

  function currentDuePeriod(job: JobName, now: Date): Period | undefined {
    let period = periods.get(job);
    if (!period || now < period.startsAt || now >= period.endsAt) {
      period = periodAt(ctx.config, job, now);
      periods.set(job, period);
    }
    return now >= period.opensAt && now < period.closesAt ? period : undefined;
  }

  function forgetOld(now: number): void {
    for (const [key, until] of settled) if (until <= now) settled.delete(key);
    for (const [key, until] of notBefore) if (until <= now) notBefore.delete(key);
  }

  /** Renews a period claim while its attempt runs; slot claims last to the end of the slot and need none. */
  function keepClaimAlive(period: Period, attempt: number, claimedAt: Date): () => void {
    if (period.kind === 'slot') return () => undefined;
    const heartbeat = setInterval(() => {
      extendPeriodClaim(ctx.db, { key: period.key, attempt, claimedAt, until: new Date(ctx.clock.now().getTime() + claimTtlMs) }).catch((error: unknown) =>
        ctx.logger.warn({ err: error, periodKey: period.key }, 'scheduler could not renew its period claim'),
      );
    }, Math.max(1000, Math.floor(claimTtlMs / 3)));
    heartbeat.unref();
    return () => clearInterval(heartbeat);
  }

  /** For the log of a run that did not fully succeed: what the scheduler will really do about it. */
  function whatHappensNext(job: JobName, period: Period, attempt: number): string {
    // Spec rule 2: the event is marked sent once any reminder went out; only an event none of whose sends succeeded is released.
    if (job === 'send-reminders') return 'a recipient whose send failed is not retried; an event none of whose reminders went out is tried again in the next slot';
    if (period.kind === 'slot') return 'the next slot runs it again';
    const attemptsLeftToday = job !== 'send-clearance-digest' || digestAttempts.count < DIGEST_ATTEMPTS_PER_DAY;
    if (attempt < MAX_ATTEMPTS_PER_PERIOD && attemptsLeftToday) return 'it is tried again 30 minutes later';
    return job === 'send-clearance-digest' ? 'no attempts left today; it is tried again tomorrow while its window lasts' : 'no attempts left in this period';
  }

  /** `claimedAt`: the instant the attempt claimed its period, which with `attempt` identifies its claim. */
  async function runOnce(job: JobName, period: Period, attempt: number, claimedAt: Date): Promise<TickRun> {
    const stopHeartbeat = keepClaimAlive(period, attempt, claimedAt);
    let outcome: TickRunOutcome;
    let done = false;
    try {
      ctx.logger.info({ job, periodKey: period.key, attempt }, 'scheduler running job');
      const summary = await runJob(job, stopping.signal);
      outcome = summary.outcome;
      done = isFullSuccess(summary);
      if (!done) ctx.logger.warn({ job, periodKey: period.key, attempt, outcome }, `scheduled job did not fully succeed; ${whatHappensNext(job, period, attempt)}`);
    } catch (error) {
      outcome = error instanceof LeaseHeldError ? 'lease-held' : 'error';
      if (outcome === 'lease-held') ctx.logger.info({ job, periodKey: period.key }, 'another run holds the job lease; trying again later');
      else ctx.logger.error({ err: error, job, periodKey: period.key, attempt }, 'scheduled job failed');
    } finally {
      stopHeartbeat();
    }
    if (period.kind !== 'slot') {
      if (done) {
        await markPeriodDone(ctx.db, { key: period.key, now: ctx.clock.now() });
        settled.set(period.key, period.endsAt.getTime());
      } else {
        await releasePeriod(ctx.db, { key: period.key, attempt, claimedAt, refundAttempt: outcome === 'lease-held' });
      }
    }
    return { job, periodKey: period.key, attempt, outcome, done };
  }

  /** The 30-minute jobs: one claim statement for this slot, then each job this process won, in turn. */
  async function runDueSlots(runs: TickRun[]): Promise<void> {
    const now = ctx.clock.now();
    const due = slotJobs.flatMap((job) => {
      const period = currentDuePeriod(job, now);
      return period && !settled.has(period.key) ? [period] : [];
    });
    const first = due[0];
    if (!first) return;
    const today = localDate(now, timeZone);
    if (slotsPrunedOn !== today) {
      await pruneSlots(ctx.db, { jobs: prunedJobs, before: new Date(now.getTime() - SLOT_ROWS_KEPT_MS) });
      slotsPrunedOn = today;
    }
    const won = await claimSlots(ctx.db, { slots: due, now, slotEnd: first.closesAt });
    for (const period of due) settled.set(period.key, period.endsAt.getTime());
    for (const period of due) {
      if (stopped) return;
      if (won.has(period.key)) runs.push(await runOnce(period.job, period, 1, now));
    }
  }

  /** A day, week or month job: claims its period and runs it; undefined when not due or not claimable now. */
  async function runPeriodIfClaimable(job: JobName): Promise<TickRun | undefined> {
    const now = ctx.clock.now();
    const period = currentDuePeriod(job, now);
    if (!period || settled.has(period.key) || (notBefore.get(period.key) ?? 0) > now.getTime()) return undefined;

    if (job === 'send-clearance-digest') {
      const today = localDate(now, timeZone);
      if (digestAttempts.day !== today) Object.assign(digestAttempts, { day: today, count: 0 });
      if (digestAttempts.count >= DIGEST_ATTEMPTS_PER_DAY) return undefined;
    }

    const span = attemptSpan(ctx.config, period, now);
    const claim = await claimPeriod(ctx.db, { key: period.key, job, now, claimTtlMs, attemptsFrom: span.startsAt });
    if (!claim.claimed) {
      if (claim.reason === 'done') settled.set(period.key, period.endsAt.getTime());
      // Out of attempts until its span ends: the period for most jobs, the local day for the digest.
      if (claim.reason === 'exhausted') settled.set(period.key, span.endsAt.getTime());
      if (claim.reason === 'waiting') notBefore.set(period.key, claim.retryAt.getTime());
      return undefined;
    }
    if (job === 'send-clearance-digest') digestAttempts.count++;
    return runOnce(job, period, claim.attempt, now);
  }

  async function runPeriodJobs(jobs: readonly JobName[], runs: TickRun[]): Promise<void> {
    for (const job of jobs) {
      if (stopped) return;
      try {
        const run = await runPeriodIfClaimable(job);
        if (run) runs.push(run);
      } catch (error) {
        ctx.logger.error({ err: error, job }, 'scheduler could not check or record a job period');
      }
    }
  }

  /** The jobs in the order of SCHEDULED_JOBS: reconcile, then the 30-minute jobs, then the daily, weekly and monthly ones. */
  async function runTick(): Promise<TickResult> {
    const at = ctx.clock.now();
    forgetOld(at.getTime());
    const runs: TickRun[] = [];
    await runPeriodJobs(periodJobsBeforeSlots, runs);
    if (!stopped) {
      try {
        await runDueSlots(runs);
      } catch (error) {
        ctx.logger.error({ err: error }, 'scheduler could not claim or run the 30-minute jobs');
      }
    }
    await runPeriodJobs(periodJobsAfterSlots, runs);
    return { at, runs };
  }

  async function tick(): Promise<TickResult> {
    if (stopped) return { at: ctx.clock.now(), runs: [], skipped: 'stopped' };
    if (current) return { at: ctx.clock.now(), runs: [], skipped: 'tick-in-progress' };
    current = runTick();
    try {
      return await current;
    } finally {
      current = undefined;
    }
  }

  function schedule(delayMs: number): void {
    timer = setTimeout(() => {
      void tick()
        .catch((error: unknown) => ctx.logger.error({ err: error }, 'scheduler tick failed'))
        .finally(() => {
          if (!stopped) schedule(tickMs);
        });
    }, delayMs);
    timer.unref();
  }

  return {
    start() {
      if (started || stopped) return;
      started = true;
      schedule(0);
    },
    async stop() {
      stopped = true;
      stopping.abort();
      if (timer) clearTimeout(timer);
      await current?.catch(() => undefined);
    },
    tick,
  };
}

/** ok and skipped are done; so is the digest's already-sent. partial and failed are retried. */
function isFullSuccess(summary: JobSummary): boolean {
  const status = (summary as JobSummary & { status?: unknown }).status;
  if (status === 'already-sent') return true;
  if (status === 'partial') return false;
  return summary.outcome === 'ok' || summary.outcome === 'skipped';
}
