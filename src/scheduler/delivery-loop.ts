import { deliverWebsiteSync } from '../office/website-sync.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { deliverQueuedMail } from '../mail/queue.js';
import { listenForOutbox, type OutboxListener } from './outbox-listener.js';

export interface DeliveryLoop {
  /** Runs a pass now, or right after the one under way. */
  wake(): void;
  /**
   * The loop hears every committed outbox insert (its LISTEN is in place): a caller that may have queued something
   * need not wake it. While it does not (no listener, or its connection lost), only wake() and the timer run passes.
   */
  listening(): boolean;
  /** One pass: queued mail (receipts, alerts) until none is due, then website notifications likewise. */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

/** Claimed per batch: one batch keeps the pooled SMTP transport's connections busy without holding many claims. */
export const MAIL_BATCH = 50;

/** Website notifications claimed per batch (they are posted one by one, in order). */
export const WEBSITE_BATCH = 20;

/**
 * While the server runs, queued mail and website notifications are delivered
 * as soon as the transaction that queued them commits: the outbox tables
 * notify `eventops_outbox`, which wakes every server's loop, and `wake()`
 * wakes this one directly. A timer every `intervalMs` retries what is waiting
 * out its backoff and covers a lost listening connection. Each row has its own
 * backoff in the database, so a mail or receiver outage delays but loses nothing.
 */
export function startDeliveryLoop(
  ctx: AppContext,
  options: {
    intervalMs?: number;
    listen?: boolean;
    /** Where to LISTEN when that is not ctx.db: a direct connection, when ctx.db goes through a pooler in transaction mode. */
    listenOn?: Db;
  } = {},
): DeliveryLoop {
  const intervalMs = options.intervalMs ?? 30_000;
  let stopped = false;
  let running: Promise<void> | undefined;
  let again = false;
  let timer: NodeJS.Timeout | undefined;

  const deliverMail = async () => {
    for (;;) {
      const mail = await deliverQueuedMail(ctx, { limit: MAIL_BATCH });
      const claimed = mail.sent + mail.retried + mail.failed;
      if (claimed > 0) ctx.logger.info({ mail }, 'queued mail delivered');
      if (claimed < MAIL_BATCH || stopped) return;
    }
  };

  /** Batch after batch while a whole batch went out, so a backlog after a website outage drains in one pass. */
  const deliverWebsite = async () => {
    // No website to notify: nothing to count on every pass (the status command counts what waits).
    if (!ctx.config.websiteSync) return;
    for (;;) {
      const sync = await deliverWebsiteSync(ctx, { limit: WEBSITE_BATCH });
      if (sync.enabled && sync.delivered + sync.failed > 0) ctx.logger.info({ delivered: sync.delivered, failed: sync.failed }, 'website sync');
      if (sync.delivered < WEBSITE_BATCH || sync.failed > 0 || stopped) return;
    }
  };

  const pass = async () => {
    try {
      await deliverMail();
    } catch (error) {
      ctx.logger.error({ err: error }, 'queued mail delivery failed');
    }
    try {
      await deliverWebsite();
    } catch (error) {
      ctx.logger.error({ err: error }, 'website sync delivery failed');
    }
  };

  const schedule = () => {
    if (timer) clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(() => wake(), intervalMs);
    timer.unref();
  };

  /** At most one pass at a time; a wake during a pass runs one more after it, so nothing queued meanwhile waits for the timer. */
  const wake = (): void => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        await pass();
      } while (again && !stopped);
    })().finally(() => {
      running = undefined;
      schedule();
    });
  };

  let listener: OutboxListener | undefined;
  if (options.listen ?? true) listener = listenForOutbox({ db: options.listenOn ?? ctx.db, logger: ctx.logger }, wake);
  wake();

  return {
    wake,
    listening: () => listener?.listening() ?? false,
    async runOnce() {
      while (running) await running;
      await pass();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await listener?.close();
      while (running) await running;
    },
  };
}
