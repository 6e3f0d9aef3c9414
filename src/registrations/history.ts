import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';

/**
 * Every change made to a registration by the office commands or the unpaid-hold
 * release: what changed, when, the note, and who (the operating-system user who
 * ran the command, the job's name, "card provider" for a refund or dispute reported by the provider, or
 * "registrant" for a change made on the manage page, whose entry names the client it came from).
 */

export type HistoryAction =
  | 'registered'
  | 'payment_recorded'
  | 'marked_paid'
  | 'cancelled'
  | 'resent'
  | 'contact_updated'
  /** The registrant corrected attendees' names on the manage page. */
  | 'attendees_updated'
  /** The registrant corrected answers to the event's questions on the manage page (which ones, never the values). */
  | 'answers_updated'
  /** The registrant asked the office to cancel a paid registration (manage page). */
  | 'cancellation_requested'
  /** The registrant asked for a new contact email on the manage page; it changes once the new address confirms it. */
  | 'email_change_requested'
  /** The registrant added extras (add-ons) on the manage page: the lines added, the total's change, a PAID registration owing again. */
  | 'extras_added'
  | 'hold_reminder'
  | 'hold_released'
  | 'refunded'
  | 'refund_recorded'
  /** Help with the cost from a named fund (`registrations credit`), and its reversal. */
  | 'credit_recorded'
  | 'credit_reversed'
  /** The office decided a family's request to talk about help with the cost: a credit, a payment, or `registrations help --decided`. */
  | 'help_decided'
  | 'refund_failed'
  | 'disputed'
  | 'dispute_won'
  /** The office exported the sensitive answers (`registrations export --include-sensitive --reason`): who, when, why. */
  | 'sensitive_exported'
  /** The weekly purge emptied the sensitive answers, sensitiveRetentionDays after the event ended. */
  | 'sensitive_purged';

export interface HistoryEntry {
  action: HistoryAction;
  changes: Record<string, unknown>;
  note: string | null;
  actor: string;
  at: Date;
}

export type NewHistoryEntry = { registrationId: string; action: HistoryAction; changes?: Record<string, unknown>; note?: string; actor: string; now: Date };

export async function recordHistory(trx: Knex.Transaction, input: NewHistoryEntry): Promise<void> {
  await recordHistoryEntries(trx, [input]);
}

/** Several entries in one statement (an export or a purge of many registrations at once). */
export async function recordHistoryEntries(trx: Knex.Transaction, entries: readonly NewHistoryEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await trx('registration_history').insert(
    entries.map((input) => ({
      registration_id: input.registrationId,
      action: input.action,
      changes: JSON.stringify(input.changes ?? {}),
      note: input.note ?? null,
      actor: input.actor,
      created_at: input.now,
    })),
  );
}

export async function listHistory(db: Db, registrationId: string): Promise<HistoryEntry[]> {
  const rows = await db('registration_history')
    .where({ registration_id: registrationId })
    .orderBy('id')
    .select<Array<{ action: HistoryAction; changes: Record<string, unknown>; note: string | null; actor: string; created_at: Date }>>(
      'action',
      'changes',
      'note',
      'actor',
      'created_at',
    );
  return rows.map((row) => ({ action: row.action, changes: row.changes, note: row.note, actor: row.actor, at: row.created_at }));
}
