import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { canonicalMailbox } from '../../canonical-mailbox.js';
import type { AppContext } from '../../context.js';
import { AppError, NotFoundError } from '../../errors.js';
import { hourlyEmailCapsSql, overHourlyEmailCaps } from '../email-caps.js';
import { queuedMailRow } from '../../mail/queue.js';
import { eventFromRow, type EventRecord, type EventRow } from '../event-record.js';
import { lockEventForSeats, publicSeatCount, publicSeatsLeft, publicTierPlacesLeft, type PublicSeatCount } from '../registrations.js';
import type { ChurchIdentity } from '../../mail/identity.js';
import type { EventTier } from '../event-pricing.js';
import { entryContact, entryReference, lockEntry, queuePosition, recordWaitlistHistory, type WaitlistContact, type WaitlistEntryRow } from './entries.js';
import { confirmEmailMessage, queueAlreadyOnListEmail, queueJoinedEmail } from './mail.js';
import { UNCONFIRMED_LAPSE_MS } from './offers.js';

type JoinContext = Pick<AppContext, 'db' | 'config' | 'cipher' | 'clock'>;
type AskContext = JoinContext & Pick<AppContext, 'logger'>;

export interface JoinInput {
  contact: WaitlistContact;
  places: number;
  /** The ticket type the family waits for (one with places of its own, say); absent: any. */
  tier?: string;
}

export interface Joined {
  entryId: string;
  position: number;
  places: number;
  event: EventRecord;
}

/** The lookup hash one mailbox has on every event's list: victim+1@… and victim+2@… are one entry. */
export function mailboxHash(cipher: AppContext['cipher'], email: string): string {
  return cipher.lookupHash('email', canonicalMailbox(email));
}

/**
 * The rules every join meets, the form's and the office's alike: the list is on, registration is open,
 * and the places wanted are within the event's maxAttendeesPerRegistration and more than the public
 * may still take. They depend on the event alone, never on who is on the list.
 */
function assertJoinable(event: EventRecord, places: number, publicLeft: number | null, now: Date, tier?: { id: string; left: number | null }): void {
  if (!event.waitingList.enabled) {
    throw new AppError('waitlist_off', 'This event has no waiting list.', {
      httpStatus: 409,
      suggestion: 'turn it on with "waitingList": {"enabled": true} in the event file and `eventops events update`',
    });
  }
  if (event.startsAt.getTime() <= now.getTime()) {
    throw new AppError('registration_closed', 'Registration for this event closed when it started, and so did its waiting list.', { httpStatus: 409 });
  }
  const max = event.maxAttendeesPerRegistration;
  if (!Number.isInteger(places) || places < 1 || places > max) {
    throw new AppError('invalid_places', `Places: a whole number from 1 to ${max}.`, { httpStatus: 400, exitCode: 2 });
  }
  // Waiting for a ticket type: its own places count too (the fewer of the two is what the family can take now).
  const left = tier?.left != null ? (publicLeft === null ? tier.left : Math.min(publicLeft, tier.left)) : publicLeft;
  if (left !== null && left >= places) {
    throw new AppError('places_available', `${left} ${left === 1 ? 'place is' : 'places are'} still free: please register instead.`, {
      httpStatus: 409,
      suggestion: 'register with `eventops registrations add`',
    });
  }
}

/** The ticket type an entry names, checked against the event's: unknown (or hidden, on the public form) is refused. */
function tierToWaitFor(event: EventRecord, tier: string | undefined, options: { public: boolean }): EventTier | undefined {
  if (tier === undefined) return undefined;
  const found = event.pricing.tiers.find((candidate) => candidate.id === tier && !(options.public && candidate.hidden));
  if (!found) {
    const known = event.pricing.tiers.filter((candidate) => !(options.public && candidate.hidden)).map((candidate) => candidate.id);
    throw new AppError('invalid_tier', `Ticket: choose one of the ticket types${options.public ? '' : ` (${known.join(', ')})`}, or none for any.`, {
      httpStatus: 400,
      exitCode: 2,
    });
  }
  return found;
}

