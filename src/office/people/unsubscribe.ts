import type { AppContext } from '../../context.js';
import type { Db } from '../../db/connect.js';

/** What the unsubscribe page shows of a person its link names: first names only, never an address. */
export interface UnsubscribePerson {
  id: string;
  firstName: string;
  /** Their celebration emails are off (by the office or an earlier unsubscribe). */
  off: boolean;
}

/** The people a link names, as they are now; fewer (or none) when some are no longer on record. */
export async function unsubscribePeople(db: Db, personIds: readonly string[]): Promise<UnsubscribePerson[]> {
  const rows = await db('people')
    .whereIn('id', [...personIds])
    .orderBy('id')
    .select<Array<{ id: string; first_name: string; celebrations_off_at: Date | null }>>('id', 'first_name', 'celebrations_off_at');
  return rows.map((row) => ({ id: row.id, firstName: row.first_name, off: row.celebrations_off_at !== null }));
}

/**
 * The member's unsubscribe: turns off the celebration emails of each person the link names
 * whose emails are still on. One already off keeps when and how it was turned off (the
 * office's note included), so a repeated or racing POST changes nothing more.
 */
export async function unsubscribeFromCelebrations(ctx: Pick<AppContext, 'db' | 'clock'>, personIds: readonly string[]): Promise<UnsubscribePerson[]> {
  const now = ctx.clock.now();
  await ctx.db('people')
    .whereIn('id', [...personIds])
    .whereNull('celebrations_off_at')
    .update({ celebrations_off_at: now, celebrations_off_by: 'unsubscribe', updated_at: now });
  return unsubscribePeople(ctx.db, personIds);
}
