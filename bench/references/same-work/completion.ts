import crypto from 'node:crypto';
import Stripe from 'stripe';
import { CHURCH_IDENTITY_KEYS, churchIdentityFrom } from '../../../src/mail/identity.js';
import { queuedMailRow, type QueuedMailInput } from '../../../src/mail/queue.js';
import { emailBrandingFrom } from '../../../src/mail/render.js';
import { renderReceiptWith } from '../../../src/payments/receipts.js';
import { decryptStagedRegistration } from '../../../src/payments/staging.js';
import type { Question } from '../../../src/registrations/answers.js';
import { registrationRow } from '../../../src/registrations/registrations.js';
import { parseSettings } from '../../../src/settings.js';
import { inTransaction, insertSql, type FloorContext } from './floor-context.js';

/**
 * The same-work floor of a paid checkout's completion (case 2, and case 9's card payments): what our
 * webhook does, in raw `pg`, in one transaction, without fastify, knex, pino or zod:
 * 1. verify the signature over the raw body (the `stripe` package, as ours);
 * 2. record the event id, take the payment's advisory lock, claim the staged checkout and read the
 *    event and the church's identity settings (one statement, as ours);
 * 3. decrypt the staged registration (the product's field cipher);
 * 4. render the receipt with the product's template, before the event lock (as ours);
 * 5. lock the event and count its places (registrations, open offers and the other checkouts' card holds;
 *    exclusive with a capacity; shared without, as ours) and read
 *    whether a reversal waits for this payment (same statement);
 * 6. check the amount and the places; insert the registration with its attendees and answers, scrub the
 *    payload and queue the receipt (one statement); commit; then send the receipt and mark it SENT.
 * A check that fails marks the checkout UNFULFILLED (ours also raises an operations alert).
 */

interface ClaimedRow {
  id: string;
  event_id: string;
  payload_enc: string | null;
  net_minor: number;
  surcharge_minor: number;
  title: string;
  starts_at: Date;
  capacity: number | null;
  questions: Question[] | null;
  identity: Record<string, unknown> | null;
}

interface CompletedSession {
  id: string;
  amount_total: number | null;
  currency: string | null;
  payment_intent: string | null;
  metadata?: Record<string, string>;
  client_reference_id?: string | null;
}

export type FloorOutcome = 'completed' | 'unfulfilled' | 'ignored';

