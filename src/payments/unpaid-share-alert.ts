import type { Knex } from 'knex';
import { isChurchClientKey } from '../client-key.js';
import type { AppContext } from '../context.js';
import type { EventRecord } from '../registrations/event-record.js';
import { paymentReference } from '../registrations/reference.js';
import { raiseOperationsAlert } from './alerts.js';

/**
 * One alert when the public form's unpaid places on an event pass its unpaidAlertShare of the capacity
 * (default 0.4): many connections and mailboxes each under their caps can still hold an event between
 * them, and only a person can tell a congregation from a bot. Raised when a registration takes the count
 * from at or below the share to above it, under the event's lock, so one crossing is one alert however
 * many posts follow; while it is open, a fall below and a new crossing raise none. It names the largest
 * holders by connection and by mailbox with their references (the row is not encrypted: no address).
 */

/**
 * Places on which money is owed. Unlike the per-connection cap, a free registration does not count: a popular
 * free event fills past any share by design, and an alert on each would teach the office to ignore this one.
 */
const OWING = `status = 'PENDING'`;

/** Holders named per kind (connections, mailboxes). */
const HOLDERS_NAMED = 3;
/** References listed per holder; the rest are counted. */
const REFERENCES_LISTED = 8;

type ShareEvent = Pick<EventRecord, 'id' | 'slug' | 'title' | 'capacity' | 'unpaidAlertShare'>;
type AlertContext = Pick<AppContext, 'config' | 'clock' | 'logger' | 'cipher'>;

/** The places the public form's registrations (those that keep a client key) hold unpaid on event `eventId` (an SQL expression). */
export function unpaidPublicPlacesSql(eventId: string): string {
  return `(SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE event_id = ${eventId} AND client_key IS NOT NULL AND ${OWING})`;
}

/** Whether `unpaid` places held unpaid by the public form, `added` of them just now, took the event past its share. */
export function unpaidShareCrossed(event: Pick<ShareEvent, 'capacity' | 'unpaidAlertShare'>, unpaid: number, added: number): boolean {
  if (event.capacity === null || event.capacity === 0 || event.unpaidAlertShare === null) return false;
  const threshold = event.unpaidAlertShare * event.capacity;
  return unpaid > threshold && unpaid - added <= threshold;
}

/** The places the public form's registrations (those that keep a client key) hold unpaid on the event. */
async function unpaidPublicPlaces(trx: Knex.Transaction, eventId: string): Promise<number> {
  const row = await trx('registrations')
    .where({ event_id: eventId })
    .whereNotNull('client_key')
    .whereRaw(OWING)
    .sum<{ places: string | number | null }>({ places: 'attendee_count' })
    .first();
  return Number(row?.places ?? 0);
}

interface Holder {
  key: string;
  places: number;
  ids: string[];
}

/** The largest holders of unpaid places on the event, grouped by connection or by mailbox. */
async function largestHolders(trx: Knex.Transaction, eventId: string, column: 'client_key' | 'mailbox_key'): Promise<Holder[]> {
  const { rows } = await trx.raw<{ rows: Array<{ key: string; places: string; ids: string[] }> }>(
    `SELECT ?? AS key, sum(attendee_count) AS places, array_agg(id ORDER BY created_at, id) AS ids
       FROM registrations
      WHERE event_id = ? AND ?? IS NOT NULL AND ${OWING}
      GROUP BY ??
      ORDER BY sum(attendee_count) DESC, min(created_at), ??
      LIMIT ${HOLDERS_NAMED}`,
    [column, eventId, column, column, column],
  );
  return rows.map((row) => ({ key: row.key, places: Number(row.places), ids: row.ids }));
}

function describeHolder(label: string, holder: Holder): string {
  const listed = holder.ids.slice(0, REFERENCES_LISTED).map(paymentReference).join(' ');
  const more = holder.ids.length > REFERENCES_LISTED ? ` and ${holder.ids.length - REFERENCES_LISTED} more` : '';
  const registrations = holder.ids.length === 1 ? '1 registration' : `${holder.ids.length} registrations`;
  return `${label}: ${holder.places} ${holder.places === 1 ? 'place' : 'places'} in ${registrations} (${listed}${more})`;
}

/** The holders, connections first (the church's network named as such), as one line each. */
async function holdersText(trx: Knex.Transaction, eventId: string): Promise<string[]> {
  const connections = await largestHolders(trx, eventId, 'client_key');
  const mailboxes = await largestHolders(trx, eventId, 'mailbox_key');
  const letter = (i: number) => String.fromCharCode(65 + i);
  return [
    ...connections.map((holder, i) => describeHolder(`connection ${letter(i)}${isChurchClientKey(holder.key) ? " (the church's network)" : ''}`, holder)),
    ...mailboxes.map((holder, i) => describeHolder(`email address ${letter(i)}`, holder)),
  ];
}

/**
 * After a public registration that added `added` unpaid places, under the event's lock: raises the
 * unpaid_share alert when this registration took the event's unpaid public places past its share, and
 * none is open for the event. Returns whether it raised one.
 */
export async function alertUnpaidShareCrossed(trx: Knex.Transaction, ctx: AlertContext, event: ShareEvent, added: number): Promise<boolean> {
  if (event.capacity === null || event.capacity === 0 || event.unpaidAlertShare === null) return false;
  const unpaid = await unpaidPublicPlaces(trx, event.id);
  if (!unpaidShareCrossed(event, unpaid, added)) return false;
  const open = await trx('operations_alerts')
    .where({ kind: 'unpaid_share' })
    .whereNull('resolved_at')
    .whereRaw(`details->>'eventId' = ?`, [event.id])
    .first('id');
  if (open) return false;
  const holders = await holdersText(trx, event.id);
  const percent = Math.round(event.unpaidAlertShare * 1000) / 10;
  await raiseOperationsAlert(trx, ctx, {
    kind: 'unpaid_share',
    reason:
      `The public form's registrations hold ${unpaid} of the ${event.capacity} places of "${event.title}" (${event.slug}) unpaid, ` +
      `more than ${percent}% (the event's unpaidAlertShare ${event.unpaidAlertShare}). The largest holders: ${holders.join('; ')}.`,
    details: {
      eventId: event.id,
      event: event.slug,
      unpaidPlaces: unpaid,
      capacity: event.capacity,
      unpaidAlertShare: event.unpaidAlertShare,
    },
  });
  return true;
}
