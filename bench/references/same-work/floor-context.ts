import nodemailer from 'nodemailer';
import pg from 'pg';
import { loadConfig } from '../../../src/config/index.js';
import type { AppConfig } from '../../../src/config/types.js';
import { createFieldCipher, type FieldCipher } from '../../../src/crypto/field-cipher.js';
import type { QueuedMailInput } from '../../../src/mail/queue.js';
import { noDelayConnection } from '../tuned-socket.js';

/**
 * What the same-work floors share: a raw `pg` pool of ours' size, the product's configuration and
 * field cipher (the same keys and algorithm), and a pooled SMTP transport of the product's size with
 * Nagle off. No framework, no query builder, no logger, no schema validation per request.
 */
export interface FloorContext {
  pool: pg.Pool;
  config: AppConfig;
  cipher: FieldCipher;
  webhookSecret: string;
  /** Sends a committed queue row's message and marks the row SENT: what our delivery loop does after a commit. */
  sendQueued(id: number, mail: QueuedMailInput): void;
  close(): Promise<void>;
}

export function startFloorContext(env: NodeJS.ProcessEnv): FloorContext {
  const { config } = loadConfig(env as Record<string, string>, { cwd: process.cwd() });
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 10 });
  const transport = nodemailer.createTransport({
    pool: true,
    maxConnections: 3,
    host: env.SMTP_HOST,
    port: Number(env.SMTP_PORT),
    secure: false,
    auth: { user: env.SMTP_USER as string, pass: env.SMTP_APP_PASSWORD as string },
    getSocket: noDelayConnection,
  });
  const from = env.MAIL_FROM ?? 'events@example.org';
  const sent: number[] = [];
  let marking: Promise<void> | undefined;
  // Sent rows are marked SENT a batch to a statement, as ours does (25 at a time).
  const markSent = () => {
    if (marking || sent.length === 0) return;
    const ids = sent.splice(0, 25);
    marking = pool
      .query(`UPDATE queued_mail SET status = 'SENT', sent_at = now() WHERE id = ANY($1::bigint[]) AND status = 'PENDING'`, [ids])
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        marking = undefined;
        markSent();
      });
  };
  return {
    pool,
    config,
    cipher: createFieldCipher(config.keyring),
    webhookSecret: env.PSP_WEBHOOK_SECRET as string,
    sendQueued(id, mail) {
      const { message } = mail;
      transport
        .sendMail({
          from: message.fromName ? { name: message.fromName, address: from } : from,
          to: message.to,
          cc: message.cc,
          replyTo: message.replyTo,
          subject: message.subject,
          html: message.html,
          text: message.text,
          attachments: message.attachments?.map((a) => ({ filename: a.filename, contentType: a.contentType, content: Buffer.from(a.content) })),
        })
        .then(
          () => {
            sent.push(id);
            markSent();
          },
          (error: unknown) => process.stderr.write(`floor: send failed: ${String(error)}\n`),
        );
    },
    async close() {
      transport.close();
      await pool.end();
    },
  };
}

/** `INSERT INTO table (cols) VALUES ($n, …)` for one row object, numbering placeholders from `first`. */
export function insertSql(table: string, row: Record<string, unknown>, first = 1): { sql: string; values: unknown[] } {
  const columns = Object.keys(row);
  const placeholders = columns.map((_, i) => `$${first + i}`);
  return { sql: `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${placeholders.join(', ')})`, values: Object.values(row) };
}

/** Runs `work` in one transaction on one pooled connection. */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}
