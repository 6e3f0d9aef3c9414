import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { z } from 'zod';
import type { AppContext } from '../context.js';
import { UnknownKeyVersionError, type FieldCipher } from '../crypto/field-cipher.js';
import type { Db } from '../db/connect.js';
import { errorMessage } from '../errors.js';
import { MailSendError, type Mailer, type MailMessage } from './types.js';

/**
 * Mail that must not be lost with the request that caused it (receipts and
 * alerts from a webhook) is written in the caller's transaction and delivered
 * afterwards by deliverQueuedMail, with retries. Delivery is at least once: a
 * send whose outcome is unknown (ambiguous) is retried, because a duplicate
 * receipt does less harm than a missing one.
 */

export const QUEUED_MAIL_MAX_ATTEMPTS = 10;
const CLAIM_MS = 5 * 60_000;
/**
 * No send starts later than this before the claim runs out: room for one send's connection,
 * greeting and socket timeouts (30 s each) and the SENT mark, so no row is still being sent
 * when another run may claim it. What a slow server left unsent is handed back.
 */
const SEND_MARGIN_MS = 2 * 60_000;
const MAX_BACKOFF_MS = 60 * 60_000;
const SEND_CONCURRENCY = 3;
/** Sent messages marked SENT per statement. */
const SENT_BATCH = 25;

const storedMessageSchema = z.object({
  to: z.array(z.string()).min(1),
  cc: z.array(z.string()).optional(),
  replyTo: z.string().optional(),
  subject: z.string(),
  html: z.string(),
  text: z.string(),
  fromName: z.string().optional(),
  idempotencyKey: z.string(),
  attachments: z
    .array(z.object({ filename: z.string(), contentType: z.string(), contentBase64: z.string() }))
    .optional(),
});
type StoredMessage = z.infer<typeof storedMessageSchema>;

export interface QueuedMailInput {
  /** What the mail is (e.g. "receipt", "operations-alert"), for logs and counts; never an address. */
  kind: string;
  message: MailMessage;
  /** The registration the mail is about, so the office can see what was sent to it. */
  registrationId?: string;
}

/** Stores the whole message, recipients included, encrypted. Returns the queued mail id. */
export async function enqueueMail(db: Db | Knex.Transaction, cipher: FieldCipher, input: QueuedMailInput, now: Date): Promise<number> {
  const [row] = await db('queued_mail').insert(queuedMailRow(cipher, input, now)).returning<Array<{ id: number }>>('id');
  if (!row) throw new Error('queued_mail insert returned no row');
  return row.id;
}

/** The queued_mail row for a message, for an insert of the caller's (e.g. one statement with the writes it belongs to). */
export function queuedMailRow(cipher: FieldCipher, input: QueuedMailInput, now: Date): Record<string, unknown> {
  const { message } = input;
  const stored: StoredMessage = {
    to: message.to,
    cc: message.cc,
    replyTo: message.replyTo,
    subject: message.subject,
    html: message.html,
    text: message.text,
    fromName: message.fromName,
    // Fixed now so every retry of this message carries the same key.
    idempotencyKey: message.idempotencyKey ?? crypto.randomUUID(),
    attachments: message.attachments?.map((a) => ({
      filename: a.filename,
      contentType: a.contentType,
      contentBase64: Buffer.from(a.content).toString('base64'),
    })),
  };
  return {
    kind: input.kind,
    message_enc: cipher.encrypt(JSON.stringify(stored)),
    registration_id: input.registrationId ?? null,
    next_attempt_at: now,
    created_at: now,
  };
}

export interface DeliverQueuedMailResult {
  sent: number;
  retried: number;
  failed: number;
}

interface ClaimedRow {
  id: number;
  kind: string;
  message_enc: string;
  attempts: number;
  claimed_until: Date;
}

type DeliveryContext = Pick<AppContext, 'db' | 'clock' | 'cipher' | 'logger' | 'mailer'>;

/**
 * Sends due queued mail; safe to run concurrently (each row is claimed by one run).
 * If a retry or FAILED cannot be recorded, that row stays claimed (tried again once its
 * claim expires), no further send starts, the sends under way finish and are marked SENT,
 * what was not reached is handed back, and only then does the run reject.
 */
