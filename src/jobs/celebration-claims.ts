import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';

/**
 * The SQL of send-celebrations: who celebrates on a day (index lookups on the
 * month/day columns, keyset pages by id) and the per-(person, kind, year)
 * claims in celebration_claims.
 *
 * A claim row is written before sending and confirmed (sent_at) after the mail
 * server accepted the message. A row with sent_at set means "done this year";
 * a row without it means "in flight", unless its claimed_at is older than
 * STALE_CLAIM_MS: then the run that took it is presumed dead and any run may
 * take it over.
 */

/** Decisions "Jobs": an unconfirmed claim older than 15 minutes was left by a crashed run and may be reclaimed. */
export const STALE_CLAIM_MS = 15 * 60_000;

export type CelebrationKind = 'birthday' | 'anniversary';

/** The local calendar day being celebrated. */
export interface CelebrationDay {
  /** YYYY-MM-DD in APP_TIMEZONE. */
  date: string;
  year: number;
  month: number;
  /** Days of `month` celebrated today: [28, 29] on 28 February of a year without a 29th. */
  days: number[];
}

export interface ClaimState {
  claimed_at: Date | null;
  sent_at: Date | null;
}

export interface BirthdayRow extends ClaimState {
  id: string;
  first_name: string;
  last_name: string;
  email_enc: string;
}

/**
 * One row per couple (under the spouse with the smaller id, or the one whose
 * wedding date is on record) or per person whose spouse does not share the
 * anniversary; spouse_* are null in that case.
 */
export interface AnniversaryRow extends ClaimState {
  id: string;
  first_name: string;
  last_name: string;
  email_enc: string | null;
  wedding_date: string;
  spouse_id: string | null;
  spouse_first_name: string | null;
  spouse_last_name: string | null;
  spouse_email_enc: string | null;
}

