import type { EventPricing } from '../../registrations/event-pricing.js';
import type { Question } from '../../registrations/answers.js';
import type { Knex } from 'knex';
import { CHURCH_IDENTITY_KEYS, type ChurchIdentitySettings } from '../../mail/identity.js';
import { parseSettings } from '../../settings.js';
import type { WebhookAction } from './map.js';
import { type StagingRow } from './staging-rows.js';
import { mayStillBePaidSql } from '../../registrations/card-checkouts.js';

export type CompleteAction = Extract<WebhookAction, { kind: 'complete' }>;

/** A provider event as recorded against redelivery: its id and type. */
export interface DeliveredEvent {
  id: string;
  type: string;
}

/** SQL on events aliased `e`: a capacity, a ticket type with one of its own, or an add-on with stock (SeenEvent.limited). */
export const SEEN_LIMITED_SQL = `(e.capacity IS NOT NULL OR jsonb_path_exists(e.pricing, '$.tiers[*].capacity') OR jsonb_path_exists(e.pricing, '$.addons[*].stock'))`;

/** The event a checkout is for, as read before any lock on it. */
export interface SeenEvent {
  title: string;
  starts_at: Date;
  capacity: number | null;
  /** What a receipt lists answers by: rendered before the lock, again under it only if these changed meanwhile. */
  questions: Question[] | null;
  pricing: EventPricing;
  /** It has a capacity, or a ticket type with a capacity of its own: its places are counted under its exclusive lock. */
  limited: boolean;
}

export interface RecordedCompletion {
  /** false: this provider event was handled before (a redelivery); nothing was done. */
  recorded: boolean;
  /** The new registration's checkout, claimed → COMPLETED; absent when the general path must look (see below). */
  claimed?: StagingRow;
  seen?: SeenEvent;
  identitySettings: ChurchIdentitySettings;
}

/**
 * The first statement of a paid checkout's transaction, doing in one round trip
 * what the general path does in four, in the same order:
 * 1. record the provider event id (insert-or-nothing; a redelivery racing the
 *    first waits on its row and then records nothing, and so does nothing);
 * 2. only if recorded, take the PaymentIntent's advisory lock (lockPaymentIntent);
 * 3. only once locked, claim the staging row named by our id (OPEN, or EXPIRED
 *    with its payload kept → COMPLETED). Under READ COMMITTED an UPDATE re-checks
 *    a row changed while it waited, so a claim made meanwhile is seen;
 * 4. read the event (unlocked, as `seen`) and the identity settings for the receipt.
 * The claim is limited to checkouts of a new registration (no registration_id):
 * a pay-now checkout must lock its registration before the claim, so it, like
 * a checkout without our id, an unknown one or a late one, is left unclaimed
 * for the general path (completeCheckout), with the event recorded and the lock held.
 * What must be read after the lock (a waiting reversal, the seats) is read by
 * later statements.
 */
export async function recordAndClaimCompletion(
  trx: Knex.Transaction,
  event: DeliveredEvent,
  action: CompleteAction,
  now: Date,
): Promise<RecordedCompletion> {
  const lock = action.paymentIntentId ? 'pg_advisory_xact_lock(hashtextextended(?, 0))' : 'NULL';
  const lockBindings = action.paymentIntentId ? [`payment_intent:${action.paymentIntentId}`] : [];
  const settingPlaceholders = CHURCH_IDENTITY_KEYS.map(() => '?').join(', ');
  const result = await trx.raw<{ rows: Array<ClaimRow> }>(
    `WITH recorded AS MATERIALIZED (
       INSERT INTO processed_webhook_events (event_id, type, processed_at) VALUES (?, ?, ?)
       ON CONFLICT (event_id) DO NOTHING
       RETURNING event_id
     ), payment_locked AS MATERIALIZED (
       SELECT event_id, ${lock} AS locked FROM recorded
     ), claimed AS (
       UPDATE checkout_sessions c
          SET status = 'COMPLETED', completed_at = ?, payment_intent_id = COALESCE(?, c.payment_intent_id),
              provider_session_id = COALESCE(c.provider_session_id, ?), updated_at = ?
        WHERE c.id = ? AND c.registration_id IS NULL
          AND (c.provider_session_id IS NULL OR c.provider_session_id = ?)
          AND ${mayStillBePaidSql('c')}
          AND (SELECT count(*) FROM payment_locked) = 1
        RETURNING c.*
     )
     SELECT (SELECT count(*) FROM payment_locked)::int AS recorded_count,
            claimed.*,
            e.title AS seen_title, e.starts_at AS seen_starts_at, e.capacity AS seen_capacity, e.id IS NOT NULL AS seen_found,
            e.questions AS seen_questions, e.pricing AS seen_pricing,
            ${SEEN_LIMITED_SQL} AS seen_limited,
            (SELECT json_object_agg(key, value) FROM app_settings WHERE key IN (${settingPlaceholders})) AS identity_settings
       FROM (SELECT 1) AS one
       LEFT JOIN claimed ON true
       LEFT JOIN events e ON e.id = claimed.event_id`,
    [
      event.id,
      event.type,
      now,
      ...lockBindings,
      now,
      action.paymentIntentId,
      action.providerSessionId,
      now,
      action.ids.checkoutId ?? null,
      action.providerSessionId,
      ...CHURCH_IDENTITY_KEYS,
    ],
  );
  const row = result.rows[0];
  if (!row) throw new Error('the completion claim returned no row');
  const { recorded_count, seen_title, seen_starts_at, seen_capacity, seen_found, seen_limited, seen_questions, seen_pricing, identity_settings, ...claimed } = row;
  return {
    recorded: recorded_count === 1,
    claimed: claimed.id ? (claimed as StagingRow) : undefined,
    seen: seen_found
      ? { title: seen_title as string, starts_at: seen_starts_at as Date, capacity: seen_capacity, questions: seen_questions, pricing: seen_pricing as EventPricing, limited: Boolean(seen_limited) }
      : undefined,
    identitySettings: parseSettings(identity_settings ?? {}),
  };
}

type ClaimRow = Partial<StagingRow> & {
  recorded_count: number;
  seen_title: string | null;
  seen_starts_at: Date | null;
  seen_capacity: number | null;
  seen_found: boolean;
  seen_limited: boolean | null;
  seen_questions: Question[] | null;
  seen_pricing: EventPricing | null;
  identity_settings: Record<string, unknown> | null;
};
