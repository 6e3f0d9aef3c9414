import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';
import { cardPaymentInFlightAs } from './card-checkouts.js';

/** A payment the office received outside the card provider. */
export interface OfficePayment {
  id: number;
  amountMinor: number;
  method: OfficePaymentMethod;
  note: string | null;
  recordedBy: string;
  recordedAt: Date;
}

export type OfficePaymentMethod = 'bank' | 'cash' | 'other';

/** Records the payment, in the caller's transaction (what it leaves owing is derived: registration_money). */
export async function insertOfficePayment(
  trx: Knex.Transaction,
  input: { registrationId: string; amountMinor: number; method: OfficePaymentMethod; note?: string; actor: string; now: Date },
): Promise<number> {
  const [row] = await trx('registration_payments')
    .insert({
      registration_id: input.registrationId,
      amount_minor: input.amountMinor,
      method: input.method,
      note: input.note ?? null,
      recorded_by: input.actor,
      recorded_at: input.now,
    })
    .returning<Array<{ id: number }>>('id');
  return (row as { id: number }).id;
}

/** How long the same payment (or refund) recorded again is taken for the same one recorded twice, unless --again. */
export const SAME_PAYMENT_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * The latest payment (or, from registration_refunds, refund paid back by hand) for the registration recorded since
 * `since` with this amount, method and note (none equals none).
 */
export async function recentSamePayment(
  trx: Knex.Transaction,
  match: { registrationId: string; amountMinor: number; method: OfficePaymentMethod; note?: string; since: Date },
  table: 'registration_payments' | 'registration_refunds' = 'registration_payments',
): Promise<{ recordedAt: Date; recordedBy: string } | undefined> {
  const row = await trx(table)
    .where({ registration_id: match.registrationId, amount_minor: match.amountMinor, method: match.method })
    .where((q) => (match.note === undefined ? q.whereNull('note') : q.where('note', match.note)))
    .where('recorded_at', '>', match.since)
    .orderBy('recorded_at', 'desc')
    .first<{ recorded_at: Date; recorded_by: string } | undefined>('recorded_at', 'recorded_by');
  return row ? { recordedAt: row.recorded_at, recordedBy: row.recorded_by } : undefined;
}

export async function listOfficePayments(db: Db, registrationId: string): Promise<OfficePayment[]> {
  const rows = await db('registration_payments')
    .where({ registration_id: registrationId })
    .orderBy('id')
    .select<Array<{ id: number; amount_minor: number; method: OfficePaymentMethod; note: string | null; recorded_by: string; recorded_at: Date }>>('*');
  return rows.map((row) => ({
    id: Number(row.id),
    amountMinor: row.amount_minor,
    method: row.method,
    note: row.note,
    recordedBy: row.recorded_by,
    recordedAt: row.recorded_at,
  }));
}

/**
 * The SQL for "amount paid" of a registration aliased `r`, from the view registration_money (the
 * ledger's figures): nothing once the card payment was refunded in full or disputed, the total once
 * paid by card (or PAID with no office rows), else what the office received; less what the office paid
 * back by hand (registration_refunds). Help with the cost is never in it.
 */
export const PAID_MINOR_SQL = `(SELECT m.paid_minor FROM registration_money m WHERE m.registration_id = r.id)`;

/** Help with the cost credited to the registration aliased `r`, net of reversals (registration_credits). */
export const CREDITED_MINOR_SQL = `(SELECT m.credited_minor FROM registration_money m WHERE m.registration_id = r.id)`;

/** What the registration aliased `r` still owes: total − paid − credited while PENDING, else 0. */
export const BALANCE_MINOR_SQL = `(SELECT m.balance_minor FROM registration_money m WHERE m.registration_id = r.id)`;

/** A registration's figures as the ledger gives them (the view registration_money), minor units. */
export interface RegistrationMoney {
  totalMinor: number;
  officePaidMinor: number;
  refundedMinor: number;
  creditedMinor: number;
  paidMinor: number;
  /** total − paid − credited, whatever the status. */
  outstandingMinor: number;
  /** outstanding while PENDING, else 0. */
  balanceMinor: number;
}

export async function registrationMoney(db: Db | Knex.Transaction, registrationId: string): Promise<RegistrationMoney> {
  const row = await db('registration_money')
    .where({ registration_id: registrationId })
    .first<{ total_minor: number; office_paid_minor: number; refunded_minor: number; credited_minor: number; paid_minor: number; outstanding_minor: number; balance_minor: number }>();
  if (!row) throw new Error(`no registration ${registrationId}`);
  return {
    totalMinor: Number(row.total_minor),
    officePaidMinor: Number(row.office_paid_minor),
    refundedMinor: Number(row.refunded_minor),
    creditedMinor: Number(row.credited_minor),
    paidMinor: Number(row.paid_minor),
    outstandingMinor: Number(row.outstanding_minor),
    balanceMinor: Number(row.balance_minor),
  };
}

/**
 * Whether a card payment for the registration may still arrive: a checkout OPEN, or EXPIRED with its
 * payload kept, other than a pay-now claim abandoned before its session was recorded (cardPaymentInFlightAs).
 */
export async function cardPaymentMayArrive(trx: Knex.Transaction, registrationId: string, now: Date): Promise<{ expiresAt: Date } | undefined> {
  const checkout = await trx('checkout_sessions')
    .where({ registration_id: registrationId })
    .where(cardPaymentInFlightAs('checkout_sessions', now))
    .orderBy('expires_at', 'desc')
    .first<{ expires_at: Date } | undefined>('expires_at');
  return checkout ? { expiresAt: checkout.expires_at } : undefined;
}

/** What the office has paid back by hand for a registration so far, minor units. */
export async function officeRefundedSum(db: Db | Knex.Transaction, registrationId: string): Promise<number> {
  const row = await db('registration_refunds')
    .where({ registration_id: registrationId })
    .sum<{ refunded: string | number | null }>({ refunded: 'amount_minor' })
    .first();
  return Number(row?.refunded ?? 0);
}

/**
 * What came in for a registration before anything was paid back by hand, minor units (registration_money):
 * its total once paid by card, else what the office received. Help with the cost is not money received.
 */
export async function receivedMinor(db: Db | Knex.Transaction, registrationId: string): Promise<number> {
  const money = await registrationMoney(db, registrationId);
  return money.paidMinor + money.refundedMinor;
}
