import type { AppContext } from '../../context.js';
import { createProviderClient, providerErrorDetails } from '../provider.js';
import { selectOurRows, type OurRow } from './ours.js';
import { reconcileOne, retrieveSession } from './run.js';

/**
 * The provider's word on checkouts whose payment is uncertain here (past their expiry, payload kept):
 * each session is read and, as reconcile would, expired at the provider when it is still open, recorded
 * as confirmed unpaid (payload scrubbed at once) when it ended unpaid, or completed through the webhook's
 * own code (under reconcile's synthetic event id) when it was paid. Used by the sweep and by pay-now, so
 * an abandoned card attempt never holds pay-now for the 72 hours the payload is otherwise kept.
 */

export type ProviderConfirmation =
  /** Confirmed unpaid: EXPIRED, scrubbed, unpaid_confirmed_at set. */
  | 'unpaid'
  /** Paid at the provider: the completion has been applied (COMPLETED, or UNFULFILLED with its alert). */
  | 'completed'
  /** Still settling at the provider, not there, or the repair failed: left as it was. */
  | 'pending';

export interface ConfirmReport {
  /** Checkouts whose session was read. */
  asked: number;
  unpaid: number;
  completed: number;
  /** The provider could not be reached: the rest were not asked (the next sweep, or reconcile, asks again). */
  unreachable: boolean;
}

export async function confirmCheckoutsWithProvider(ctx: AppContext, checkoutIds: readonly string[]): Promise<ConfirmReport> {
  const report: ConfirmReport = { asked: 0, unpaid: 0, completed: 0, unreachable: false };
  if (checkoutIds.length === 0 || !ctx.config.payments) return { ...report, unreachable: !ctx.config.payments && checkoutIds.length > 0 };
  const provider = await createProviderClient(ctx.config);
  for (const row of await ourRowsOf(ctx, checkoutIds)) {
    if (!row.provider_session_id) continue;
    let session;
    try {
      session = await retrieveSession(provider, row.provider_session_id);
    } catch (error) {
      ctx.logger.warn({ checkoutId: row.id, provider: providerErrorDetails(error) }, 'could not ask the card provider about an expired checkout; asked again later');
      report.unreachable = true;
      break;
    }
    report.asked += 1;
    await reconcileOne(ctx, provider, session, row, true);
    const outcome = await confirmationOf(ctx, row.id);
    if (outcome === 'unpaid') report.unpaid += 1;
    if (outcome === 'completed') report.completed += 1;
  }
  return report;
}

async function ourRowsOf(ctx: AppContext, checkoutIds: readonly string[]): Promise<OurRow[]> {
  const rows = await selectOurRows(ctx, ctx.db('checkout_sessions as c').whereIn('c.id', [...checkoutIds]));
  const byId = new Map(rows.map((row) => [row.id, row]));
  return checkoutIds.flatMap((id) => (byId.has(id) ? [byId.get(id) as OurRow] : []));
}

async function confirmationOf(ctx: AppContext, checkoutId: string): Promise<ProviderConfirmation> {
  const row = await ctx.db('checkout_sessions').where({ id: checkoutId }).first<{ status: string; unpaid_confirmed_at: Date | null }>('status', 'unpaid_confirmed_at');
  if (row?.status === 'COMPLETED' || row?.status === 'UNFULFILLED') return 'completed';
  if (row?.status === 'EXPIRED' && row.unpaid_confirmed_at) return 'unpaid';
  return 'pending';
}
