import type { Knex } from 'knex';
import type { Db } from '../db/connect.js';
import { AppError } from '../errors.js';
import { readManageToken } from '../payments/manage-link.js';
import { eventFromRow, type EventRecord, type EventRow } from '../registrations/event-record.js';
import type { RegistrationRow } from '../office/registrations/lookup.js';

/**
 * The registration a manage link opens: its token signed by us, naming a registration that still exists with the
 * same manage_link_version. Anything else (made up, cut short, revoked by an email change or `resend --new-link`,
 * purged) opens nothing, and the page answers 404 without saying which.
 */
export interface ManagedRegistration {
  registration: RegistrationRow & { manage_link_version: number };
  event: EventRecord;
}

/** What the registrant is, in the history: the client's address is in each entry's changes. */
export const REGISTRANT_ACTOR = 'registrant';

/** A token longer than this is not one of ours (ours are 50 characters). */
export const MAX_MANAGE_TOKEN_LENGTH = 100;

/** For showing the page: read without a lock. */
export async function findManagedRegistration(db: Db, authSecret: string, token: string): Promise<ManagedRegistration | undefined> {
  return loadManaged(db, authSecret, token, false);
}

/** For a change: the registration's row lock (the lock the office's commands, pay-now and the webhook take) held to the end of `trx`. */
export async function lockManagedRegistration(trx: Knex.Transaction, authSecret: string, token: string): Promise<ManagedRegistration | undefined> {
  return loadManaged(trx, authSecret, token, true);
}

async function loadManaged(db: Db | Knex.Transaction, authSecret: string, token: string, lock: boolean): Promise<ManagedRegistration | undefined> {
  if (token.length > MAX_MANAGE_TOKEN_LENGTH) return undefined;
  const link = readManageToken(authSecret, token);
  if (!link) return undefined;
  const query = db('registrations').where({ id: link.registrationId });
  const registration = await (lock ? query.forUpdate() : query).first<ManagedRegistration['registration'] | undefined>();
  if (!registration || registration.manage_link_version !== link.version) return undefined;
  const event = await db('events').where({ id: registration.event_id }).first<EventRow | undefined>();
  return event ? { registration, event: eventFromRow(event) } : undefined;
}

/**
 * Until when the registrant may change details or cancel: the event's changesCloseAt, else its start, and never
 * past its start: a row stored before the event file refused a later changesCloseAt (or whose start was moved
 * earlier since) still closes when the event starts.
 */
export function changesCloseAt(event: Pick<EventRecord, 'changesCloseAt' | 'startsAt'>): Date {
  const close = event.changesCloseAt;
  return close && close.getTime() < event.startsAt.getTime() ? close : event.startsAt;
}

export function changesOpen(event: Pick<EventRecord, 'changesCloseAt' | 'startsAt' | 'deletedAt'>, now: Date): boolean {
  return event.deletedAt === null && now < changesCloseAt(event);
}

/** Refused changes, said to the registrant as they are (the page shows the message). */
export class ManageRefusedError extends AppError {
  constructor(code: string, message: string) {
    super(code, message, { httpStatus: 409, exitCode: 1 });
    this.name = 'ManageRefusedError';
  }
}

/** What a change may act on: a live registration, before the event's changesCloseAt. */
export function refuseUnlessChangeable(managed: ManagedRegistration, now: Date): void {
  if (managed.registration.status === 'CANCELLED') {
    throw new ManageRefusedError('registration_cancelled', 'This registration is cancelled, so nothing on it can be changed.');
  }
  if (!changesOpen(managed.event, now)) {
    throw new ManageRefusedError('changes_closed', 'Changes on this page have closed for this event. Please contact the church office.');
  }
}