export async function deliverQueuedMail(ctx: DeliveryContext, options: { limit?: number } = {}): Promise<DeliverQueuedMailResult> {
  const limit = options.limit ?? 20;
  const mailer = await ctx.mailer();
  // The claim runs out by the database's clock, the one every server shares; this server only counts
  // down from the moment it asked, so a server whose clock is off never sends into another's claim.
  const claimedAt = ctx.clock.now().getTime();
  const rows = await claimDue(ctx.db, ctx.clock.now(), limit);
  const sendBefore = claimedAt + CLAIM_MS - SEND_MARGIN_MS;
  const result: DeliverQueuedMailResult = { sent: 0, retried: 0, failed: 0 };
  const sent = new SentRecorder(ctx.db);
  let next = 0;
  /** The first retry or FAILED that could not be recorded: no send starts after it. */
  let unrecorded: { id: number; error: unknown } | undefined;
  const worker = async () => {
    while (unrecorded === undefined && next < rows.length && ctx.clock.now().getTime() < sendBefore) {
      const row = rows[next++] as ClaimedRow;
      try {
        result[await deliverOne(ctx, mailer, sent, row)] += 1;
      } catch (error) {
        // The row stays claimed and is tried again once its claim expires, like a failed SENT mark.
        // The other workers finish the sends they started, so their SENT marks are written below.
        ctx.logger.error(
          { queuedMailId: row.id, kind: row.kind, attempts: row.attempts, err: errorMessage(error) },
          'the outcome of a queued mail could not be recorded; it is tried again once its claim expires',
        );
        unrecorded ??= { id: row.id, error };
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(SEND_CONCURRENCY, rows.length) }, worker));
  } finally {
    await sent.flush().catch((error: unknown) =>
      ctx.logger.error({ err: errorMessage(error) }, 'sent mail could not be marked SENT; it is sent again once its claim expires'),
    );
  }
  const unsent = rows.slice(next);
  if (unsent.length > 0) {
    await releaseClaims(ctx.db, unsent);
    if (unrecorded) ctx.logger.warn({ handedBack: unsent.length }, 'queued mail delivery stopped early: unsent mail handed back');
    else ctx.logger.warn({ handedBack: unsent.length }, 'the mail server is slow: unsent mail handed back before its claim ran out');
  }
  // Reported once the run's bookkeeping is settled: sent mail marked, unsent mail handed back.
  if (unrecorded) {
    throw new Error(`queued mail delivery stopped: the outcome of queued mail ${unrecorded.id} could not be recorded (${safeError(unrecorded.error)})`, {
      cause: unrecorded.error,
    });
  }
  return result;
}

/** Unsent rows this run still holds (its claim, to the microsecond) go back to the queue, their attempt not counted. */
async function releaseClaims(db: Db, rows: ClaimedRow[]): Promise<void> {
  await db.raw(
    `UPDATE queued_mail q SET claimed_until = NULL, attempts = attempts - 1
       FROM unnest(?::bigint[], ?::timestamptz[]) AS held(id, until)
      WHERE q.id = held.id AND q.status = 'PENDING' AND q.claimed_until = held.until`,
    [rows.map((row) => row.id), rows.map((row) => row.claimed_until)],
  );
}

/**
 * Marks sent mail SENT a batch at a time (one UPDATE instead of one per
 * message), each with its own sent_at. A message sent but not yet marked is
 * still claimed, so no other run takes it; if this process dies first, the
 * claim expires and it is sent again, which at-least-once delivery allows.
 */
class SentRecorder {
  private ids: number[] = [];
  private times: Date[] = [];
  private writing: Promise<void> = Promise.resolve();

  constructor(private readonly db: Db) {}

  add(id: number, sentAt: Date): Promise<void> {
    this.ids.push(id);
    this.times.push(sentAt);
    return this.ids.length >= SENT_BATCH ? this.flush() : Promise.resolve();
  }

  flush(): Promise<void> {
    const ids = this.ids;
    const times = this.times;
    this.ids = [];
    this.times = [];
    // A failed write fails only its own batch: later batches are still written.
    if (ids.length > 0) this.writing = this.writing.catch(() => undefined).then(() => markSent(this.db, ids, times));
    return this.writing;
  }
}

async function markSent(db: Db, ids: number[], times: Date[]): Promise<void> {
  await db.raw(
    `UPDATE queued_mail q SET status = 'SENT', sent_at = sent.at, claimed_until = NULL, last_error = NULL
       FROM unnest(?::bigint[], ?::timestamptz[]) AS sent(id, at)
      WHERE q.id = sent.id AND q.status = 'PENDING'`,
    [ids, times],
  );
}

export async function countPendingMail(db: Db): Promise<number> {
  const row = await db('queued_mail').where({ status: 'PENDING' }).count<{ count: number }>({ count: '*' }).first();
  return Number(row?.count ?? 0);
}

/**
 * Due rows (by this server's clock, like the backoff that set them) that no live claim holds. Claims
 * are taken and judged by the database's now(), so two servers whose clocks disagree still agree on
 * whose claim has run out (to the millisecond, as a JavaScript Date carries it back to releaseClaims).
 */
async function claimDue(db: Db, now: Date, limit: number): Promise<ClaimedRow[]> {
  const result = await db.raw<{ rows: ClaimedRow[] }>(
    `UPDATE queued_mail SET claimed_until = date_trunc('milliseconds', now() + make_interval(secs => ?)), attempts = attempts + 1
      WHERE id IN (
        SELECT id FROM queued_mail
         WHERE status = 'PENDING' AND next_attempt_at <= ? AND (claimed_until IS NULL OR claimed_until < now())
         ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED)
      RETURNING id, kind, message_enc, attempts, claimed_until`,
    [CLAIM_MS / 1000, now, limit],
  );
  return result.rows.sort((a, b) => a.id - b.id);
}

