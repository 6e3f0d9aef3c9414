import crypto from 'node:crypto';
import type { Db } from '../../src/db/connect.js';

/** A deterministic UUID: md5 of the label, as `md5(label)::uuid` gives in SQL. */
export function seededUuid(label: string): string {
  const hex = crypto.createHash('md5').update(label).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** Inserts rows in multi-row statements of `batch`. */
export async function insertInBatches(db: Db, table: string, rows: Array<Record<string, unknown>>, batch = 1000): Promise<void> {
  for (let start = 0; start < rows.length; start += batch) {
    await db(table).insert(rows.slice(start, start + batch));
  }
}

const FIRST = ['Ava', 'Noah', 'Mia', 'Liam', 'Grace', 'Ethan', 'Chloe', 'Lucas', 'Ruby', 'Jack', 'Zoe', 'Oliver', 'Isla', 'Leo', 'Lan', 'Tom'];
const LAST = ['Nguyen', 'Smith', 'Williams', 'Brown', 'Jones', 'Taylor', 'Wilson', 'Martin', 'Lee', 'Walker', 'Harris', 'Clarke'];

export function seededName(i: number): { first: string; last: string } {
  return { first: FIRST[i % FIRST.length] as string, last: LAST[(i * 7) % LAST.length] as string };
}

/** SQL array literals of the same names, for generate_series inserts. */
export const SQL_FIRST_NAMES = `ARRAY[${FIRST.map((n) => `'${n}'`).join(',')}]`;
export const SQL_LAST_NAMES = `ARRAY[${LAST.map((n) => `'${n}'`).join(',')}]`;
