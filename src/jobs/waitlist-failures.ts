import type { AppContext } from '../context.js';
import { recordError } from '../ops/error-log.js';
import type { EventFailure } from '../registrations/waitlist/offers.js';

/**
 * An event the waiting-list pass could not settle (its transaction rolled back; the other events were
 * settled): into the error log, which the weekly digest groups, and the log. It is tried again next pass.
 */
export function recordWaitlistFailure(ctx: Pick<AppContext, 'db' | 'clock' | 'logger'>, source: string): EventFailure {
  return async (error, eventId) => {
    ctx.logger.error({ err: error, eventId }, 'the waiting-list pass could not settle an event; the others were settled, and it is tried again next pass');
    await recordError(ctx.db, error, { source, now: ctx.clock.now(), context: { eventId } });
  };
}
