import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';

/** Help with the cost from a named fund, or the reversal of one: a row of registration_credits. */
export interface CreditEntry {
  id: number;
  kind: 'credit' | 'reversal';
  fund: string;
  amountMinor: number;
  /** A reversal's credit. */
  reversesId: number | null;
  /** A credit's reversal, when it was reversed. */
  reversedBy: number | null;
  note: string | null;
  recordedBy: string;
  recordedAt: Date;
}

interface CreditRow {
  id: string | number;
  kind: 'credit' | 'reversal';
  fund: string;
  amount_minor: number;
  reverses_id: string | number | null;
  note: string | null;
  recorded_by: string;
  recorded_at: Date;
}

export async function insertCredit(
  trx: Knex.Transaction,
  input: { registrationId: string; fund: string; amountMinor: number; note?: string; actor: string; now: Date },
): Promise<number> {
  const [row] = await trx('registration_credits')
    .insert({
      registration_id: input.registrationId,
      kind: 'credit',
      fund: input.fund,
      amount_minor: input.amountMinor,
      note: input.note ?? null,
      recorded_by: input.actor,
      recorded_at: input.now,
    })
    .returning<Array<{ id: string | number }>>('id');
  return Number(row?.id);
}

/** The reversal row of a credit: the same fund and amount, naming it (once: reverses_id is unique). */
export async function insertReversal(
  trx: Knex.Transaction,
  input: { registrationId: string; credit: CreditEntry; note?: string; actor: string; now: Date },
): Promise<number> {
  const [row] = await trx('registration_credits')
    .insert({
      registration_id: input.registrationId,
      kind: 'reversal',
      fund: input.credit.fund,
      amount_minor: input.credit.amountMinor,
      reverses_id: input.credit.id,
      note: input.note ?? null,
      recorded_by: input.actor,
      recorded_at: input.now,
    })
    .returning<Array<{ id: string | number }>>('id');
  return Number(row?.id);
}

/** Every credit and reversal of the registration, oldest first, each credit with its reversal's id. */
export async function listCredits(db: Db | Knex.Transaction, registrationId: string): Promise<CreditEntry[]> {
  const rows = await db('registration_credits').where({ registration_id: registrationId }).orderBy('id').select<CreditRow[]>('*');
  const reversedBy = new Map(rows.filter((row) => row.reverses_id !== null).map((row) => [Number(row.reverses_id), Number(row.id)]));
  return rows.map((row) => ({
    id: Number(row.id),
    kind: row.kind,
    fund: row.fund,
    amountMinor: row.amount_minor,
    reversesId: row.reverses_id === null ? null : Number(row.reverses_id),
    reversedBy: reversedBy.get(Number(row.id)) ?? null,
    note: row.note,
    recordedBy: row.recorded_by,
    recordedAt: row.recorded_at,
  }));
}

/** The help standing on a registration: its credits not reversed, as the family's page and the receipt name them. */
export function standingHelp(entries: CreditEntry[]): Array<{ fund: string; amountMinor: number }> {
  return entries.filter((entry) => entry.kind === 'credit' && entry.reversedBy === null).map((entry) => ({ fund: entry.fund, amountMinor: entry.amountMinor }));
}

/** The latest credit from this fund of this amount and note recorded since `since`, for "recorded twice?". */
export async function recentSameCredit(
  trx: Knex.Transaction,
  match: { registrationId: string; fund: string; amountMinor: number; note?: string; since: Date },
): Promise<{ recordedAt: Date; recordedBy: string } | undefined> {
  const row = await trx('registration_credits')
    .where({ registration_id: match.registrationId, kind: 'credit', fund: match.fund, amount_minor: match.amountMinor })
    .where((q) => (match.note === undefined ? q.whereNull('note') : q.where('note', match.note)))
    .where('recorded_at', '>', match.since)
    .orderBy('recorded_at', 'desc')
    .first<{ recorded_at: Date; recorded_by: string } | undefined>('recorded_at', 'recorded_by');
  return row ? { recordedAt: row.recorded_at, recordedBy: row.recorded_by } : undefined;
}

/** Credits per fund and event, net of reversals, minor units; one event's only when `eventSlug` is given. */
export async function creditsByFundAndEvent(
  db: Db,
  eventSlug?: string,
): Promise<Array<{ fund: string; eventSlug: string; eventTitle: string; creditedMinor: number; reversedMinor: number; registrations: number }>> {
  const query = db('registration_credits as c')
    .join('registrations as r', 'r.id', 'c.registration_id')
    .join('events as e', 'e.id', 'r.event_id')
    .groupBy('c.fund', 'e.slug', 'e.title', 'e.starts_at')
    .orderBy([{ column: 'c.fund' }, { column: 'e.starts_at' }, { column: 'e.slug' }])
    .select<Array<{ fund: string; slug: string; title: string; credited: string | number; reversed: string | number; registrations: string | number }>>(
      'c.fund',
      'e.slug',
      'e.title',
      db.raw(`SUM(CASE WHEN c.kind = 'credit' THEN c.amount_minor ELSE 0 END) AS credited`),
      db.raw(`SUM(CASE WHEN c.kind = 'reversal' THEN c.amount_minor ELSE 0 END) AS reversed`),
      db.raw(`COUNT(DISTINCT c.registration_id) AS registrations`),
    );
  if (eventSlug !== undefined) query.where('e.slug', eventSlug);
  const rows = await query;
  return rows.map((row) => ({
    fund: row.fund,
    eventSlug: row.slug,
    eventTitle: row.title,
    creditedMinor: Number(row.credited),
    reversedMinor: Number(row.reversed),
    registrations: Number(row.registrations),
  }));
}
