import { churchIdentityFrom } from '../../../src/mail/identity.js';
import { queuedMailRow } from '../../../src/mail/queue.js';
import { emailBrandingFrom } from '../../../src/mail/render.js';
import { eventFromRow, type EventRow } from '../../../src/registrations/event-record.js';
import { claimUrl, leaveUrl } from '../../../src/registrations/waitlist/links.js';
import { offerEmail } from '../../../src/registrations/waitlist/mail.js';
import { planOffers, type QueuedEntry } from '../../../src/registrations/waitlist/plan.js';
import { parseSettings } from '../../../src/settings.js';
import { inTransaction, insertSql, type FloorContext } from './floor-context.js';

/** serve's offer pass interval (WAITLIST_PASS_MS). */
const OFFER_PASS_MS = 30_000;

const IDENTITY_KEYS = ['church.name', 'church.address', 'church.abn', 'church.website'];

/**
 * The floor's offer pass, as ours runs it every 30 s (src/registrations/waitlist/offers.ts) without history
 * rows: every event with someone on its list, under its lock, expires the offers past their time and offers
 * the free places in order (the product's planOffers), each offer's email rendered with the product's
 * template and queued in the same transaction; unconfirmed entries a day old lapse.
 */
export function startOfferPass(ctx: FloorContext): { stop(): Promise<void> } {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= offerPass(ctx)
      .catch((error: unknown) => void process.stderr.write(`floor: offer pass: ${String(error)}\n`))
      .finally(() => (running = undefined));
  }, OFFER_PASS_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

async function offerPass(ctx: FloorContext): Promise<void> {
  const events = await ctx.pool.query<{ event_id: string }>(`SELECT DISTINCT event_id FROM waitlist_entries WHERE state IN ('WAITING','OFFERED') ORDER BY event_id`);
  const sends: Array<() => void> = [];
  for (const { event_id: eventId } of events.rows) {
    await inTransaction(ctx.pool, async (client) => {
      const now = new Date();
      const locked = await client.query<EventRow>('SELECT * FROM events WHERE id = $1 FOR UPDATE', [eventId]);
      if (!locked.rows[0]) return;
      const event = eventFromRow(locked.rows[0]);
      await client.query(`UPDATE waitlist_entries SET state = 'EXPIRED', updated_at = $2 WHERE event_id = $1 AND state = 'OFFERED' AND offer_expires_at <= $2`, [eventId, now]);
      if (!event.waitingList.enabled || !event.published || event.deletedAt || event.startsAt.getTime() <= now.getTime() || event.capacity === null) return;
      const counted = await client.query<{ taken: string; queue: QueuedEntry[]; identity: Record<string, unknown> | null }>(
        `SELECT (SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE event_id = $1 AND status IN ('PENDING','PAID'))
              + (SELECT COALESCE(sum(places), 0) FROM waitlist_entries WHERE event_id = $1 AND state = 'OFFERED')
              + (SELECT COALESCE(sum(c.places), 0) FROM checkout_sessions c WHERE c.event_id = $1 AND c.places > 0 AND c.status = 'OPEN' AND c.expires_at > $2) AS taken,
                (SELECT COALESCE(json_agg(json_build_object('id', id, 'places', places, 'skips', skips, 'tier', tier) ORDER BY position), '[]'::json)
                   FROM waitlist_entries WHERE event_id = $1 AND state = 'WAITING') AS queue,
                (SELECT json_object_agg(key, value) FROM app_settings WHERE key = ANY($3::text[])) AS identity`,
        [eventId, now, IDENTITY_KEYS],
      );
      const row = counted.rows[0];
      if (!row) return;
      const free = event.capacity - Number(row.taken);
      if (free <= 0) return;
      const branding = emailBrandingFrom(churchIdentityFrom(parseSettings(row.identity ?? {}), ctx.config), ctx.config);
      const expiresAt = new Date(Math.min(now.getTime() + event.waitingList.offerHours * 3600_000, event.startsAt.getTime()));
      for (const step of planOffers(free, row.queue).steps) {
        for (const skipped of step.passedOver) await client.query('UPDATE waitlist_entries SET skips = skips + 1, updated_at = $2 WHERE id = $1', [skipped.id, now]);
        const offered = await client.query<{ id: string; offer_seq: number; places: number; name_enc: string; email_enc: string }>(
          `UPDATE waitlist_entries SET state = 'OFFERED', offer_seq = offer_seq + 1, offered_at = $2, offer_expires_at = $3, updated_at = $2
            WHERE id = $1 AND state = 'WAITING' RETURNING id, offer_seq, places, name_enc, email_enc`,
          [step.offer.id, now, expiresAt],
        );
        const entry = offered.rows[0];
        if (!entry) continue;
        const email = ctx.cipher.decrypt(entry.email_enc);
        const rendered = offerEmail(
          {
            name: ctx.cipher.decrypt(entry.name_enc),
            eventTitle: event.title,
            eventStartsAt: event.startsAt,
            places: entry.places,
            severalPlaces: entry.places > 1,
            expiresAt,
            claimUrl: claimUrl(ctx.config, event.slug, { entryId: entry.id, offerSeq: entry.offer_seq }),
            leaveUrl: leaveUrl(ctx.config, entry.id),
          },
          branding,
        );
        const message = { kind: 'waitlist-offer', message: { to: [email], ...rendered, idempotencyKey: `waitlist-offer-${entry.id}-${entry.offer_seq}` } };
        const queue = insertSql('queued_mail', queuedMailRow(ctx.cipher, message, now));
        const queued = await client.query<{ id: string }>(`${queue.sql} RETURNING id`, queue.values);
        sends.push(() => ctx.sendQueued(Number(queued.rows[0]?.id), message));
      }
    });
  }
  await ctx.pool.query(`UPDATE waitlist_entries SET state = 'LAPSED', updated_at = $1 WHERE state = 'UNCONFIRMED' AND created_at <= $1::timestamptz - interval '24 hours'`, [new Date()]);
  for (const send of sends) send();
}