async function deliverOne(ctx: DeliveryContext, mailer: Mailer, sentMail: SentRecorder, row: ClaimedRow): Promise<keyof DeliverQueuedMailResult> {
  const log = { queuedMailId: row.id, kind: row.kind, attempts: row.attempts };
  let message: MailMessage;
  try {
    message = decodeMessage(ctx.cipher.decrypt(row.message_enc));
  } catch (error) {
    if (error instanceof UnknownKeyVersionError) return keyMissing(ctx, row, error.version);
    ctx.logger.error({ ...log, err: errorMessage(error) }, 'queued mail is unreadable; marked FAILED');
    await finish(ctx.db, row.id, { status: 'FAILED', last_error: `unreadable: ${safeError(error)}`, claimed_until: null });
    return 'failed';
  }
  try {
    const sent = await mailer.send(message);
    if (sent.rejected.length > 0) ctx.logger.warn({ ...log, rejectedCount: sent.rejected.length }, 'queued mail sent; some recipients refused');
  } catch (error) {
    const lastError = safeError(error);
    const permanent = error instanceof MailSendError && error.permanent;
    if (permanent || row.attempts >= QUEUED_MAIL_MAX_ATTEMPTS) {
      ctx.logger.error({ ...log, error: lastError }, 'queued mail could not be delivered; marked FAILED');
      await finish(ctx.db, row.id, { status: 'FAILED', last_error: lastError, claimed_until: null });
      return 'failed';
    }
    const nextAttemptAt = new Date(ctx.clock.now().getTime() + backoffMs(row.attempts));
    ctx.logger.warn({ ...log, error: lastError, nextAttemptAt }, 'queued mail not delivered; will retry');
    await finish(ctx.db, row.id, { last_error: lastError, next_attempt_at: nextAttemptAt, claimed_until: null });
    return 'retried';
  }
  // The message went out; a batch mark that fails leaves it claimed, to be sent again once the claim expires.
  await sentMail.add(row.id, ctx.clock.now()).catch((error: unknown) =>
    ctx.logger.error({ ...log, err: errorMessage(error) }, 'sent mail could not be marked SENT; it is sent again once its claim expires'),
  );
  return 'sent';
}

/**
 * Mail written under a key version this process lacks was queued by a process that already has
 * the next key (during a rotation, before this one was restarted): the mail is sound, so it waits
 * with the usual backoff for a process that can read it. The attempt counts, so a server left
 * running with the old keys does not hold it for ever: after the usual attempts it is FAILED,
 * its last_error naming the missing key.
 */
async function keyMissing(ctx: DeliveryContext, row: ClaimedRow, version: string): Promise<keyof DeliverQueuedMailResult> {
  const log = { queuedMailId: row.id, kind: row.kind, attempts: row.attempts, keyVersion: version };
  const variable = `ENCRYPTION_KEY_${version.toUpperCase()}`;
  const lastError = `encrypted with key ${version}, which this server does not have: restart it with ${variable} set`;
  if (row.attempts >= QUEUED_MAIL_MAX_ATTEMPTS) {
    ctx.logger.error(log, `queued mail is encrypted with key ${version}, which this server still lacks; marked FAILED. Restart every server with ${variable} set`);
    await finish(ctx.db, row.id, { status: 'FAILED', last_error: lastError, claimed_until: null });
    return 'failed';
  }
  const nextAttemptAt = new Date(ctx.clock.now().getTime() + backoffMs(row.attempts));
  ctx.logger.warn(
    { ...log, nextAttemptAt },
    `queued mail is encrypted with key ${version}, which this server does not have; kept for retry. Restart this server with ${variable} set`,
  );
  await finish(ctx.db, row.id, { last_error: lastError, next_attempt_at: nextAttemptAt, claimed_until: null });
  return 'retried';
}

/** 1, 2, 4 … minutes after the nth failed attempt, at most an hour. */
export function backoffMs(attempts: number): number {
  return Math.min(60_000 * 2 ** Math.max(0, attempts - 1), MAX_BACKOFF_MS);
}

async function finish(db: Db, id: number, changes: Record<string, unknown>): Promise<void> {
  await db('queued_mail').where({ id, status: 'PENDING' }).update(changes);
}

function decodeMessage(json: string): MailMessage {
  const stored = storedMessageSchema.parse(JSON.parse(json));
  return {
    to: stored.to,
    cc: stored.cc,
    replyTo: stored.replyTo,
    subject: stored.subject,
    html: stored.html,
    text: stored.text,
    fromName: stored.fromName,
    idempotencyKey: stored.idempotencyKey,
    attachments: stored.attachments?.map((a) => ({
      filename: a.filename,
      contentType: a.contentType,
      content: Buffer.from(a.contentBase64, 'base64'),
    })),
  };
}

const ADDRESS = /[^\s<>()[\]"',;:@]+@[^\s<>()[\]"',;:@]+/g;

/** An error message fit to store next to encrypted mail: addresses removed, length bounded. */
export function safeError(error: unknown): string {
  return errorMessage(error).replace(ADDRESS, '[address]').slice(0, 500);
}
