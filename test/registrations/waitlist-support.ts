import { getEventBySlug } from '../../src/office/events.js';
import type { Db } from '../../src/db/connect.js';
import type { FieldCipher } from '../../src/crypto/field-cipher.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import type { AppContext } from '../../src/context.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { addToWaitingList } from '../../src/registrations/waitlist/join.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { claimToken } from '../../src/registrations/waitlist/tokens.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

/** An event with its waiting list on (offers held 24 hours), card and bank payments, and `taken` places already registered (one per registration). */
export async function fullWaitlistEvent(db: Db, cipher: FieldCipher, capacity: number, overrides: Record<string, unknown> = {}, taken = capacity): Promise<{ event: EventRecord; registrations: string[] }> {
  const { slug } = await insertEvent(db, {
    capacity,
    online_payment: true,
    waitlist_enabled: true,
    waitlist_offer_hours: 24,
    max_attendees_per_registration: 6,
    ...overrides,
  });
  const event = (await getEventBySlug(db, slug)) as EventRecord;
  const registrations: string[] = [];
  for (let i = 0; i < taken; i++) registrations.push((await insertRegistration(db, cipher, event.id, { email: `taken-${i}@example.org`, paid_at: new Date('2026-11-01T00:00:00Z') })).id);
  return { event, registrations };
}

/** The event's waiting-list entries in order, with their state. */
export async function entries(db: Db, eventId: string): Promise<Array<{ id: string; state: string; places: number; skips: number; offer_seq: number; registration_id: string | null }>> {
  return db('waitlist_entries').where({ event_id: eventId }).orderBy('position').select('id', 'state', 'places', 'skips', 'offer_seq', 'registration_id');
}

/** Places held: PENDING and PAID attendees plus open offers. */
export async function placesHeld(db: Db, eventId: string): Promise<{ registered: number; offered: number }> {
  const registered = await db('registrations').where({ event_id: eventId }).whereIn('status', ['PENDING', 'PAID']).sum({ n: 'attendee_count' }).first();
  const offered = await db('waitlist_entries').where({ event_id: eventId, state: 'OFFERED' }).sum({ n: 'places' }).first();
  return { registered: Number(registered?.n ?? 0), offered: Number(offered?.n ?? 0) };
}

export function formBody(fields: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) params.append(key, v);
  return params.toString();
}

/** A claim link's token from an offer email's text. */
export function claimTokenIn(text: string): string {
  const match = /\?offer=([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)/.exec(text);
  if (!match?.[1]) throw new Error(`no claim link in: ${text}`);
  return match[1];
}

/**
 * An offer open to `contact` for `places`: the family joins the full event's list, the office cancels that many of
 * its registrations (`registrations`, from fullWaitlistEvent), and the pass offers the places. The claim link's token.
 */
export async function openOffer(
  ctx: AppContext,
  event: EventRecord,
  registrations: string[],
  contact: { name: string; email: string; mobile?: string },
  places: number,
): Promise<string> {
  await addToWaitingList(ctx, { id: event.id }, { contact, places }, { actor: 'test' });
  for (const registration of registrations.slice(0, places)) await cancelRegistration(ctx, { registration, actor: 'office' });
  await runWaitlistPass(ctx, { actor: 'office' });
  const entry = await ctx.db('waitlist_entries').where({ event_id: event.id, state: 'OFFERED' }).first<{ id: string; offer_seq: number } | undefined>('id', 'offer_seq');
  if (!entry) throw new Error('the pass offered no places');
  return claimToken(ctx.config.keyring, { entryId: entry.id, offerSeq: entry.offer_seq });
}
