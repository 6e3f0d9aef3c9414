import type { Knex } from 'knex';
import { canonicalMailbox } from '../../canonical-mailbox.js';
import type { AppContext } from '../../context.js';
import { AppError, NotFoundError } from '../../errors.js';
import type { EventRecord } from '../event-record.js';
import { lockEventForSeats, publicSeatsLeft } from '../registrations.js';
import { entryContact, lockEntry, queuePosition, recordWaitlistHistory, type WaitlistContact, type WaitlistEntryRow } from './entries.js';
import { queueJoinedEmail } from './mail.js';

type JoinContext = Pick<AppContext, 'db' | 'config' | 'cipher' | 'clock'>;

export interface JoinInput {
  contact: WaitlistContact;
  places: number;
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
 * Puts a family on the event's waiting list, under the event's lock, and queues the email with its
 * position and a link to leave. The public form and the office's `waitlist add` both come here, and
 * the same rules hold: the list is on, registration is open, the places wanted are within the
 * event's maxAttendeesPerRegistration and more than the public may still take, and the mailbox is
 * not already waiting for this event.
 */
export async function joinWaitingList(
  ctx: JoinContext,
  event: Pick<EventRecord, 'id'>,
  input: JoinInput,
  options: { actor: string; byOffice?: boolean },
): Promise<Joined> {
  const now = ctx.clock.now();
  return ctx.db.transaction(async (trx) => {
    const locked = await lockEventForSeats(trx, event.id, now);
    if (!locked || locked.event.deletedAt || (!options.byOffice && !locked.event.published)) throw new NotFoundError('event');
    const current = locked.event;
    if (!current.waitingList.enabled) {
      throw new AppError('waitlist_off', 'This event has no waiting list.', {
        httpStatus: 409,
        suggestion: 'turn it on with "waitingList": {"enabled": true} in the event file and `eventops events update`',
      });
    }
    if (current.startsAt.getTime() <= now.getTime()) {
      throw new AppError('registration_closed', 'Registration for this event closed when it started, and so did its waiting list.', { httpStatus: 409 });
    }
    const max = current.maxAttendeesPerRegistration;
    if (!Number.isInteger(input.places) || input.places < 1 || input.places > max) {
      throw new AppError('invalid_places', `Places: a whole number from 1 to ${max}.`, { httpStatus: 400, exitCode: 2 });
    }
    const open = publicSeatsLeft(locked);
    if (open !== null && open >= input.places) {
      throw new AppError('places_available', `${open} ${open === 1 ? 'place is' : 'places are'} still free: please register instead.`, {
        httpStatus: 409,
        suggestion: 'register with `eventops registrations add`',
      });
    }
    const hash = mailboxHash(ctx.cipher, input.contact.email);
    const already = await trx('waitlist_entries')
      .where({ event_id: current.id, email_hash: hash })
      .whereIn('state', ['WAITING', 'OFFERED'])
      .first('id');
    if (already) {
      throw new AppError('already_waiting', 'This email address is already on the waiting list for this event.', {
        httpStatus: 409,
        suggestion: 'the email sent when it joined has a link to leave the list',
      });
    }
    const [entry] = await trx('waitlist_entries')
      .insert({
        event_id: current.id,
        name_enc: ctx.cipher.encrypt(input.contact.name),
        email_enc: ctx.cipher.encrypt(input.contact.email),
        email_hash: hash,
        mobile_enc: input.contact.mobile ? ctx.cipher.encrypt(input.contact.mobile) : null,
        places: input.places,
        created_at: now,
        updated_at: now,
      })
      .returning<WaitlistEntryRow[]>('*');
    if (!entry) throw new Error('the waiting-list insert returned no row');
    const position = await queuePosition(trx, entry);
    await recordWaitlistHistory(trx, { entryId: entry.id, action: 'joined', changes: { places: input.places, position }, actor: options.actor, now });
    await queueJoinedEmail(trx, ctx, { entryId: entry.id, contact: input.contact, event: current, position, places: input.places }, now);
    return { entryId: entry.id, position, places: input.places, event: current };
  });
}

export interface LeftEntry {
  eventSlug: string;
  eventTitle: string;
  /** The entry had already left, been served or removed: nothing changed. */
  alreadyGone: boolean;
}

/**
 * Takes an entry off the list (its leave link, or the office's `waitlist remove`), under the event's
 * lock: an open offer is withdrawn and its places go to the next entry at the next pass.
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
    if (entry.state !== 'WAITING' && entry.state !== 'OFFERED') return { ...base, alreadyGone: true };
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
