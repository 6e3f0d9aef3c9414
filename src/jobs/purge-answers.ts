import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { payloadWithoutSensitiveAnswers } from '../payments/staged-answers-purge.js';
import type { Question } from '../registrations/answers.js';
import { SENSITIVE_PURGE_AT } from '../registrations/answers-retention.js';
import { recordHistoryEntries } from '../registrations/history.js';
import { paymentReference } from '../registrations/reference.js';
import { countForgettableContacts, FORGET_AFTER_DAYS, forgetStaleContacts } from './forget-contacts.js';
import { countForgettableMail, forgetSentMailBodies, SENT_MAIL_KEPT_DAYS } from './forget-sent-mail.js';
import { runRecordedJob } from './run-recorded.js';
import type { JobOptions, JobSummary } from './types.js';

export interface PurgeAnswersSummary extends JobSummary {
  job: 'purge-answers';
  /** Registrations whose sensitive answers were emptied (on a dry run: would be). */
  purged: number;
  /** Card checkouts whose staged payload had its sensitive answers taken out (on a dry run: would have). */
  checkoutsPurged: number;
  /** Waiting-list joins that lapsed unconfirmed, deleted FORGET_AFTER_DAYS after (on a dry run: would be). */
  lapsedJoinsForgotten: number;
  /** Closed contact-email changes, deleted FORGET_AFTER_DAYS after they closed (on a dry run: would be). */
  emailChangesForgotten: number;
  /** Sent mail whose body was emptied SENT_MAIL_KEPT_DAYS after it went, its subject kept (on a dry run: would be). */
  sentMailForgotten: number;
}

const PURGE_ACTOR = 'purge-answers';
/** Registrations emptied per statement (each with its history in the same transaction); a run repeats until none is left. */
export const PURGE_BATCH = 500;

/** Registrations holding sensitive answers whose event ended more than its sensitiveRetentionDays ago. */
const DUE = `r.event_id = e.id AND r.sensitive_answers_enc IS NOT NULL AND ${SENSITIVE_PURGE_AT} <= :now`;

/** Card checkouts of any status still holding a staged payload, not yet purged, whose event's answers are due. */
const CHECKOUT_DUE = `c.event_id = e.id AND c.payload_enc IS NOT NULL AND c.sensitive_purged_at IS NULL AND ${SENSITIVE_PURGE_AT} <= :now`;

interface PurgedRow {
  id: string;
  slug: string;
  retention_days: number;
}

/**
 * The weekly purge of sensitive answers (medical notes, allergies, dates of birth): each registration's
 * encrypted answers are emptied `sensitiveRetentionDays` days after its event ends (or starts, without an
 * end), whatever the registration's status or the event's, and a "sensitive answers purged" entry goes to
 * its history; its non-sensitive answers stay. A batch is claimed and emptied by one UPDATE … RETURNING,
 * so two runs at once (cron and the scheduler) never purge, or record, a registration twice, and a run
 * after a finished one finds nothing.
 *
 * The answers a card checkout staged go at the same time, whatever the checkout's status: a payment kept
 * without a registration (UNFULFILLED) keeps its payload for the office, and an expired one keeps it for
 * the provider's late word, so their sensitive answers are taken out of it and the rest kept
 * (staged-answers-purge.ts). A batch is locked (SKIP LOCKED) and rewritten in one transaction.
 */
