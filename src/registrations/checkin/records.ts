import type { Knex } from 'knex';
import type { Db } from '../../db/connect.js';

/**
 * Check-in, undo and check-out of one attendee. Each is one statement on the attendee's state row
 * (attendee_checkins, keyed by registration and attendee): a check-in is INSERT … ON CONFLICT DO UPDATE … WHERE
 * not here, so of two volunteers checking in the same person at once the second waits for the first's row
 * and then changes nothing; only a change is written to checkin_log. An action from the page carries an id
 * (its nonce), unique per link: one the link already sent is ignored, so an upload repeated after a lost answer
 * counts once. A time outside the event's days is recorded, flagged (outside_event_days), for show and export.
 */
export type CheckinAction = 'check_in' | 'undo' | 'check_out';
export const CHECKIN_ACTIONS: readonly CheckinAction[] = ['check_in', 'undo', 'check_out'];

export type CheckinOutcome = 'recorded' | 'unchanged' | 'seen' | 'not_found';

export interface CheckinInput {
  eventId: string;
  registrationId: string;
  attendeeIndex: number;
  action: CheckinAction;
  /** The link's label (or who, from the command line). */
  label: string;
  linkId?: string;
  /** When it happened: the tap, for an action queued offline. */
  at: Date;
  now: Date;
  /** The page's id for the action (a UUID), unique per link: given only with linkId. */
  nonce?: string;
  /** Registered at the door. */
  walkIn?: boolean;
  /** `at` falls outside the event's days (outsideEventDays): recorded, and flagged. */
  outsideEventDays?: boolean;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function recordCheckinAction(db: Db, input: CheckinInput): Promise<CheckinOutcome> {
  if (!Number.isInteger(input.attendeeIndex) || input.attendeeIndex < 0 || input.attendeeIndex > 10_000) return 'not_found';
  if (!UUID.test(input.registrationId) || (input.nonce !== undefined && !UUID.test(input.nonce))) return 'not_found';
  return db.transaction(async (trx) => {
    if (input.nonce !== undefined) {
      if (input.linkId === undefined) throw new Error('a tap id is unique per link: it needs its linkId');
      if (!(await claimNonce(trx, input.nonce, input.linkId, input.now))) return 'seen';
    }
    if (!(await attendeeExists(trx, input))) return 'not_found';
    const changed = await changeState(trx, input);
    if (!changed) return 'unchanged';
    await trx('checkin_log').insert({
      registration_id: input.registrationId,
      attendee_index: input.attendeeIndex,
      action: input.action,
      label: input.label,
      link_id: input.linkId ?? null,
      at: input.at,
      recorded_at: input.now,
      outside_event_days: input.outsideEventDays ?? false,
    });
    return 'recorded';
  });
}

/** True the first time this link sends the id; a concurrent twin waits for this transaction and then finds it. */
async function claimNonce(trx: Knex.Transaction, nonce: string, linkId: string, now: Date): Promise<boolean> {
  const result = await trx.raw<{ rows: unknown[] }>(
    'INSERT INTO checkin_nonces (link_id, id, received_at) VALUES (?, ?, ?) ON CONFLICT (link_id, id) DO NOTHING RETURNING id',
    [linkId, nonce.toLowerCase(), now],
  );
  return result.rows.length === 1;
}

async function attendeeExists(trx: Knex.Transaction, input: CheckinInput): Promise<boolean> {
  const row = await trx('registrations')
    .where({ id: input.registrationId, event_id: input.eventId })
    .whereIn('status', ['PENDING', 'PAID'])
    .where('attendee_count', '>', input.attendeeIndex)
    .first('id');
  return row !== undefined;
}

async function changeState(trx: Knex.Transaction, input: CheckinInput): Promise<boolean> {
  const key = [input.registrationId, input.attendeeIndex];
  const outside = input.outsideEventDays ?? false;
  let result: { rows: unknown[] };
  switch (input.action) {
    case 'check_in':
      result = await trx.raw(
        `INSERT INTO attendee_checkins AS c (registration_id, attendee_index, event_id, checked_in_at, checked_in_by, walk_in, checked_in_outside_event_days)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (registration_id, attendee_index) DO UPDATE SET
           checked_in_at = EXCLUDED.checked_in_at, checked_in_by = EXCLUDED.checked_in_by,
           checked_in_outside_event_days = EXCLUDED.checked_in_outside_event_days,
           checked_out_at = NULL, checked_out_by = NULL, checked_out_outside_event_days = false, walk_in = c.walk_in OR EXCLUDED.walk_in
         WHERE c.checked_in_at IS NULL OR c.checked_out_at IS NOT NULL
         RETURNING 1`,
        [...key, input.eventId, input.at, input.label, input.walkIn ?? false, outside],
      );
      break;
    case 'undo':
      // Undoes the last step: a check-out (back to here), else the check-in.
      result = await trx.raw(
        `UPDATE attendee_checkins SET
           checked_in_at = CASE WHEN checked_out_at IS NULL THEN NULL ELSE checked_in_at END,
           checked_in_by = CASE WHEN checked_out_at IS NULL THEN NULL ELSE checked_in_by END,
           checked_in_outside_event_days = CASE WHEN checked_out_at IS NULL THEN false ELSE checked_in_outside_event_days END,
           checked_out_at = NULL, checked_out_by = NULL, checked_out_outside_event_days = false
         WHERE registration_id = ? AND attendee_index = ? AND checked_in_at IS NOT NULL
         RETURNING 1`,
        key,
      );
      break;
    case 'check_out':
      result = await trx.raw(
        `UPDATE attendee_checkins SET checked_out_at = ?, checked_out_by = ?, checked_out_outside_event_days = ?
         WHERE registration_id = ? AND attendee_index = ? AND checked_in_at IS NOT NULL AND checked_out_at IS NULL
         RETURNING 1`,
        [input.at, input.label, outside, ...key],
      );
      break;
  }
  return result.rows.length === 1;
}

export interface CheckinLogEntry {
  attendeeIndex: number;
  action: CheckinAction;
  label: string;
  at: Date;
  /** Its time fell outside the event's days. */
  outsideEventDays: boolean;
}

export async function listCheckinLog(db: Db, registrationId: string): Promise<CheckinLogEntry[]> {
  const rows = await db('checkin_log')
    .where({ registration_id: registrationId })
    .orderBy([{ column: 'at' }, { column: 'id' }])
    .select<Array<{ attendee_index: number; action: CheckinAction; label: string; at: Date; outside_event_days: boolean }>>(
      'attendee_index',
      'action',
      'label',
      'at',
      'outside_event_days',
    );
  return rows.map((row) => ({ attendeeIndex: row.attendee_index, action: row.action, label: row.label, at: row.at, outsideEventDays: row.outside_event_days }));
}

/** Every attendee of a registration checked in (`registrations add --at-door`), as a walk-in. */
export async function checkInWalkIn(
  db: Db,
  input: { eventId: string; registrationId: string; attendees: number; label: string; now: Date; outsideEventDays?: boolean },
): Promise<void> {
  for (let index = 0; index < input.attendees; index++) {
    await recordCheckinAction(db, { ...input, attendeeIndex: index, action: 'check_in', at: input.now, walkIn: true });
  }
}
