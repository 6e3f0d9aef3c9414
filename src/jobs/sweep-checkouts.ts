import type { AppContext } from '../context.js';
import { runRecordedJob } from './run-recorded.js';
import type { JobOptions, JobSummary } from './types.js';
import { previewUnpaidHolds, settleUnpaidHolds, type UnpaidHoldCounts } from './unpaid-holds.js';

export interface SweepSummary extends JobSummary, UnpaidHoldCounts {
  job: 'sweep-checkouts';
  expired: number;
}

/**
 * One set-based UPDATE: OPEN checkout sessions past their expiry become EXPIRED
 * and their encrypted staged payload is scrubbed. Then, separately, unpaid
 * bank-transfer holds past their event's unpaidHoldDays are released (and
 * reminded a day before): see unpaid-holds.ts. Repeatable; no lease needed.
 */
export async function sweepExpiredCheckouts(ctx: AppContext, options: JobOptions): Promise<SweepSummary> {
  return runRecordedJob<SweepSummary>(ctx, 'sweep-checkouts', options, async () => {
    const now = ctx.clock.now();
    if (options.dryRun) {
      const due = await ctx.db('checkout_sessions')
        .where('status', 'OPEN')
        .andWhere('expires_at', '<=', now)
        .orderBy('expires_at')
        .select<Array<{ id: string; expires_at: Date }>>('id', 'expires_at');
      const holds = await previewUnpaidHolds(ctx, now);
      return {
        job: 'sweep-checkouts',
        outcome: 'ok',
        dryRun: true,
        expired: due.length,
        holdsReleased: holds.filter((line) => line.startsWith('release')).length,
        holdReminders: holds.filter((line) => line.startsWith('remind')).length,
        wouldDo: [...due.map((row) => `expire checkout ${row.id} (expired ${row.expires_at.toISOString()}) and scrub its payload`), ...holds],
      };
    }
    const expired = await ctx.db('checkout_sessions')
      .where('status', 'OPEN')
      .andWhere('expires_at', '<=', now)
      .update({ status: 'EXPIRED', payload_enc: null, updated_at: now });
    options.onProgress?.({ expired });
    const holds = await settleUnpaidHolds(ctx, now);
    return { job: 'sweep-checkouts', outcome: 'ok', dryRun: false, expired, ...holds };
  });
}