/** The mailbox's entry on the event's list (WAITING or OFFERED), if it has one. */
async function liveEntryOf(trx: Knex, eventId: string, hash: string): Promise<WaitlistEntryRow | undefined> {
  return trx('waitlist_entries').where({ event_id: eventId, email_hash: hash }).whereIn('state', ['WAITING', 'OFFERED']).first<WaitlistEntryRow | undefined>();
}

function entryRow(ctx: JoinContext, eventId: string, input: JoinInput, state: 'UNCONFIRMED' | 'WAITING', now: Date): Record<string, unknown> {
  return {
    event_id: eventId,
    name_enc: ctx.cipher.encrypt(input.contact.name),
    email_enc: ctx.cipher.encrypt(input.contact.email),
    email_hash: mailboxHash(ctx.cipher, input.contact.email),
    mobile_enc: input.contact.mobile ? ctx.cipher.encrypt(input.contact.mobile) : null,
    places: input.places,
    tier: input.tier ?? null,
    state,
    confirmed_at: state === 'WAITING' ? now : null,
    created_at: now,
    updated_at: now,
  };
}

async function insertEntry(trx: Knex.Transaction, ctx: JoinContext, eventId: string, input: JoinInput, state: 'UNCONFIRMED' | 'WAITING', now: Date): Promise<WaitlistEntryRow> {
  const [entry] = await trx('waitlist_entries').insert(entryRow(ctx, eventId, input, state, now)).returning<WaitlistEntryRow[]>('*');
  if (!entry) throw new Error('the waiting-list insert returned no row');
  return entry;
}

/**
 * The office puts a family on the event's waiting list (`waitlist add`), under the event's lock: on the
 * list at once (the office has the family's word), at the back of the queue, and emailed its position
 * and a link to leave. The office is told plainly when the mailbox is already on the list.
 */
export async function addToWaitingList(ctx: JoinContext, event: Pick<EventRecord, 'id'>, input: JoinInput, options: { actor: string }): Promise<Joined> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (trx) => {
    const locked = await lockEventForSeats(trx, event.id, now);
    if (!locked || locked.event.deletedAt) throw new NotFoundError('event');
    const current = locked.event;
    const tier = tierToWaitFor(current, input.tier, { public: false });
    assertJoinable(current, input.places, publicSeatsLeft(locked), now, tier && { id: tier.id, left: publicTierPlacesLeft(locked, tier.id) });
    if (await liveEntryOf(trx, current.id, mailboxHash(ctx.cipher, input.contact.email))) {
      throw new AppError('already_waiting', 'This email address is already on the waiting list for this event.', {
        httpStatus: 409,
        suggestion: 'the email sent when it joined has a link to leave the list',
      });
    }
    const entry = await insertEntry(trx, ctx, current.id, input, 'WAITING', now);
    const position = await queuePosition(trx, entry);
    await recordWaitlistHistory(trx, {
      entryId: entry.id,
      action: 'joined',
      changes: { places: input.places, position, byOffice: true, ...(input.tier ? { tier: input.tier } : {}) },
      actor: options.actor,
      now,
    });
    await queueJoinedEmail(trx, ctx, { entryId: entry.id, contact: input.contact, event: current, position, places: input.places }, now);
    return { entryId: entry.id, position, places: input.places, event: current };
  });
}

/**
 * What a public join did. Never shown to whoever posted the form (every join gets the same answer):
 * only the mailbox learns, from the email it gets.
 */
export type AskOutcome =
  /** A new UNCONFIRMED entry, and the email with its confirm link. */
  | { kind: 'asked'; entryId: string }
  /** The mailbox is on the list already: nothing changed, and it is told so. */
  | { kind: 'already'; entryId: string }
  /** The mailbox or the client had its emails for the hour: nothing stored, nothing sent. */
  | { kind: 'held-back' };