export interface SqlQuery {
  sql: string;
  bindings: Knex.RawBinding[];
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/**
 * People with an email whose birthday is `day`, after `afterId`, unless their
 * celebration emails are off. The `birth_date IS NOT NULL` term lets the
 * planner use the partial index people_birthday_idx (the opt-out is a filter
 * on the few rows it finds); born on an earlier date, so a baby is not greeted
 * on the day of birth (or a wrongly entered future date ever).
 */
export function birthdayPageQuery(day: CelebrationDay, afterId: string | undefined, limit: number): SqlQuery {
  return {
    sql: `SELECT p.id, p.first_name, p.last_name, p.email_enc, c.claimed_at, c.sent_at
      FROM people p
      LEFT JOIN celebration_claims c ON c.person_id = p.id AND c.kind = 'birthday' AND c.year = ?
      WHERE p.birth_date IS NOT NULL AND p.birth_month = ? AND p.birth_day = ANY(?::smallint[])
        AND p.birth_date < ?::date AND p.email_enc IS NOT NULL AND p.celebrations_off_at IS NULL AND p.id > ?::uuid
      ORDER BY p.id
      LIMIT ?`,
    bindings: [day.year, day.month, day.days, day.date, afterId ?? NIL_UUID, limit],
  };
}

/**
 * People whose wedding anniversary is `day`, joined to their spouse when the
 * link goes both ways and the spouse has the same anniversary or none on record
 * (the import lets one side of a couple carry the date): such a couple is one
 * row, under the smaller id of those with the date, so it gets one email and
 * one claim. Rows where nobody has an email are left out, and so is a couple
 * when either spouse's celebration emails are off (a widow is not wished a
 * happy anniversary once the office turned her late husband's off): the
 * spouse checked is the one the person is linked to, whether or not the join
 * above took them in.
 */
export function anniversaryPageQuery(day: CelebrationDay, afterId: string | undefined, limit: number): SqlQuery {
  return {
    sql: `SELECT p.id, p.first_name, p.last_name, p.email_enc, p.wedding_date,
        s.id AS spouse_id, s.first_name AS spouse_first_name, s.last_name AS spouse_last_name, s.email_enc AS spouse_email_enc,
        c.claimed_at, c.sent_at
      FROM people p
      LEFT JOIN people s ON s.id = p.spouse_id AND s.spouse_id = p.id
        AND (s.wedding_date IS NULL
          OR (s.wedding_month = p.wedding_month AND s.wedding_day = ANY(?::smallint[]) AND s.wedding_date < ?::date))
      LEFT JOIN celebration_claims c ON c.person_id = p.id AND c.kind = 'anniversary' AND c.year = ?
      WHERE p.wedding_date IS NOT NULL AND p.wedding_month = ? AND p.wedding_day = ANY(?::smallint[])
        AND p.wedding_date < ?::date
        AND (s.id IS NULL OR s.wedding_date IS NULL OR p.id < s.id)
        AND (p.email_enc IS NOT NULL OR s.email_enc IS NOT NULL)
        AND p.celebrations_off_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM people o WHERE o.id = p.spouse_id AND o.celebrations_off_at IS NOT NULL)
        AND p.id > ?::uuid
      ORDER BY p.id
      LIMIT ?`,
    bindings: [day.days, day.date, day.year, day.month, day.days, day.date, afterId ?? NIL_UUID, limit],
  };
}

async function selectRows<R>(db: Db, query: SqlQuery): Promise<R[]> {
  const result = await db.raw<{ rows: R[] }>(query.sql, query.bindings);
  return result.rows;
}

/** Keyset pages, so memory stays flat however many people celebrate on one day. */
export async function* celebrationPages<R extends { id: string }>(
  db: Db,
  pageQuery: (afterId: string | undefined, limit: number) => SqlQuery,
  pageSize: number,
): AsyncGenerator<R[]> {
  let afterId: string | undefined;
  for (;;) {
    const rows = await selectRows<R>(db, pageQuery(afterId, pageSize));
    if (rows.length > 0) yield rows;
    if (rows.length < pageSize) return;
    afterId = rows[rows.length - 1]?.id;
  }
}

/** Whether a claim row (read without locking) says the celebration is done or another run is sending it. */
export function isTakenElsewhere(state: ClaimState, staleBefore: Date): boolean {
  return state.sent_at !== null || (state.claimed_at !== null && state.claimed_at >= staleBefore);
}

/**
 * Claims a batch in one statement and returns the person ids this run now
 * holds. A new row is a claim; an existing one is taken over only when it was
 * never confirmed and is stale. Of several overlapping runs, each row comes
 * back to exactly one: the others wait on the row lock, then see a fresh claim.
 * Ids are claimed in sorted order so overlapping batches cannot deadlock.
 */
export async function claimCelebrations(
  db: Db,
  claim: { kind: CelebrationKind; year: number; personIds: string[]; now: Date },
): Promise<Set<string>> {
  if (claim.personIds.length === 0) return new Set();
  const staleBefore = new Date(claim.now.getTime() - STALE_CLAIM_MS);
  const result = await db.raw<{ rows: Array<{ person_id: string }> }>(
    `INSERT INTO celebration_claims (person_id, kind, year, claimed_at)
     SELECT u.person_id, ?::text, ?::int, ?::timestamptz
     FROM unnest(?::uuid[]) AS u(person_id)
     ORDER BY u.person_id
     ON CONFLICT (person_id, kind, year) DO UPDATE SET claimed_at = EXCLUDED.claimed_at
       WHERE celebration_claims.sent_at IS NULL AND celebration_claims.claimed_at < ?::timestamptz
     RETURNING person_id`,
    [claim.kind, claim.year, claim.now, [...new Set(claim.personIds)], staleBefore],
  );
  return new Set(result.rows.map((row) => row.person_id));
}

/** After the mail server accepted the messages (or may have): those celebrations are done for the year. */
export async function confirmCelebrations(
  db: Db,
  confirmation: { kind: CelebrationKind; year: number; personIds: string[]; sentAt: Date },
): Promise<void> {
  if (confirmation.personIds.length === 0) return;
  await db('celebration_claims')
    .where({ kind: confirmation.kind, year: confirmation.year })
    .whereIn('person_id', confirmation.personIds)
    .whereNull('sent_at')
    .update({ sent_at: confirmation.sentAt });
}

/**
 * After a send that certainly failed: removes our claim so a later run
 * retries. A claim another run has since taken over (different claimed_at)
 * is left to that run.
 */
export async function releaseCelebration(
  db: Db,
  key: { personId: string; kind: CelebrationKind; year: number },
  claimedAt: Date,
): Promise<void> {
  await db('celebration_claims')
    .where({ person_id: key.personId, kind: key.kind, year: key.year, claimed_at: claimedAt })
    .whereNull('sent_at')
    .delete();
}

/**
 * Renews this run's claims before each chunk of sends (as send-reminders does
 * for its event claims), so a slow mail server never lets them look stale to
 * an overlapping run. Returns the person ids still ours; a claim another run
 * has taken over (its claimed_at changed) or confirmed is left alone.
 */
export async function renewCelebrationClaims(
  db: Db,
  renewal: { kind: CelebrationKind; year: number; personIds: string[]; claimedAt: Date; now: Date },
): Promise<Set<string>> {
  if (renewal.personIds.length === 0) return new Set();
  const renewed = await db('celebration_claims')
    .where({ kind: renewal.kind, year: renewal.year, claimed_at: renewal.claimedAt })
    .whereIn('person_id', renewal.personIds)
    .whereNull('sent_at')
    .update({ claimed_at: renewal.now })
    .returning<Array<{ person_id: string }>>('person_id');
  return new Set(renewed.map((row) => row.person_id));
}
