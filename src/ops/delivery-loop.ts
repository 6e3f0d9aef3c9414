import { deliverWebsiteSync } from '../admin/website-sync.js';
import type { AppContext } from '../context.js';
import { deliverQueuedMail } from '../mail/queue.js';

export interface DeliveryLoop {
  /** One pass: queued mail (receipts, alerts), then website notifications. */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * While the server runs, queued mail and website notifications are delivered
 * every `intervalMs` (each with its own retry backoff in the database), so a
 * mail or receiver outage delays them but loses nothing.
 */
export function startDeliveryLoop(ctx: AppContext, intervalMs = 30_000): DeliveryLoop {
  let stopped = false;
  let current: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  const runOnce = async () => {
    try {
      const mail = await deliverQueuedMail(ctx, { limit: 20 });
      if (mail.sent + mail.retried + mail.failed > 0) ctx.logger.info({ mail }, 'queued mail delivered');
    } catch (error) {
      ctx.logger.error({ err: error }, 'queued mail delivery failed');
    }
    try {
      const sync = await deliverWebsiteSync(ctx, { limit: 20 });
      if (sync.enabled && sync.delivered + sync.failed > 0) ctx.logger.info({ delivered: sync.delivered, failed: sync.failed }, 'website sync');
    } catch (error) {
      ctx.logger.error({ err: error }, 'website sync delivery failed');
    }
  };

  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      current = runOnce().finally(schedule);
    }, intervalMs);
    timer.unref();
  };
  current = runOnce().finally(schedule);

  return {
    runOnce: () => {
      current = current.then(runOnce);
      return current;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await current;
    },
  };
}
