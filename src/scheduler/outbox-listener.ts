import type { AppContext } from '../context.js';

export interface OutboxListener {
  /** Its LISTEN is in place on a live connection: every committed outbox insert reaches onNotify. */
  listening(): boolean;
  close(): Promise<void>;
}

export const OUTBOX_CHANNEL = 'eventops_outbox';
const RECONNECT_MS = 5_000;

interface NotifyingConnection {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string }) => void): void;
  on(event: 'error' | 'end', listener: (error?: Error) => void): void;
  removeAllListeners(event: string): void;
}

/**
 * Holds one pooled connection that LISTENs on the outbox channel and calls
 * `onNotify` for every committed insert into an outbox table, from any server
 * on the same database. A lost connection is replaced after a pause; the
 * delivery loop's timer covers the gap.
 */
export function listenForOutbox(ctx: Pick<AppContext, 'db' | 'logger'>, onNotify: () => void): OutboxListener {
  let closed = false;
  let connection: NotifyingConnection | undefined;
  /** The connection whose LISTEN succeeded (cleared with it). */
  let heard: NotifyingConnection | undefined;
  let retry: NodeJS.Timeout | undefined;
  const client = ctx.db.client as { acquireConnection(): Promise<NotifyingConnection>; releaseConnection(c: NotifyingConnection): Promise<unknown> };

  const release = (lost: NotifyingConnection) => {
    lost.removeAllListeners('notification');
    lost.removeAllListeners('end');
    void client.releaseConnection(lost).catch(() => undefined);
  };

  const connect = async () => {
    retry = undefined;
    if (closed) return;
    let attempt: NotifyingConnection | undefined;
    try {
      const acquired = (attempt = await client.acquireConnection());
      if (closed) return void client.releaseConnection(acquired);
      acquired.on('notification', (message) => {
        if (message.channel === OUTBOX_CHANNEL) onNotify();
      });
      const lost = (error?: Error) => {
        if (connection !== acquired) return;
        connection = undefined;
        release(acquired);
        if (closed) return;
        ctx.logger.warn({ err: error }, 'outbox listener lost its connection; reconnecting');
        retry = setTimeout(() => void connect(), RECONNECT_MS);
        retry.unref();
      };
      acquired.on('error', lost);
      acquired.on('end', lost);
      // Ours from before LISTEN, so a loss or close() while it is in flight gives it back
      // (close() queues its UNLISTEN behind it): each pool slot is released exactly once.
      connection = acquired;
      await acquired.query(`LISTEN ${OUTBOX_CHANNEL}`);
      if (connection !== acquired) return;
      heard = acquired;
      // Anything queued while we were not listening
      onNotify();
    } catch (error) {
      // Already given back (and a retry scheduled) by `lost` or close()
      if (attempt && connection !== attempt) return;
      connection = undefined;
      if (attempt) release(attempt);
      if (closed) return;
      ctx.logger.warn({ err: error }, 'outbox listener could not connect; retrying');
      retry = setTimeout(() => void connect(), RECONNECT_MS);
      retry.unref();
    }
  };
  void connect();

  return {
    listening: () => heard !== undefined && heard === connection,
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const held = connection;
      connection = undefined;
      if (!held) return;
      await held.query(`UNLISTEN ${OUTBOX_CHANNEL}`).catch(() => undefined);
      release(held);
    },
  };
}
