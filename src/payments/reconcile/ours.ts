import type { Knex } from 'knex';
import type { AppContext } from '../../context.js';
import { type CheckoutStatus } from '../webhook/staging-rows.js';
import { mayStillBePaidAs } from '../../registrations/card-checkouts.js';
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
  /** The registration this checkout's PaymentIntent pays (a kept payment the office registered by hand with). */
  payment_registration_status: 'PENDING' | 'PAID' | 'CANCELLED' | null;
  /** Reversals of this PaymentIntent already told as reversal_unfulfilled. */
  reversals_alerted: Array<'refund' | 'dispute'> | null;
  /** This checkout's ledger row (a card payment of a registration paying in parts): its reversal, or 'none'; null without one. */
  card_part_reversal: 'refund' | 'dispute' | 'none' | null;
}

/**
 * The registration a checkout's PaymentIntent pays, as SQL on `c`: the one holding it as its first (or whole)
 * card payment, else the one whose ledger row names it (a later card payment of a registration paying in parts).
 */
const PAID_BY_LEDGER_SQL = `(SELECT rp.registration_id FROM registration_payments rp WHERE rp.method = 'card' AND rp.payment_intent_id = c.payment_intent_id LIMIT 1)`;

/** Reconcile's view of the checkout rows `query` (on `checkout_sessions as c`) finds. */
export function selectOurRows(ctx: Pick<AppContext, 'db'>, query: ReturnType<AppContext['db']>) {
  return query
    .leftJoin('registrations as r', (join) => {
      join.on('r.id', 'c.registration_id').orOn('r.payment_intent_id', 'c.payment_intent_id').orOn('r.id', ctx.db.raw(PAID_BY_LEDGER_SQL));
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
      ctx.db.raw(
        `(SELECT p.status FROM registrations p WHERE p.payment_intent_id = c.payment_intent_id OR p.id = ${PAID_BY_LEDGER_SQL} LIMIT 1) AS payment_registration_status`,
      ),
      ctx.db.raw(`(SELECT COALESCE(rp.reversal, 'none') FROM registration_payments rp WHERE rp.checkout_session_id = c.id) AS card_part_reversal`),
      ctx.db.raw(
        `(SELECT array_agg(DISTINCT a.details->>'reversal') FROM operations_alerts a
           WHERE a.kind = 'reversal_unfulfilled' AND a.payment_intent_id = c.payment_intent_id) AS reversals_alerted`,
      ),
    );
}

export async function loadOurCheckouts(ctx: AppContext, sessions: ProviderSessionView[], since: Date, lookbackStart: Date) {
  const select = (query: ReturnType<AppContext['db']>) => selectOurRows(ctx, query);
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
          .orWhere((scrubbed) => scrubbed.where('c.status', 'EXPIRED').whereNull('c.unpaid_confirmed_at').where('c.expires_at', '>=', lookbackStart))
          .orWhere((kept) => keptUntilRefunded(kept, lookbackStart)),
      ),
  );
  const unknownAlerted = await ctx.db('operations_alerts').where('kind', 'unknown_checkout').whereIn('provider_session_id', sessionIds).pluck('provider_session_id');
  return {
    unsettledBeforeWindow,
    /** Sessions of the listing already alerted as unknown_checkout (paid, carrying our id, no row of ours). */
    unknownCheckoutsAlerted: new Set<string>(unknownAlerted),
    byProviderSession: new Map(listed.filter((r) => r.provider_session_id).map((r) => [r.provider_session_id as string, r])),
    byId: new Map(listed.map((r) => [r.id, r])),
    completedInWindow,
  };
}

/**
 * A payment kept without a registration (UNFULFILLED, with its alert) that the office may refund at the
 * provider while following the alert up, and whose refund webhook may be lost: read for as long as
 * scrubbed checkouts are, from its creation, until a refund of it is recorded here.
 */
function keptUntilRefunded(query: Knex.QueryBuilder, lookbackStart: Date): void {
  void query
    .where('c.status', 'UNFULFILLED')
    .whereNotNull('c.payment_intent_id')
    .where('c.created_at', '>=', lookbackStart)
    .whereNotExists((alerted) =>
      alerted
        .from('operations_alerts as a')
        .where('a.kind', 'reversal_unfulfilled')
        .whereRaw('a.payment_intent_id = c.payment_intent_id')
        .whereRaw(`a.details->>'reversal' = 'refund'`),
    )
    .whereNotExists((cancelled) =>
      cancelled
        .from('registrations as p')
        .whereRaw(`(p.payment_intent_id = c.payment_intent_id OR p.id = ${PAID_BY_LEDGER_SQL})`)
        .where('p.status', 'CANCELLED'),
    );
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
    paymentRegistrationStatus: row.payment_registration_status,
    reversalsAlerted: row.reversals_alerted ?? [],
    ...(row.card_part_reversal === null ? {} : { cardPartReversal: row.card_part_reversal === 'none' ? null : row.card_part_reversal }),
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
