import type { AppContext } from '../context.js';
import { AppError, LeaseHeldError, errorMessage } from '../errors.js';
import { recordError } from '../ops/error-log.js';
import type { JobName, JobOptions, JobSummary } from './types.js';

export class JobFailedError extends AppError {
  constructor(
    readonly job: JobName,
    readonly errorId: number,
    cause: unknown,
  ) {
    // errorId 0: the error log could not be written, which mostly means the database itself is unreachable.
    const recorded = errorId > 0 ? `error id ${errorId}` : 'not recorded in the error log: is the database reachable?';
    super('job_failed', `${job} failed: ${errorMessage(cause)} (${recorded})`, { cause, exitCode: 1, httpStatus: 500 });
    this.name = 'JobFailedError';
  }
}

/**
 * Runs a job body with its run-history row: started, finished, outcome and
 * summary. Failures are written to the error log with a fingerprint. A dry run
 * writes nothing at all.
 */
export async function runRecordedJob<S extends JobSummary>(
  ctx: AppContext,
  job: JobName,
  options: JobOptions,
  body: () => Promise<Omit<S, 'runId'>>,
): Promise<S> {
  if (options.dryRun) return (await body()) as S;
  const [run] = await ctx.db('job_runs')
    .insert({ job, trigger: options.trigger, started_at: ctx.clock.now() })
    .returning<Array<{ id: number }>>('id');
  const runId = run?.id as number;
  try {
    const summary = { ...(await body()), runId } as S;
    await ctx.db('job_runs')
      .where({ id: runId })
      .update({ finished_at: ctx.clock.now(), outcome: summary.outcome, summary: JSON.stringify(summary) });
    return summary;
  } catch (error) {
    if (error instanceof LeaseHeldError) {
      await ctx.db('job_runs').where({ id: runId }).update({
        finished_at: ctx.clock.now(),
        outcome: 'skipped',
        summary: JSON.stringify({ reason: 'lease_held', heldSince: error.heldSince }),
      });
      throw error;
    }
    const errorId = await recordError(ctx.db, error, { source: `job:${job}`, now: ctx.clock.now(), context: { runId } }).catch(
      () => 0,
    );
    await ctx.db('job_runs')
      .where({ id: runId })
      .update({ finished_at: ctx.clock.now(), outcome: 'failed', error: errorMessage(error).slice(0, 2000) })
      .catch(() => undefined);
    ctx.logger.error({ job, runId, errorId, err: error }, `${job} failed`);
    throw new JobFailedError(job, errorId, error);
  }
}
