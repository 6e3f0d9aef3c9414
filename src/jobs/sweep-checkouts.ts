import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { confirmCheckoutsWithProvider } from '../payments/reconcile/confirm.js';
import { PAYLOAD_KEPT_AFTER_EXPIRY_MS } from '../payments/staging.js';
import { runRecordedJob } from './run-recorded.js';
import type { JobOptions, JobSummary } from './types.js';
import { forgetClientKeys } from '../payments/unpaid-seat-cap.js';
import { previewUnpaidHolds, settleUnpaidHolds, type UnpaidHoldCounts } from './unpaid-holds.js';
import { previewWaitlistPass, runWaitlistPass } from '../registrations/waitlist/offers.js';
import { recordWaitlistFailure } from './waitlist-failures.js';

export interface SweepSummary extends JobSummary, UnpaidHoldCounts {
  job: 'sweep-checkouts';
  expired: number;
  scrubbed: number;
  /** Expired checkouts the card provider confirmed this sweep: unpaid (scrubbed at once) or paid (completed now). */
  confirmed: number;
  /** Expired checkouts still awaiting the provider's word (beyond this sweep's bound, not settled there, or the provider out of reach). */
  awaitingProvider: number;
  /** Waiting-list offers made, unclaimed offers expired (their places passed on), and joins lapsed unconfirmed. */
  waitlistOffered?: number;
  waitlistExpired?: number;
  waitlistLapsed?: number;
}

/** At most this many expired checkouts are asked about per sweep; the rest wait for the next one. */
export const PROVIDER_CONFIRMS_PER_SWEEP = 100;

/**
 * Two set-based statements, each repeatable, no lease needed: OPEN checkout
 * sessions past their expiry become EXPIRED (their payload is kept, so a
 * completion the provider delivers late is still honoured); EXPIRED sessions
 * whose payload has been kept for the provider's redelivery window are scrubbed.
 * Between the two, when card payments are configured, each expired checkout still
 * kept (up to PROVIDER_CONFIRMS_PER_SWEEP, oldest first) is confirmed with the
 * provider (reconcile/confirm.ts): unpaid ones are recorded so and scrubbed at once,
 * paid ones completed now; with the provider out of reach nothing changes, and the
 * next sweep, reconcile and the 72-hour scrub remain.
 * Then, separately, unpaid bank-transfer holds past their event's
 * unpaidHoldDays are released (and reminded a day before): see unpaid-holds.ts.
 * Last, registrations no longer holding places unpaid forget the client they
 * came from (forgetClientKeys).
 * Last, the waiting lists: unclaimed offers expire and freed places are offered (waitlist/offers.ts).
 */
export async function sweepExpiredCheckouts(ctx: AppContext, options: JobOptions): Promise<SweepSummary> {
  return runRecordedJob<SweepSummary>(ctx, 'sweep-checkouts', options, async () => {
    const now = ctx.clock.now();
    const scrubBefore = new Date(now.getTime() - PAYLOAD_KEPT_AFTER_EXPIRY_MS);
    if (options.dryRun) {
      const due = await overdueCheckouts(ctx.db, now).select<Array<{ id: string; expires_at: Date; provider_session_id: string | null }>>('id', 'expires_at', 'provider_session_id');
      const stale = await keptPastWindow(ctx.db, scrubBefore).select<Array<{ id: string; expires_at: Date }>>('id', 'expires_at');
      const toConfirm = ctx.config.payments ? await awaitingProviderWord(ctx.db, now).select<Array<{ id: string }>>('id') : [];
      const holds = await previewUnpaidHolds(ctx, now);
      const { localMinute } = await import('../local-time.js');
      const local = (date: Date) => `${localMinute(date, ctx.config.regional.timeZone)} ${ctx.config.regional.timeZone}`;
      const waitlist = await previewWaitlistPass(ctx, now, local);
      return {
        job: 'sweep-checkouts',
        outcome: 'ok',
        dryRun: true,
        expired: due.length,
        scrubbed: stale.length,
        confirmed: 0,
        awaitingProvider: toConfirm.length,
        holdsReleased: holds.filter((line) => line.startsWith('release')).length,
        holdReminders: holds.filter((line) => line.startsWith('remind')).length,
        waitlistOffered: waitlist.offered,
        waitlistExpired: waitlist.expired,
        waitlistLapsed: waitlist.lapsed,
        wouldDo: [
          ...due.map((row) =>
            row.provider_session_id
              ? `expire checkout ${row.id} (expired ${local(row.expires_at)}), keeping its payload for late payment`
              : `expire checkout ${row.id} (expired ${local(row.expires_at)}) as unpaid: its payment page was never opened`,
          ),
          ...(toConfirm.length > 0
            ? [`ask the card provider about ${Math.min(toConfirm.length, PROVIDER_CONFIRMS_PER_SWEEP)} expired checkout(s) (of ${toConfirm.length} awaiting its word)`]
            : []),
          ...stale.map((row) => `scrub the payload of checkout ${row.id} (expired ${local(row.expires_at)})`),
          ...holds,
          // The holds' releases above come first in a real run, so it may offer more places than these.
          ...waitlist.lines,
        ],
      };
    }
    const overdue = await expireOverdueCheckouts(ctx.db, now, scrubBefore);
    const expired = overdue.expired;
    const confirmed = await confirmExpiredWithProvider(ctx, now);
    const scrubbed = overdue.scrubbed + (await scrubExpiredPayloads(ctx.db, now, scrubBefore));
    options.onProgress?.({ expired, scrubbed, confirmed: confirmed.confirmed });
    const holds = await settleUnpaidHolds(ctx, now);
    // After the releases, so the holds just cancelled forget their client too.
    await forgetClientKeys(ctx.db, now);
    // After the holds: places they released go to the waiting lists in this same run.
    const waitlist = await runWaitlistPass(ctx, { actor: 'sweep-checkouts', onEventFailure: recordWaitlistFailure(ctx, 'job:sweep-checkouts') });
    return {
      job: 'sweep-checkouts',
      outcome: 'ok',
      dryRun: false,
      expired,
      scrubbed,
      ...confirmed,
      ...holds,
      waitlistOffered: waitlist.offered,
      waitlistExpired: waitlist.expired,
      waitlistLapsed: waitlist.lapsed ?? 0,
    };
  });
}

