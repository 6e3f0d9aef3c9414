import type { Knex } from 'knex';
import { PricingError, type AttendeeChoice, type CodeTerms } from './pricing.js';
import { holdsPlacesSql } from './card-checkouts.js';

/**
 * Codes a church gives out for an event (discount_codes): their records, the live count of their uses, and
 * whether one may be used for a registration. The office's commands are in office/codes.ts.
 */

/** How a code is written: letters, digits, - and _, 1 to 40 of them; compared without regard to case. */
export const CODE_PATTERN = /^[A-Za-z0-9_-]{1,40}$/;

export interface CodeRow {
  id: string;
  event_id: string;
  code: string;
  /** NUMERIC: read as a string. */
  percent: string | number | null;
  amount_minor: number | null;
  tier_prices: Record<string, number> | null;
  max_uses: number | null;
  /** The last church-local day it may be used (yyyy-MM-dd, inclusive). */
  valid_until: string | null;
  tiers: string[] | null;
  reveals: string | null;
  note: string | null;
  created_by: string;
  created_at: Date;
  disabled_at: Date | null;
  disabled_by: string | null;
}

/** The code's effect, for the pricing function. */
export function codeTerms(row: CodeRow): CodeTerms {
  return {
    code: row.code,
    ...(row.percent !== null ? { percent: Number(row.percent) } : {}),
    ...(row.amount_minor !== null ? { amount: row.amount_minor } : {}),
    ...(row.tier_prices !== null ? { prices: row.tier_prices } : {}),
    ...(row.tiers !== null ? { tiers: row.tiers } : {}),
    ...(row.reveals !== null ? { reveals: row.reveals } : {}),
  };
}

/** The event's code written `text`, whatever its case; undefined when it has none (or `text` cannot be a code). */
/**
 * Whether the event has a code a family could still type (not disabled, not past its day): the page asks "Have a
 * code?" only then. It says only that some code exists, as a printed flyer would; never which, nor how many.
 */
export async function eventHasLiveCodes(db: Knex | Knex.Transaction, eventId: string, day: string): Promise<boolean> {
  const row = await db('discount_codes')
    .where({ event_id: eventId })
    .whereNull('disabled_at')
    .where((q) => q.whereNull('valid_until').orWhere('valid_until', '>=', day))
    .first<{ id: string } | undefined>('id');
  return row !== undefined;
}

export async function findCode(db: Knex | Knex.Transaction, eventId: string, text: string): Promise<CodeRow | undefined> {
  const given = text.trim();
  if (!CODE_PATTERN.test(given)) return undefined;
  return db('discount_codes').where({ event_id: eventId }).whereRaw('lower(code) = lower(?)', [given]).first<CodeRow | undefined>();
}

/**
 * SQL for the live uses of the code whose id is the expression `codeId`: registrations naming it that are PENDING or
 * PAID, and new registrations' card checkouts naming it that still hold (open and unexpired at `now`, a placeholder).
 * A cancelled or expired registration, and an expired, failed or completed checkout, count for nothing: a use comes
 * back by its row's state alone, exactly once. (A completed checkout's registration counts instead.)
 */
export function codeUsesSql(codeId: string, now: string): string {
  return `((SELECT count(*) FROM registrations r WHERE r.code_id = ${codeId} AND r.status IN ('PENDING','PAID'))
         + (SELECT count(*) FROM checkout_sessions c WHERE c.code_id = ${codeId} AND ${holdsPlacesSql('c', now)}))`;
}

/** The code's live uses at `now`. Under the event's lock (lockEventForSeats) it cannot change until commit. */
export async function codeUses(db: Knex | Knex.Transaction, codeId: string, now: Date): Promise<number> {
  const result = await db.raw<{ rows: Array<{ uses: number | string }> }>(`SELECT ${codeUsesSql(':id', ':now')} AS uses`, { id: codeId, now });
  return Number(result.rows[0]?.uses ?? 0);
}

/** Why a code may not be used for a registration: told to the office; the public form hears one message for all. */
export type CodeRefusal = 'unknown' | 'disabled' | 'expired' | 'used_up' | 'not_for_these_tiers';

/**
 * Whether the code applies to these attendees at all: its `tiers`, else its priced tiers, else (a code that only
 * reveals) its revealed tier must be among them; a plain percent or amount reaches every ticket.
 */
export function codeAppliesTo(row: Pick<CodeRow, 'tiers' | 'tier_prices' | 'reveals' | 'percent' | 'amount_minor'>, tiers: readonly string[]): boolean {
  const wanted = row.tiers ?? (row.tier_prices ? Object.keys(row.tier_prices) : row.percent === null && row.amount_minor === null && row.reveals ? [row.reveals] : undefined);
  return wanted === undefined || tiers.some((tier) => wanted.includes(tier));
}

/**
 * Judges a code for a registration of these attendee tiers on the church-local day `day`, with `uses` its live uses
 * (counted under the event's lock). The first reason it may not be used, or undefined when it may.
 */
export function codeRefusal(row: CodeRow | undefined, input: { day: string; tiers: readonly string[]; uses: number }): CodeRefusal | undefined {
  if (!row) return 'unknown';
  if (row.disabled_at !== null) return 'disabled';
  if (row.valid_until !== null && input.day > row.valid_until) return 'expired';
  if (!codeAppliesTo(row, input.tiers)) return 'not_for_these_tiers';
  if (row.max_uses !== null && input.uses >= row.max_uses) return 'used_up';
  return undefined;
}

/**
 * The public form's one answer for any code it will not take: unknown, disabled, past its last day, used up, or
 * not for these tickets. It says nothing of why, nor whether the event has other codes. `reason` is for the logs.
 */
export const CODE_REFUSED_MESSAGE = 'Code: this code cannot be used for this registration. Check it, or register without it.';

export class CodeRefusedError extends PricingError {
  constructor(readonly reason: CodeRefusal) {
    super(CODE_REFUSED_MESSAGE, 'code');
    this.name = 'CodeRefusedError';
  }
}

/**
 * The event's code written `text`, judged for these attendees on the day their price is fixed, with its live uses
 * counted under the event's lock (the caller holds it); CodeRefusedError (with the reason) when it may not be used.
 */
export async function usableCode(
  trx: Knex.Transaction,
  event: { id: string },
  text: string,
  input: { day: string; attendees: readonly AttendeeChoice[]; now: Date },
): Promise<CodeRow> {
  const row = await findCode(trx, event.id, text);
  const refusal = codeRefusal(row, { day: input.day, tiers: input.attendees.map((attendee) => attendee.tier), uses: row ? await codeUses(trx, row.id, input.now) : 0 });
  if (refusal || !row) throw new CodeRefusedError(refusal ?? 'unknown');
  return row;
}

