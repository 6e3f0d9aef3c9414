import type { AppContext } from '../../context.js';
import { mayStillBePaidAs, type CheckoutStatus } from '../webhook/staging-rows.js';
import type { OurCheckoutView, ProviderSessionView } from './compare.js';

/** Our side of reconcile: the checkout rows compared with the provider's sessions, and how they are shown. */

export interface OurRow {
  id: string;
  status: CheckoutStatus;
  expires_at: Date;
  created_at: Date;
  scrubbed_at: Date | null;
  unpaid_confirmed_at: Date | null;
  net_minor: number;
  surcharge_minor: number;
  provider_session_id: string | null;
  payment_intent_id: string | null;
  registration_status: 'PENDING' | 'PAID' | 'CANCELLED' | null;
}

export async function loadOurCheckouts(ctx: AppContext, sessions: ProviderSessionView[], since: Date, lookbackStart: Date) {
  const select = (query: ReturnType<AppContext['db']>) =>
    query
      .leftJoin('registrations as r', (join) => {
        join.on('r.id', 'c.registration_id').orOn('r.payment_intent_id', 'c.payment_intent_id');
      })
      .select<OurRow[]>(
        'c.id',
        'c.status',
        'c.expires_at',
        'c.created_at',
        'c.scrubbed_at',
        'c.unpaid_confirmed_at',
        'c.net_minor',
        'c.surcharge_minor',
        'c.provider_session_id',
        'c.payment_intent_id',
        'r.status as registration_status',
      );
  const sessionIds = sessions.map((s) => s.id);
  const checkoutIds = sessions.flatMap((s) => (s.ids.checkoutId ? [s.ids.checkoutId] : []));
  const listed = await select(
    ctx.db('checkout_sessions as c').where((q) => q.whereIn('c.provider_session_id', sessionIds).orWhereIn('c.id', checkoutIds)),
  );
  const completedInWindow = await select(ctx.db('checkout_sessions as c').where('c.status', 'COMPLETED').andWhere('c.created_at', '>=', since));
  const unsettledBeforeWindow = await select(
    ctx.db('checkout_sessions as c')
      .where('c.created_at', '<', since)
      .whereNotNull('c.provider_session_id')
      .where((unsettled) =>
        unsettled
          .where(mayStillBePaidAs('c'))
          .orWhere((scrubbed) => scrubbed.where('c.status', 'EXPIRED').whereNull('c.unpaid_confirmed_at').where('c.expires_at', '>=', lookbackStart)),
      ),
  );
  return {
    unsettledBeforeWindow,
    byProviderSession: new Map(listed.filter((r) => r.provider_session_id).map((r) => [r.provider_session_id as string, r])),
    byId: new Map(listed.map((r) => [r.id, r])),
    completedInWindow,
  };
}

export function ourView(row: OurRow): OurCheckoutView {
  return {
    id: row.id,
    status: row.status,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    kept: row.scrubbed_at === null,
    confirmedUnpaid: row.unpaid_confirmed_at !== null,
    expectedMinor: row.net_minor + row.surcharge_minor,
    registrationStatus: row.registration_status,
  };
}

export function describeOurs(row: OurRow | undefined): string {
  if (!row) return 'missing';
  const detail =
    row.status === 'EXPIRED'
      ? row.unpaid_confirmed_at
        ? ' (confirmed unpaid)'
        : row.scrubbed_at
          ? ' (scrubbed)'
          : ' (kept)'
      : row.registration_status && row.status === 'COMPLETED'
        ? `/${row.registration_status}`
        : '';
  return `${row.status}${detail}`;
}