const overdueCheckouts = (db: Knex, now: Date) =>
  db('checkout_sessions').where('status', 'OPEN').andWhere('expires_at', '<=', now).orderBy('expires_at');

/** EXPIRED with the payload kept and a provider session: a payment may still be confirmed, until the provider says. */
const awaitingProviderWord = (db: Knex, now: Date) =>
  db('checkout_sessions')
    .where('status', 'EXPIRED')
    .whereNull('scrubbed_at')
    .whereNull('unpaid_confirmed_at')
    .whereNotNull('provider_session_id')
    .andWhere('expires_at', '<=', now)
    .orderBy([{ column: 'expires_at' }, { column: 'id' }]);

async function confirmExpiredWithProvider(ctx: AppContext, now: Date): Promise<Pick<SweepSummary, 'confirmed' | 'awaitingProvider'>> {
  if (!ctx.config.payments) return { confirmed: 0, awaitingProvider: 0 };
  const ids = await awaitingProviderWord(ctx.db, now).limit(PROVIDER_CONFIRMS_PER_SWEEP).pluck<string[]>('id');
  const report = await confirmCheckoutsWithProvider(ctx, ids);
  const left = await awaitingProviderWord(ctx.db, now).clearOrder().count<{ n: number }>({ n: '*' }).first();
  return { confirmed: report.unpaid + report.completed, awaitingProvider: Number(left?.n ?? 0) };
}

const keptPastWindow = (db: Knex, scrubBefore: Date) =>
  db('checkout_sessions').where('status', 'EXPIRED').whereNull('scrubbed_at').andWhere('expires_at', '<=', scrubBefore).orderBy('expires_at');

/**
 * OPEN past expiry → EXPIRED, payload kept: the provider may still confirm a
 * payment made just before expiry. A row that expired before `scrubBefore`
 * (a sweep that did not run for days) is past that window already, so it is
 * scrubbed in the same pass instead of being written twice. A row that never
 * got its provider session (its request died while the provider opened it)
 * never handed a payment page out: scrubbed and recorded as unpaid at once.
 */
export async function expireOverdueCheckouts(db: Knex, now: Date, scrubBefore: Date): Promise<{ expired: number; scrubbed: number }> {
  const result = await db.raw<{ rows: Array<{ expired: number; scrubbed: number }> }>(
    `WITH expired AS (
       UPDATE checkout_sessions
          SET status = 'EXPIRED', updated_at = :now,
              payload_enc = CASE WHEN expires_at <= :scrubBefore OR provider_session_id IS NULL THEN NULL ELSE payload_enc END,
              scrubbed_at = CASE WHEN expires_at <= :scrubBefore OR provider_session_id IS NULL THEN :now ELSE scrubbed_at END,
              unpaid_confirmed_at = CASE WHEN provider_session_id IS NULL THEN :now ELSE unpaid_confirmed_at END
        WHERE status = 'OPEN' AND expires_at <= :now
        RETURNING expires_at <= :scrubBefore OR provider_session_id IS NULL AS scrubbed
     )
     SELECT count(*)::int AS expired, (count(*) FILTER (WHERE scrubbed))::int AS scrubbed FROM expired`,
    { now, scrubBefore },
  );
  return result.rows[0] ?? { expired: 0, scrubbed: 0 };
}

/** EXPIRED and kept since before `scrubBefore` → payload scrubbed: a completion after this ends UNFULFILLED with an alert. */
export async function scrubExpiredPayloads(db: Knex, now: Date, scrubBefore: Date): Promise<number> {
  return db('checkout_sessions')
    .where('status', 'EXPIRED')
    .whereNull('scrubbed_at')
    .andWhere('expires_at', '<=', scrubBefore)
    .update({ payload_enc: null, scrubbed_at: now, updated_at: now });
}
