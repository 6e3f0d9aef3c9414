import type { Knex } from 'knex';

/**
 * Contact details kept for a purpose that has passed are deleted by the weekly purge, so a dump of the
 * database holds no one's address it no longer needs:
 * - a waiting-list join that lapsed unconfirmed (its address was never proved to want anything from us, and
 *   may be a stranger's typed by someone else), with its history, FORGET_AFTER_DAYS after it lapsed;
 * - a contact-email change that is closed (undone, replaced by a later request, its confirmation window
 *   passed, or its undo window passed), FORGET_AFTER_DAYS after it closed. The registration's history keeps
 *   that a change was requested, confirmed or undone, without the addresses.
 */
export const FORGET_AFTER_DAYS = 30;

const LAPSED_JOINS_DUE = `w.state = 'LAPSED' AND w.updated_at <= :before
  AND NOT EXISTS (SELECT 1 FROM checkout_sessions c WHERE c.waitlist_entry_id = w.id)`;

/** When a change stopped mattering: the first of undone, replaced, or the end of the window it was in. */
const EMAIL_CHANGE_CLOSED_AT = `COALESCE(x.undone_at, x.replaced_at, CASE WHEN x.confirmed_at IS NOT NULL THEN x.undo_until ELSE x.confirm_by END)`;
const EMAIL_CHANGES_DUE = `${EMAIL_CHANGE_CLOSED_AT} <= :before`;

export interface ForgottenContacts {
  lapsedJoins: number;
  emailChanges: number;
}

const cutoff = (now: Date): Date => new Date(now.getTime() - FORGET_AFTER_DAYS * 86_400_000);

/** How many rows a run at `now` would delete (the dry run). */
export async function countForgettableContacts(db: Knex, now: Date): Promise<ForgottenContacts> {
  const before = cutoff(now);
  const { rows } = await db.raw<{ rows: Array<{ joins: number; changes: number }> }>(
    `SELECT (SELECT count(*)::int FROM waitlist_entries w WHERE ${LAPSED_JOINS_DUE}) AS joins,
            (SELECT count(*)::int FROM contact_email_changes x WHERE ${EMAIL_CHANGES_DUE}) AS changes`,
    { before },
  );
  const [counts] = rows;
  return { lapsedJoins: counts?.joins ?? 0, emailChanges: counts?.changes ?? 0 };
}

/** Deletes both kinds in one transaction; two runs at once delete each row once (the second finds it gone). */
export async function forgetStaleContacts(db: Knex, now: Date): Promise<ForgottenContacts> {
  const before = cutoff(now);
  return db.transaction(async (trx) => {
    const { rows: joins } = await trx.raw<{ rows: Array<{ id: string }> }>(
      `WITH due AS (SELECT w.id FROM waitlist_entries w WHERE ${LAPSED_JOINS_DUE} FOR UPDATE OF w SKIP LOCKED),
            history AS (DELETE FROM waitlist_history h USING due WHERE h.entry_id = due.id)
       DELETE FROM waitlist_entries w USING due WHERE w.id = due.id RETURNING w.id`,
      { before },
    );
    const { rows: changes } = await trx.raw<{ rows: Array<{ id: string }> }>(
      `DELETE FROM contact_email_changes x WHERE ${EMAIL_CHANGES_DUE} RETURNING x.id`,
      { before },
    );
    return { lapsedJoins: joins.length, emailChanges: changes.length };
  });
}
