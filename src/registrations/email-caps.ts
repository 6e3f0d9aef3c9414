import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { mailboxKey } from '../canonical-mailbox.js';
import { countRateLimitHit, rateLimitHitSql } from '../db/rate-limits.js';

/**
 * Emails the public forms send go to whatever address is typed, so each mailbox gets at most this many
 * an hour (counted in PostgreSQL under the lookup hash of its canonicalMailbox: victim+1@… and victim+2@…
 * are one), and each client at most CONFIRMATION_EMAILS_PER_CLIENT_PER_HOUR (clientKey). Registration
 * confirmations and waiting-list join emails share the two counts: one budget per mailbox and client.
 */
export const CONFIRMATIONS_PER_ADDRESS_PER_HOUR = 3;
const HOUR_MS = 60 * 60_000;

/**
 * Counts one email for the client, then (unless the client is over its cap) for the mailbox, and says whether
 * either is over. In the caller's transaction: a form post that rolls back uses up nothing. The client is
 * counted first, so a client over its cap does not use up its victims' mailbox limit as well.
 */
export async function overHourlyEmailCaps(
  trx: Knex.Transaction,
  ctx: Pick<AppContext, 'config' | 'cipher'>,
  counted: { mailbox: string; client?: string },
  now: Date,
): Promise<boolean> {
  if (counted.client !== undefined) {
    const fromClient = await countRateLimitHit(trx, { bucket: 'confirmation-email-client', key: counted.client, windowMs: HOUR_MS, now });
    if (fromClient.hits > ctx.config.limits.confirmationEmailsPerClientPerHour) return true;
  }
  const toMailbox = await countRateLimitHit(trx, { bucket: 'confirmation-email', key: mailboxKey(ctx.cipher, counted.mailbox), windowMs: HOUR_MS, now });
  return toMailbox.hits > CONFIRMATIONS_PER_ADDRESS_PER_HOUR;
}

/**
 * overHourlyEmailCaps as CTEs of the statement that queues the email (`client_hit`, then `mailbox_hit`, counted only
 * when the client is within its cap, as above), and the condition under which the email is queued: one statement
 * instead of two while the event's lock is held. SQL with `?` placeholders; the bindings in order.
 */
export function hourlyEmailCapsSql(
  ctx: Pick<AppContext, 'config' | 'cipher'>,
  counted: { mailbox: string; client?: string },
  now: Date,
): { ctes: string; bindings: Knex.RawBinding[]; within: string } {
  const windowEndsAt = new Date(now.getTime() + HOUR_MS);
  const clientWithin = `(SELECT hits FROM client_hit) <= ${Number(ctx.config.limits.confirmationEmailsPerClientPerHour)}`;
  const client = counted.client === undefined ? undefined : rateLimitHitSql({ bucket: 'confirmation-email-client', key: counted.client, windowEndsAt, now });
  const mailbox = rateLimitHitSql({
    bucket: 'confirmation-email',
    key: mailboxKey(ctx.cipher, counted.mailbox),
    windowEndsAt,
    now,
    ...(client ? { onlyIf: clientWithin } : {}),
  });
  const ctes = [...(client ? [`client_hit AS (${client.sql})`] : []), `mailbox_hit AS (${mailbox.sql})`];
  const within = [...(client ? [clientWithin] : []), `(SELECT hits FROM mailbox_hit) <= ${CONFIRMATIONS_PER_ADDRESS_PER_HOUR}`];
  return { ctes: ctes.join(',\n'), bindings: [...(client?.bindings ?? []), ...mailbox.bindings], within: within.join(' AND ') };
}
