import type { Knex } from 'knex';
import type { AppContext } from '../context.js';

/**
 * How long a sent message keeps its body: long enough for the office to look into "did my receipt go?", after
 * which the family has the email itself. Until then the body is what the delivery needed (and, for the dev outbox,
 * what was written); afterwards it is names, addresses, answers and private links a database dump need not hold.
 */
export const SENT_MAIL_KEPT_DAYS = 30;

/** Emptied per transaction; a run repeats until none is left. */
export const SENT_MAIL_BATCH = 500;

/** Sent, or given up on, SENT_MAIL_KEPT_DAYS ago or more, and not emptied yet. PENDING mail is never touched. */
const DUE = `status <> 'PENDING' AND body_forgotten_at IS NULL AND COALESCE(sent_at, created_at) <= :before`;

const cutoff = (now: Date): Date => new Date(now.getTime() - SENT_MAIL_KEPT_DAYS * 86_400_000);

/** How many messages a run at `now` would empty (the dry run). */
export async function countForgettableMail(db: Knex, now: Date): Promise<number> {
  const { rows } = await db.raw<{ rows: Array<{ n: number }> }>(`SELECT count(*)::int AS n FROM queued_mail WHERE ${DUE}`, { before: cutoff(now) });
  return rows[0]?.n ?? 0;
}

/**
 * Empties the bodies of the messages due, a batch per transaction: each is locked (SKIP LOCKED, so a run beside
 * this one takes others), rewritten to its subject alone (still encrypted: `registrations show` lists it) and
 * marked. A message this server cannot read (a key it lacks) is left whole for a run that can, rather than
 * losing its subject; the count of those is returned beside the count emptied.
 */
export async function forgetSentMailBodies(ctx: Pick<AppContext, 'db' | 'cipher'>, now: Date): Promise<{ emptied: number; unreadable: number }> {
  const total = { emptied: 0, unreadable: 0 };
  let after = '0';
  for (;;) {
    const batch = await ctx.db.transaction((trx) => forgetBatch(trx, ctx.cipher, now, after));
    total.emptied += batch.emptied;
    total.unreadable += batch.unreadable;
    if (batch.last === undefined) return total;
    after = batch.last;
  }
}

async function forgetBatch(
  trx: Knex.Transaction,
  cipher: AppContext['cipher'],
  now: Date,
  after: string,
): Promise<{ emptied: number; unreadable: number; last?: string }> {
  const { rows } = await trx.raw<{ rows: Array<{ id: string; message_enc: string }> }>(
    `SELECT id, message_enc FROM queued_mail WHERE ${DUE} AND id > :after ORDER BY id LIMIT ${SENT_MAIL_BATCH} FOR UPDATE SKIP LOCKED`,
    { before: cutoff(now), after },
  );
  const rewritten = rows.flatMap((row) => {
    const subject = subjectOf(cipher, row.message_enc);
    return subject === undefined ? [] : [{ id: row.id, message: cipher.encrypt(JSON.stringify(subject === null ? {} : { subject })) }];
  });
  if (rewritten.length > 0) {
    await trx.raw(
      `UPDATE queued_mail q SET message_enc = v.message, body_forgotten_at = :now
         FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS v(id bigint, message text)
        WHERE q.id = v.id`,
      { now, rows: JSON.stringify(rewritten) },
    );
  }
  const last = rows.length === SENT_MAIL_BATCH ? rows[rows.length - 1]?.id : undefined;
  return { emptied: rewritten.length, unreadable: rows.length - rewritten.length, ...(last !== undefined ? { last: String(last) } : {}) };
}

/** The message's subject; null when it has none; undefined when it cannot be read here. */
function subjectOf(cipher: AppContext['cipher'], messageEnc: string): string | null | undefined {
  let plain: string;
  try {
    plain = cipher.decrypt(messageEnc);
  } catch {
    return undefined;
  }
  try {
    const { subject } = JSON.parse(plain) as { subject?: unknown };
    return typeof subject === 'string' ? subject : null;
  } catch {
    return null;
  }
}
