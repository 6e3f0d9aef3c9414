import type { AppContext } from '../context.js';
import { errorMessage } from '../errors.js';
import { recordError } from '../ops/error-log.js';

/** How many ids of one failure its error-log row names. */
const IDS_PER_FAILURE = 20;

/**
 * A job's failed sends grouped by what went wrong, so the error log gets one row per
 * distinct failure (how many sends it hit, the first ids), never one per recipient.
 */
export class SendFailures {
  private readonly groups = new Map<string, { error: unknown; ids: string[]; count: number }>();

  add(error: unknown, id: string): void {
    const key = errorMessage(error);
    const group = this.groups.get(key) ?? { error, ids: [], count: 0 };
    group.count++;
    if (group.ids.length < IDS_PER_FAILURE) group.ids.push(id);
    this.groups.set(key, group);
  }

  /** Writes the rows; a row that cannot be written is logged, never thrown. */
  async record(ctx: AppContext, run: { source: string; what: string; context: Record<string, unknown>; idsAs: string }): Promise<void> {
    for (const group of this.groups.values()) {
      await recordError(ctx.db, group.error, {
        source: run.source,
        now: ctx.clock.now(),
        context: { ...run.context, failedSends: group.count, [run.idsAs]: group.ids },
      }).catch((error: unknown) => ctx.logger.error({ err: errorMessage(error) }, `could not record a ${run.what} failure`));
    }
  }
}