/**
 * The public form's join. It puts nobody on the list: it stores an UNCONFIRMED entry (which holds no
 * place and counts for nothing) and emails the address a link to confirm it within a day; a mailbox
 * already on the list is emailed that instead. Either email counts under the hourly caps per mailbox
 * and per client that registration confirmations use. The event's rules (assertJoinable) still refuse
 * openly: they say nothing about who is on the list. No event lock: an unconfirmed entry takes nothing.
 */
export async function askToJoinWaitingList(
  ctx: AskContext,
  event: Pick<EventRecord, 'id'>,
  input: JoinInput,
  options: { actor: string; client?: string },
  /** The event as the form's page read it just now (with its places and the church's identity): not read again. */
  read?: EventAsRead,
): Promise<AskOutcome> {
  const now = ctx.clock.now();
  // Read without a transaction: an unconfirmed entry takes nothing, so nothing here needs a lock or a held connection.
  const row = read ? undefined : await ctx.db('events').where({ id: event.id }).first<EventRow | undefined>();
  const current = read?.event ?? (row ? eventFromRow(row) : undefined);
  if (!current || current.deletedAt || !current.published) throw new NotFoundError('event');
  const tier = tierToWaitFor(current, input.tier, { public: true });
  const count = read?.count ?? (await publicSeatCount(ctx.db, current, now));
  assertJoinable(current, input.places, count.seatsLeft, now, tier && { id: tier.id, left: count.tierLeft.get(tier.id) ?? null });
  const hash = mailboxHash(ctx.cipher, input.contact.email);
  if (await liveEntryOf(ctx.db, current.id, hash)) return tellAlreadyOnList(ctx, current, input, options, now);
  // A new entry, its history and its confirm-link email, within the hourly caps (or none of them): one statement.
  const entryId = crypto.randomUUID();
  const mail = await confirmEmailMessage(ctx.db, ctx, { entryId, contact: input.contact, event: current, places: input.places }, read?.identity);
  const caps = hourlyEmailCapsSql(ctx, { mailbox: input.contact.email, client: options.client }, now);
  const entry = entryRow(ctx, current.id, input, 'UNCONFIRMED', now);
  const history = { action: 'joined', changes: JSON.stringify({ places: input.places, confirmed: false, ...(input.tier ? { tier: input.tier } : {}) }), actor: options.actor, created_at: now };
  const queued = queuedMailRow(ctx.cipher, mail, now);
  const names = (row: Record<string, unknown>) => Object.keys(row);
  const columns = (row: Record<string, unknown>) => names(row).map(() => '??').join(', ');
  const values = (row: Record<string, unknown>) => names(row).map(() => '?').join(', ');
  const written = await ctx.db.raw<{ rows: Array<{ id: string }> }>(
    `WITH ${caps.ctes},
     entry AS (INSERT INTO waitlist_entries (id, ${columns(entry)}) SELECT ?::uuid, ${values(entry)} WHERE ${caps.within} RETURNING id),
     history AS (INSERT INTO waitlist_history (entry_id, ${columns(history)}) SELECT id, ${values(history)} FROM entry)
     INSERT INTO queued_mail (${columns(queued)}) SELECT ${values(queued)} FROM entry RETURNING id`,
    [
      ...caps.bindings,
      ...names(entry),
      entryId,
      ...(Object.values(entry) as Knex.RawBinding[]),
      ...names(history),
      ...(Object.values(history) as Knex.RawBinding[]),
      ...names(queued),
      ...(Object.values(queued) as Knex.RawBinding[]),
    ],
  );
  if (written.rows.length === 0) {
    ctx.logger.warn({ eventId: current.id }, 'waiting-list join email not sent: its mailbox or client had its emails for the hour');
    return { kind: 'held-back' };
  }
  return { kind: 'asked', entryId };
}

