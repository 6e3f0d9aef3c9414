import type { AppContext } from '../context.js';
import { ClockOffsetError, clockOffsetProblem, measureClockOffset } from '../db/clock-offset.js';
import { recordError } from './error-log.js';

/**
 * A server out of step with the database's clock is logged and written to the error log (the error
 * digest mails it to the administrator); it still serves. Returns the offset measured, if any.
 */
export async function reportClockOffset(ctx: Pick<AppContext, 'db' | 'clock' | 'logger'>): Promise<number | undefined> {
  let offsetMs: number;
  try {
    offsetMs = await measureClockOffset(ctx.db, ctx.clock);
  } catch (error) {
    ctx.logger.warn({ err: error }, "could not compare this server's clock with the database's");
    return undefined;
  }
  const problem = clockOffsetProblem(offsetMs);
  if (problem) {
    ctx.logger.error({ clockOffsetMs: offsetMs }, problem);
    await recordError(ctx.db, new ClockOffsetError(problem), { source: 'serve:clock', now: ctx.clock.now(), context: { clockOffsetMs: offsetMs } }).catch(
      (error: unknown) => ctx.logger.warn({ err: error }, 'could not record the clock offset in the error log'),
    );
  }
  return offsetMs;
}
