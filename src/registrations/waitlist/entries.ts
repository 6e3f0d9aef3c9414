import type { Knex } from 'knex';
import type { FieldCipher } from '../../crypto/field-cipher.js';
import type { Db } from '../../db/connect.js';
import { AppError, NotFoundError } from '../../errors.js';

/**
 * A waiting-list entry's life: UNCONFIRMED (joined by the public form, not on the list until its mailbox
 * confirms) → WAITING → OFFERED → CLAIMED, or LAPSED (never confirmed, after a day), EXPIRED (offer
 * unclaimed), LEFT (by its link), REMOVED (by the office). The office's entries start WAITING.
 */
export type WaitlistState = 'UNCONFIRMED' | 'LAPSED' | 'WAITING' | 'OFFERED' | 'CLAIMED' | 'EXPIRED' | 'LEFT' | 'REMOVED';

export type WaitlistAction = 'joined' | 'confirmed' | 'lapsed' | 'skipped' | 'offered' | 'claimed' | 'expired' | 'left' | 'removed';

export interface WaitlistEntryRow {
  id: string;
  event_id: string;
  position: string | number;
  name_enc: string;
  email_enc: string;
  email_hash: string;
  mobile_enc: string | null;
  places: number;
  /** The ticket type it waits for; null: any. */
  tier: string | null;
  state: WaitlistState;
  skips: number;
  offer_seq: number;
  offered_at: Date | null;
  offer_expires_at: Date | null;
  registration_id: string | null;
  confirmed_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export interface WaitlistContact {
  name: string;
  email: string;
  mobile?: string;
}

/** How the office names an entry: the first 8 characters of its id. */
export function entryReference(id: string): string {
  return `W-${id.slice(0, 8).toUpperCase()}`;
}

export function entryContact(cipher: FieldCipher, row: Pick<WaitlistEntryRow, 'name_enc' | 'email_enc' | 'mobile_enc'>): WaitlistContact {
  return {
    name: cipher.decrypt(row.name_enc),
    email: cipher.decrypt(row.email_enc),
    ...(row.mobile_enc ? { mobile: cipher.decrypt(row.mobile_enc) } : {}),
  };
}

export async function recordWaitlistHistory(
  trx: Knex.Transaction,
  input: { entryId: string; action: WaitlistAction; changes?: Record<string, unknown>; note?: string; actor: string; now: Date },
): Promise<void> {
  await trx('waitlist_history').insert({
    entry_id: input.entryId,
    action: input.action,
    changes: JSON.stringify(input.changes ?? {}),
    note: input.note ?? null,
    actor: input.actor,
    created_at: input.now,
  });
}

/** The entry as stored, locked for the transaction (after the event's lock, which every change of places takes first). */
export async function lockEntry(trx: Knex.Transaction, entryId: string): Promise<WaitlistEntryRow | undefined> {
  return trx('waitlist_entries').where({ id: entryId }).forUpdate().first<WaitlistEntryRow | undefined>();
}

/** An entry's id from what the office typed: the full id, or its reference (W-1A2B3C4D, with or without "W-"). */
export async function resolveEntryId(db: Db, given: string): Promise<{ id: string; event_id: string }> {
  const text = given.trim().replace(/^w-/i, '').toLowerCase();
  if (!/^[0-9a-f-]{8,36}$/.test(text)) {
    throw new AppError('usage', `"${given}" is not a waiting-list entry (e.g. W-1A2B3C4D)`, {
      exitCode: 2,
      suggestion: 'run `eventops waitlist list --event SLUG` to see the entries',
    });
  }
  const rows = await db('waitlist_entries')
    .whereRaw('id::text LIKE ?', [`${text}%`])
    .limit(2)
    .select<Array<{ id: string; event_id: string }>>('id', 'event_id');
  if (rows.length === 0) throw new NotFoundError(`waiting-list entry "${given}"`, 'run `eventops waitlist list --event SLUG` to see the entries');
  if (rows.length > 1) throw new AppError('ambiguous_entry', `"${given}" names more than one entry; give more of its id`, { exitCode: 2 });
  return rows[0] as { id: string; event_id: string };
}

/** Entries ahead of this one that still wait or hold an offer, plus one: its place in the queue. */
export async function queuePosition(db: Db | Knex.Transaction, entry: Pick<WaitlistEntryRow, 'event_id' | 'position'>): Promise<number> {
  const row = await db('waitlist_entries')
    .where({ event_id: entry.event_id })
    .whereIn('state', ['WAITING', 'OFFERED'])
    .andWhere('position', '<=', entry.position)
    .count<{ n: string | number }>({ n: '*' })
    .first();
  return Number(row?.n ?? 0);
}
