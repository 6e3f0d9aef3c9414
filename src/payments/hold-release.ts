import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';
import { helpOpenSql } from '../registrations/help-requests.js';

/**
 * When an unpaid bank-transfer registration's seats are released (events with `unpaidHoldDays`): the SQL
 * that sweep-checkouts releases by, and the same moment for the confirmation and the registration page,
 * so what a registrant is told is what the sweep does. Expressions over `r` (registrations) and `e`
 * (events), with the named binding `:tz` (APP_TIMEZONE).
 */

/** The moment `days` calendar days after `from`, in the church's time zone. */
export const daysAfter = (from: string, days: string) => `((${from} AT TIME ZONE :tz) + make_interval(days => ${days})) AT TIME ZONE :tz`;

/**
 * N days after the registration was made, and never sooner than a day after the office set or
 * shortened the limit (`unpaid_hold_since`; GREATEST ignores its NULL): a registration made under
 * a longer limit, or none, is reminded before its seats are freed. A family that asked to talk about help with
 * the cost is held until the office decides (help-requests.ts), and then N days from the decision.
 */
export const RELEASE_AT = `GREATEST(${daysAfter('r.created_at', 'e.unpaid_hold_days')}, ${daysAfter('e.unpaid_hold_since', '1')}, ${daysAfter('r.help_decided_at', 'e.unpaid_hold_days')})`;

/**
 * When this registration's places are released unless paid, or undefined when they are not: paid, free,
 * by card, part-paid by the office (the sweep leaves those alone), no limit on the event, or a release
 * that would fall at or after the event's start (the sweep releases only before it).
 */
export async function heldUntil(db: Db | Knex.Transaction, registrationId: string, timeZone: string): Promise<Date | undefined> {
  const result = await db.raw<{ rows: Array<{ release_at: Date }> }>(
    `SELECT ${RELEASE_AT} AS release_at
       FROM registrations r JOIN events e ON e.id = r.event_id
      WHERE r.id = :id AND r.status = 'PENDING' AND r.payment_method = 'bank' AND r.total_minor > 0
        AND NOT EXISTS (SELECT 1 FROM registration_money m WHERE m.registration_id = r.id AND (m.office_paid_minor > 0 OR m.credited_minor > 0))
        AND e.unpaid_hold_days IS NOT NULL AND e.deleted_at IS NULL
        AND NOT ${helpOpenSql('r')}
        AND ${RELEASE_AT} < e.starts_at`,
    { id: registrationId, tz: timeZone },
  );
  return result.rows[0]?.release_at;
}

/**
 * heldUntil for an unpaid bank-transfer registration of the event not yet written, to be made at `:madeAt` (no money
 * received, no help asked, owing more than 0: the caller knows): so its confirmation is rendered before it exists.
 * A scalar subquery (named bindings :eventId, :madeAt, :tz), read in the statement the confirmation reads anyway.
 */
const RELEASE_IF_MADE_AT = `GREATEST(${daysAfter('CAST(:madeAt AS timestamptz)', 'e.unpaid_hold_days')}, ${daysAfter('e.unpaid_hold_since', '1')})`;
export const HELD_UNTIL_IF_MADE_AT_SQL = `(SELECT ${RELEASE_IF_MADE_AT} FROM events e
  WHERE e.id = :eventId AND e.unpaid_hold_days IS NOT NULL AND e.deleted_at IS NULL AND ${RELEASE_IF_MADE_AT} < e.starts_at)`;
