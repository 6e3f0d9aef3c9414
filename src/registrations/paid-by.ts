import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';
import { moneyFormatter } from '../money-format.js';

/** How money came for a registration: a method and what came by it, minor units. */
export interface PaidByMethod {
  method: 'card' | 'bank' | 'cash' | 'other';
  amountMinor: number;
}

/** A method as a receipt or a listing names it beside an amount. */
const METHOD_NAMES: Record<PaidByMethod['method'], string> = {
  card: 'card',
  bank: 'bank transfer',
  cash: 'cash',
  other: 'other payment',
};

/**
 * What the office received for a registration, one entry per method in the order each was first used,
 * summed: a bank part-payment then the balance in cash is [bank, cash].
 */
export async function officePaidByMethod(db: Db | Knex.Transaction, registrationId: string): Promise<PaidByMethod[]> {
  const rows = await db('registration_payments')
    .where({ registration_id: registrationId })
    .groupBy('method')
    .orderByRaw('min(id)')
    .select<Array<{ method: PaidByMethod['method']; amount: string | number }>>('method', db.raw('sum(amount_minor) AS amount'));
  return rows.map((row) => ({ method: row.method, amountMinor: Number(row.amount) }));
}

/** The same as a SQL expression for a registration aliased `r`: a JSON array of {method, amountMinor}, or null for none. */
export const OFFICE_PAID_BY_METHOD_SQL = `(SELECT json_agg(json_build_object('method', m.method, 'amountMinor', m.amount) ORDER BY m.first_id)
  FROM (SELECT p.method, SUM(p.amount_minor)::bigint AS amount, MIN(p.id) AS first_id FROM registration_payments p
    WHERE p.registration_id = r.id GROUP BY p.method) m)`;

/** "bank transfer $100.00 and cash $80.00", with Intl's list and money in APP_LOCALE and APP_CURRENCY. */
export function paidByWords(paid: PaidByMethod[], regional: { locale: string; currency: string }): string {
  const money = moneyFormatter(regional);
  return listWords(
    paid.map((part) => `${METHOD_NAMES[part.method]} ${money(part.amountMinor)}`),
    regional.locale,
  );
}

/** Words joined as the locale lists them: "a, b and c" in en-AU. */
export function listWords(words: string[], locale: string): string {
  return new Intl.ListFormat(locale, { style: 'long', type: 'conjunction' }).format(words);
}

/**
 * The method a list or a page names for a registration: its own (how it was paid, or is to be) unless the office
 * received money by another method or by several, then every method with what came by it.
 */
export function methodShown(method: string, officePaid: PaidByMethod[], regional: { locale: string; currency: string }): string {
  if (officePaid.length === 0 || (officePaid.length === 1 && officePaid[0]?.method === method)) return method;
  return paidByWords(officePaid, regional);
}