/** Answers 400 for a bad signature, else the outcome (every one answered 200). */
export async function completeDelivery(ctx: FloorContext, rawBody: Buffer, signature: string): Promise<FloorOutcome | 'bad_signature'> {
  let event: Stripe.Event;
  try {
    event = Stripe.webhooks.constructEvent(rawBody, signature, ctx.webhookSecret);
  } catch {
    return 'bad_signature';
  }
  if (event.type !== 'checkout.session.completed') return 'ignored';
  const session = event.data.object as unknown as CompletedSession;
  const checkoutId = session.metadata?.eventops_checkout_id ?? session.client_reference_id ?? null;
  const paymentIntentId = session.payment_intent;
  if (!checkoutId || !paymentIntentId) return 'ignored';
  const now = new Date();
  let receipt: { id: number; mail: QueuedMailInput } | undefined;
  const outcome = await inTransaction(ctx.pool, async (client) => {
    const claim = await client.query<ClaimedRow>(
      `WITH recorded AS MATERIALIZED (
         INSERT INTO processed_webhook_events (event_id, type, processed_at) VALUES ($1, $2, $3)
         ON CONFLICT (event_id) DO NOTHING RETURNING event_id
       ), locked AS MATERIALIZED (
         SELECT pg_advisory_xact_lock(hashtextextended($4, 0)) FROM recorded
       ), claimed AS (
         UPDATE checkout_sessions c SET status = 'COMPLETED', completed_at = $3, payment_intent_id = $5, updated_at = $3
          WHERE c.id = $6 AND c.registration_id IS NULL AND c.status = 'OPEN' AND (SELECT count(*) FROM locked) = 1
          RETURNING c.id, c.event_id, c.payload_enc, c.net_minor, c.surcharge_minor
       )
       SELECT claimed.*, e.title, e.starts_at, e.capacity, e.questions,
              (SELECT json_object_agg(key, value) FROM app_settings WHERE key = ANY($7::text[])) AS identity
         FROM claimed JOIN events e ON e.id = claimed.event_id`,
      [event.id, event.type, now, `payment_intent:${paymentIntentId}`, paymentIntentId, checkoutId, CHURCH_IDENTITY_KEYS],
    );
    const claimed = claim.rows[0];
    if (!claimed?.payload_enc) return 'ignored' as const;
    const staged = decryptStagedRegistration(ctx.cipher, claimed.payload_enc);
    const registrationId = crypto.randomUUID();
    const branding = emailBrandingFrom(churchIdentityFrom(parseSettings(claimed.identity ?? {}), ctx.config), ctx.config);
    const mail = renderReceiptWith(branding, { config: ctx.config }, {
      registrationId,
      contact: { name: staged.contact.name, email: staged.contact.email },
      event: { title: claimed.title, startsAt: claimed.starts_at },
      lines: staged.priced.lines,
      amountMinor: session.amount_total ?? 0,
      paymentIntentId,
      paidAt: now,
    });

    const limited = claimed.capacity !== null;
    const lock = await client.query<{ capacity: number | null; taken: string; pending_reversal: boolean }>(
      `SELECT capacity, EXISTS (SELECT 1 FROM pending_reversals WHERE payment_intent_id = $2) AS pending_reversal, 0 AS taken
         FROM events WHERE id = $1 ${limited ? 'FOR UPDATE' : 'FOR SHARE'}`,
      [claimed.event_id, paymentIntentId],
    );
    const locked = lock.rows[0];
    let left: number | null = null;
    if (locked && limited) {
      // Counted after the lock, in its own statement: one statement's snapshot would predate the wait.
      const seats = await client.query<{ taken: string }>(
        `SELECT (SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE event_id = $1 AND status IN ('PENDING','PAID'))
              + (SELECT COALESCE(sum(places), 0) FROM waitlist_entries WHERE event_id = $1 AND state = 'OFFERED')
              + (SELECT COALESCE(sum(c.places), 0) FROM checkout_sessions c
                  WHERE c.event_id = $1 AND c.places > 0 AND c.status = 'OPEN' AND c.expires_at > $2) AS taken`,
        [claimed.event_id, now],
      );
      left = (locked.capacity ?? 0) - Number(seats.rows[0]?.taken ?? 0);
    }
    const expected = claimed.net_minor + claimed.surcharge_minor;
    const currency = ctx.config.regional.currency.toLowerCase();
    const fits = left === null || staged.attendees.length <= left;
    if (!locked || session.amount_total !== expected || staged.priced.total !== expected || (session.currency ?? currency) !== currency || !fits) {
      await client.query(`UPDATE checkout_sessions SET status = 'UNFULFILLED', unfulfilled_reason = $2, updated_at = $3 WHERE id = $1`, [
        claimed.id,
        fits ? 'amount_mismatch' : 'sold_out',
        now,
      ]);
      return 'unfulfilled' as const;
    }

    const row = registrationRow(ctx.cipher, {
      id: registrationId,
      eventId: claimed.event_id,
      status: 'PAID',
      method: 'card',
      contact: staged.contact,
      attendees: staged.attendees,
      family: staged.family,
      priced: staged.priced,
      paymentIntentId,
      answers: staged.answers ? { questions: claimed.questions ?? [], values: staged.answers } : undefined,
      now,
    });
    const registration = insertSql('registrations', row, 3);
    const queued = locked.pending_reversal ? undefined : queuedMailRow(ctx.cipher, mail, now);
    const queue = queued ? insertSql('queued_mail', queued, 3 + registration.values.length) : undefined;
    const written = await client.query<{ id: number }>(
      `WITH registration AS (${registration.sql}),
            scrub AS (UPDATE checkout_sessions SET payload_enc = NULL, registration_id = $2 WHERE id = $1)
       ${queue ? `${queue.sql} RETURNING id` : 'SELECT NULL::bigint AS id'}`,
      [claimed.id, registrationId, ...registration.values, ...(queue?.values ?? [])],
    );
    const id = written.rows[0]?.id;
    if (queue && id !== undefined && id !== null) receipt = { id: Number(id), mail };
    return 'completed' as const;
  });
  if (receipt) ctx.sendQueued(receipt.id, receipt.mail);
  return outcome;
}