/** A join from a mailbox already on the list: nothing changes, and the mailbox is told (within the hourly caps). */
async function tellAlreadyOnList(ctx: AskContext, current: EventRecord, input: JoinInput, options: { client?: string }, now: Date): Promise<AskOutcome> {
  return ctx.db.transaction(async (trx) => {
    if (await overHourlyEmailCaps(trx, ctx, { mailbox: input.contact.email, client: options.client }, now)) {
      ctx.logger.warn({ eventId: current.id }, 'waiting-list join email not sent: its mailbox or client had its emails for the hour');
      return { kind: 'held-back' };
    }
    const live = await liveEntryOf(trx, current.id, mailboxHash(ctx.cipher, input.contact.email));
    if (!live) return { kind: 'held-back' };
    const contact = entryContact(ctx.cipher, live);
    const position = live.state === 'WAITING' ? await queuePosition(trx, live) : undefined;
    await queueAlreadyOnListEmail(
      trx,
      ctx,
      {
        to: contact.email,
        entry: { id: live.id, name: contact.name, places: live.places, offerSeq: live.offer_seq, position, offerExpiresAt: live.state === 'OFFERED' ? (live.offer_expires_at ?? undefined) : undefined },
        event: current,
        askId: crypto.randomUUID(),
      },
      now,
    );
    return { kind: 'already', entryId: live.id };
  });
}

/** An event as a page read it: the record, its public places, and the church's identity when read with them. */
export interface EventAsRead {
  event: EventRecord;
  count: PublicSeatCount;
  identity?: ChurchIdentity;
}

export type ConfirmOutcome =
  /** On the list now, at `position`. */
  | { kind: 'confirmed'; position: number }
  /** Confirmed before (a second tap of the link): on the list, at `position` (null once offered). */
  | { kind: 'on-list'; position: number | null }
  /** The mailbox was already on the list through another entry: this one lapses, nothing else changes. */
  | { kind: 'already'; position: number | null }
  /** Too late (a day has passed), or the entry is gone; or the event no longer takes joins. */
  | { kind: 'lapsed' }
  | { kind: 'closed' };

/**
 * The confirm link's POST: UNCONFIRMED → WAITING, under the event's lock (the queue is part of the public
 * count). Its place in the queue is taken now: the queue is in order of confirming. The family is
 * emailed its position and a link to leave, as an entry the office adds is.
 */
export async function confirmWaitlistEntry(
  ctx: JoinContext,
  entryId: string,
  options: { actor: string },
): Promise<ConfirmOutcome & { eventTitle: string; eventSlug: string; places: number }> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (trx) => {
    const seen = await trx('waitlist_entries').where({ id: entryId }).first<WaitlistEntryRow | undefined>('event_id');
    if (!seen) throw new NotFoundError('waiting-list entry');
    const locked = await lockEventForSeats(trx, seen.event_id, now);
    const entry = await lockEntry(trx, entryId);
    if (!locked || !entry) throw new NotFoundError('waiting-list entry');
    const event = locked.event;
    const named = { eventTitle: event.title, eventSlug: event.slug, places: entry.places };
    if (entry.state === 'WAITING' || entry.state === 'OFFERED') {
      return { kind: 'on-list', position: entry.state === 'WAITING' ? await queuePosition(trx, entry) : null, ...named };
    }
    if (entry.state !== 'UNCONFIRMED') return { kind: 'lapsed', ...named };
    if (entry.created_at.getTime() + UNCONFIRMED_LAPSE_MS <= now.getTime()) {
      await lapseEntry(trx, entry, { actor: options.actor, now });
      return { kind: 'lapsed', ...named };
    }
    if (event.deletedAt || !event.published || !event.waitingList.enabled || event.startsAt.getTime() <= now.getTime()) return { kind: 'closed', ...named };
    const live = await liveEntryOf(trx, event.id, entry.email_hash);
    if (live) {
      await lapseEntry(trx, entry, { actor: options.actor, now, note: `the mailbox is already on the list as ${entryReference(live.id)}` });
      return { kind: 'already', position: live.state === 'WAITING' ? await queuePosition(trx, live) : null, ...named };
    }
    const [confirmed] = await trx('waitlist_entries')
      .where({ id: entry.id, state: 'UNCONFIRMED' })
      .update({ state: 'WAITING', confirmed_at: now, position: trx.raw('DEFAULT'), updated_at: now })
      .returning<WaitlistEntryRow[]>('*');
    if (!confirmed) throw new Error(`waiting-list entry ${entry.id} is no longer unconfirmed`);
    const position = await queuePosition(trx, confirmed);
    await recordWaitlistHistory(trx, { entryId: entry.id, action: 'confirmed', changes: { state: { from: 'UNCONFIRMED', to: 'WAITING' }, position }, actor: options.actor, now });
    await queueJoinedEmail(trx, ctx, { entryId: entry.id, contact: entryContact(ctx.cipher, confirmed), event, position, places: confirmed.places }, now);
    return { kind: 'confirmed', position, ...named };
  });
}