export async function purgeSensitiveAnswers(ctx: AppContext, options: JobOptions): Promise<PurgeAnswersSummary> {
  return runRecordedJob<PurgeAnswersSummary>(ctx, 'purge-answers', options, async () => {
    const now = ctx.clock.now();
    const bindings = { now, tz: ctx.config.regional.timeZone };
    if (options.dryRun) {
      const { rows } = await ctx.db.raw<{ rows: PurgedRow[] }>(
        `SELECT r.id, e.slug, e.sensitive_retention_days AS retention_days FROM registrations r, events e WHERE ${DUE} ORDER BY e.slug, r.created_at`,
        bindings,
      );
      const checkouts = await ctx.db.raw<{ rows: PurgedRow[] }>(
        `SELECT c.id, e.slug, e.sensitive_retention_days AS retention_days FROM checkout_sessions c, events e WHERE ${CHECKOUT_DUE} ORDER BY e.slug, c.created_at`,
        bindings,
      );
      const forgettable = await countForgettableContacts(ctx.db, now);
      const sentMail = await countForgettableMail(ctx.db, now);
      return {
        job: 'purge-answers',
        outcome: 'ok',
        dryRun: true,
        purged: rows.length,
        checkoutsPurged: checkouts.rows.length,
        lapsedJoinsForgotten: forgettable.lapsedJoins,
        emailChangesForgotten: forgettable.emailChanges,
        sentMailForgotten: sentMail,
        wouldDo: [
          ...rows.map((row) => `purge the sensitive answers of ${paymentReference(row.id)} (${row.slug}, ${row.retention_days} days after the event ended)`),
          ...checkouts.rows.map((row) => `purge the sensitive answers staged with checkout ${row.id} (${row.slug}, ${row.retention_days} days after the event ended)`),
          ...(forgettable.lapsedJoins > 0 ? [`delete ${forgettable.lapsedJoins} waiting-list join(s) that lapsed unconfirmed over ${FORGET_AFTER_DAYS} days ago`] : []),
          ...(forgettable.emailChanges > 0 ? [`delete ${forgettable.emailChanges} contact-email change(s) closed over ${FORGET_AFTER_DAYS} days ago`] : []),
          ...(sentMail > 0 ? [`empty the body of ${sentMail} email(s) sent over ${SENT_MAIL_KEPT_DAYS} days ago, keeping the subject`] : []),
        ],
      };
    }
    let purged = 0;
    for (;;) {
      const batch = await ctx.db.transaction((trx) => purgeBatch(trx, bindings));
      purged += batch;
      options.onProgress?.({ purged });
      if (batch < PURGE_BATCH) break;
    }
    let checkoutsPurged = 0;
    for (;;) {
      const batch = await ctx.db.transaction((trx) => purgeCheckoutBatch(trx, ctx, bindings));
      checkoutsPurged += batch;
      options.onProgress?.({ purged, checkoutsPurged });
      if (batch < PURGE_BATCH) break;
    }
    if (purged > 0 || checkoutsPurged > 0) ctx.logger.info({ purged, checkoutsPurged }, 'sensitive answers purged');
    const forgotten = await forgetStaleContacts(ctx.db, now);
    if (forgotten.lapsedJoins > 0 || forgotten.emailChanges > 0) ctx.logger.info(forgotten, 'contact details no longer needed deleted');
    const sentMail = await forgetSentMailBodies(ctx, now);
    const sentMailForgotten = sentMail.emptied;
    if (sentMailForgotten > 0) ctx.logger.info({ sentMailForgotten }, 'bodies of mail sent long ago emptied');
    if (sentMail.unreadable > 0) ctx.logger.warn({ unreadable: sentMail.unreadable }, 'sent mail this server cannot read was left whole: run purge-answers where its older ENCRYPTION_KEY_Vn is set');
    return {
      job: 'purge-answers',
      outcome: 'ok',
      dryRun: false,
      purged,
      checkoutsPurged,
      lapsedJoinsForgotten: forgotten.lapsedJoins,
      emailChangesForgotten: forgotten.emailChanges,
      sentMailForgotten,
    };
  });
}

/** One batch: claimed and emptied in one statement, each with its history entry, in the caller's transaction. */
async function purgeBatch(trx: Knex.Transaction, bindings: { now: Date; tz: string }): Promise<number> {
  const { rows } = await trx.raw<{ rows: PurgedRow[] }>(
    `UPDATE registrations r
        SET sensitive_answers_enc = NULL, sensitive_purged_at = :now, updated_at = :now
       FROM events e
      WHERE r.id IN (SELECT r.id FROM registrations r, events e WHERE ${DUE} ORDER BY r.id LIMIT ${PURGE_BATCH} FOR UPDATE OF r SKIP LOCKED)
        AND ${DUE}
    RETURNING r.id, e.slug, e.sensitive_retention_days AS retention_days`,
    bindings,
  );
  await recordHistoryEntries(
    trx,
    rows.map((row) => ({
      registrationId: row.id,
      action: 'sensitive_purged' as const,
      changes: { retentionDays: row.retention_days },
      actor: PURGE_ACTOR,
      now: bindings.now,
    })),
  );
  return rows.length;
}

/**
 * One batch of checkouts: locked (SKIP LOCKED, so a run beside this one takes others), each payload rewritten
 * without its sensitive answers, and all written back and marked in one statement, in the caller's transaction.
 */
async function purgeCheckoutBatch(trx: Knex.Transaction, ctx: Pick<AppContext, 'cipher'>, bindings: { now: Date; tz: string }): Promise<number> {
  const { rows } = await trx.raw<{ rows: Array<{ id: string; payload_enc: string; questions: Question[] | null }> }>(
    `SELECT c.id, c.payload_enc, e.questions FROM checkout_sessions c, events e
      WHERE ${CHECKOUT_DUE} ORDER BY c.id LIMIT ${PURGE_BATCH} FOR UPDATE OF c SKIP LOCKED`,
    bindings,
  );
  if (rows.length === 0) return 0;
  const rewritten = rows.map((row) => ({ id: row.id, payload: payloadWithoutSensitiveAnswers(ctx.cipher, row.payload_enc, row.questions ?? []) }));
  await trx.raw(
    `UPDATE checkout_sessions c SET payload_enc = v.payload, sensitive_purged_at = :now, updated_at = :now
       FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS v(id uuid, payload text)
      WHERE c.id = v.id`,
    { now: bindings.now, rows: JSON.stringify(rewritten) },
  );
  return rows.length;
}
