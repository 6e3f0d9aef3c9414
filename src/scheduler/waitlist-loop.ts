import type { AppContext } from '../context.js';
import { recordWaitlistFailure } from '../jobs/waitlist-failures.js';
import { runWaitlistPass } from '../registrations/waitlist/offers.js';

/** How often `serve` offers freed places to the waiting lists (sweep-checkouts does too, every 30 minutes). */
export const WAITLIST_PASS_MS = 30_000;

export interface WaitlistLoop {
  stop(): Promise<void>;
}

/**
 * Offers freed places and expires unclaimed offers every WAITLIST_PASS_MS, so a place freed by any path
 * is offered within a minute. Every server may run it: each event is settled under its own row lock.
 * An event that fails is recorded in the error log (for the digest) and does not hold up the others.
 */
export function startWaitlistLoop(ctx: AppContext, options: { intervalMs?: number } = {}): WaitlistLoop {
  const intervalMs = options.intervalMs ?? WAITLIST_PASS_MS;
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = async () => {
    try {
      const counts = await runWaitlistPass(ctx, { actor: 'waitlist offers', onEventFailure: recordWaitlistFailure(ctx, 'scheduler:waitlist') });
      if (counts.offered + counts.expired + (counts.lapsed ?? 0) > 0) ctx.logger.info(counts, 'waiting-list offers made and expired');
    } catch (error) {
      ctx.logger.error({ err: error }, 'the waiting-list pass failed; it runs again shortly');
    }
  };
  const timer = setInterval(() => {
    if (stopped || running) return;
    running = pass().finally(() => {
      running = undefined;
    });
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
