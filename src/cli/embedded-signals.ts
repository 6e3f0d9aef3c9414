import type { Logger } from '../logger.js';

const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
type StopSignal = keyof typeof SIGNAL_NUMBERS;

export interface SignalGuard {
  /** The command stops gracefully on the next SIGINT or SIGTERM itself (serve) and closes its context; a signal after that one still stops the server here. */
  takeOver(): void;
  /**
   * The command no longer stops on a signal itself (its handler is gone, the run over): the next
   * SIGINT or SIGTERM stops the server here and exits, as before takeOver. Without this, a signal
   * while the context closes was taken as the command's and ignored.
   */
  giveBack(): void;
  remove(): void;
}

/**
 * While a command runs on an embedded PostgreSQL it started itself. Node's
 * default for these signals ends the process at once, and the server was left
 * running, holding `.eventops/pg` and its port, until someone found and killed
 * it. This stops the server first, then exits as the signal would have
 * (128 + its number).
 */
export function stopEmbeddedOnSignal(stop: () => Promise<void>, logger: Logger): SignalGuard {
  let takenOver = false;
  let stopping = false;
  const onSignal = (signal: StopSignal): void => {
    if (takenOver && signal !== 'SIGHUP') {
      takenOver = false;
      return;
    }
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping the embedded PostgreSQL this command started');
    void stop()
      .catch((error: unknown) => logger.error({ err: error }, 'could not stop the embedded PostgreSQL'))
      .finally(() => process.exit(128 + SIGNAL_NUMBERS[signal]));
  };
  const listeners = (Object.keys(SIGNAL_NUMBERS) as StopSignal[]).map((signal) => [signal, () => onSignal(signal)] as const);
  for (const [signal, listener] of listeners) process.on(signal, listener);
  return {
    takeOver() {
      takenOver = true;
    },
    giveBack() {
      takenOver = false;
    },
    remove() {
      for (const [signal, listener] of listeners) process.removeListener(signal, listener);
    },
  };
}