async function lapseEntry(trx: Knex.Transaction, entry: Pick<WaitlistEntryRow, 'id'>, options: { actor: string; now: Date; note?: string }): Promise<void> {
  await trx('waitlist_entries').where({ id: entry.id, state: 'UNCONFIRMED' }).update({ state: 'LAPSED', updated_at: options.now });
  await recordWaitlistHistory(trx, { entryId: entry.id, action: 'lapsed', changes: { state: { from: 'UNCONFIRMED', to: 'LAPSED' } }, note: options.note, actor: options.actor, now: options.now });
}

export interface LeftEntry {
  eventSlug: string;
  eventTitle: string;
  /** The entry had already left, been served or removed: nothing changed. */
  alreadyGone: boolean;
}

/**
 * Takes an entry off the list (its leave link, or the office's `waitlist remove`), under the event's
 * lock: an open offer is withdrawn and its places go to the next entry at the next pass. The office may
 * remove an entry still unconfirmed as well.
 */
export async function takeOffList(
  ctx: JoinContext,
  entryId: string,
  options: { state: 'LEFT' | 'REMOVED'; actor: string; note?: string; within?: (trx: Knex.Transaction, entry: WaitlistEntryRow, event: EventRecord) => Promise<void> },
): Promise<LeftEntry & { entry: WaitlistEntryRow; contact: WaitlistContact }> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (trx) => {
    const seen = await trx('waitlist_entries').where({ id: entryId }).first<WaitlistEntryRow | undefined>('event_id');
    if (!seen) throw new NotFoundError('waiting-list entry');
    const locked = await lockEventForSeats(trx, seen.event_id, now);
    const entry = await lockEntry(trx, entryId);
    if (!locked || !entry) throw new NotFoundError('waiting-list entry');
    const base = { eventSlug: locked.event.slug, eventTitle: locked.event.title, entry, contact: entryContact(ctx.cipher, entry) };
    const removable = entry.state === 'WAITING' || entry.state === 'OFFERED' || (entry.state === 'UNCONFIRMED' && options.state === 'REMOVED');
    if (!removable) return { ...base, alreadyGone: true };
    await trx('waitlist_entries').where({ id: entry.id }).update({ state: options.state, updated_at: now });
    await recordWaitlistHistory(trx, {
      entryId: entry.id,
      action: options.state === 'LEFT' ? 'left' : 'removed',
      changes: { state: { from: entry.state, to: options.state }, ...(entry.state === 'OFFERED' ? { placesFreed: entry.places } : {}) },
      note: options.note,
      actor: options.actor,
      now,
    });
    await options.within?.(trx, entry, locked.event);
    return { ...base, alreadyGone: false };
  });
}
