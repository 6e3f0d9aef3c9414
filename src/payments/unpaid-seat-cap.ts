import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { purposeKey } from '../crypto/signed-tokens.js';
import { AppError } from '../errors.js';
import type { EventRecord } from '../registrations/event-record.js';
import type { CountedAlong } from '../registrations/registrations.js';
import { paymentReference } from '../registrations/reference.js';
import { raiseOperationsAlert } from './alerts.js';
import { unpaidPublicPlacesSql } from './unpaid-share-alert.js';

/**
 * The cap on unpaid places per client and per mailbox (an event's maxUnpaidSeatsPerClient): the
 * public form's bank-transfer and free registrations made from one client
 * (clientKey: an IPv4 address, an IPv6 /48), and those whose contact is one
 * mailbox (mailboxKey: as the confirmation limit counts mailboxes), may each hold
 * at most that many places of an event while unpaid. A client on one of the
 * church's own networks (CHURCH_NETWORKS) has no per-client cap; the mailbox
 * cap still applies to it. Checked under the event's row lock, the lock every
 * registration of the event takes, so two posts racing for the last places
 * under the cap cannot both get them. A card payment is not counted here: its
 * open checkouts hold places under a cap of their own (checkout-hold.ts).
 *
 * Free registrations count as unpaid holds: they take places without paying,
 * which is the same risk as a bank transfer never made.
 */

/** The places a registration holds unpaid: PENDING, or free (PAID without money). An SQL condition over `registrations`. */
export const HELD_UNPAID = `(status = 'PENDING' OR (status = 'PAID' AND payment_method = 'free'))`;

/** Who holds unpaid places, as the caps count them: one connection (client_key) or one mailbox (mailbox_key). */
export type UnpaidHolder = { kind: 'connection'; client: string } | { kind: 'mailbox'; mailbox: string };

export interface HeldByClient {
  seats: number;
  registrationIds: string[];
}

/**
 * The unpaid places each holder holds on the event (its live unpaid registrations, oldest first; holders in the order given), and the places the public
 * form's registrations hold unpaid (what the unpaid_share alert counts): columns counted with the seats under the event's lock (lockEventForSeats).
 */
export function unpaidStandingAlong(holders: readonly UnpaidHolder[]): CountedAlong {
  const bindings: Record<string, unknown> = {};
  const columns = holders.map((holder, index) => {
    bindings[`holder_${index}`] = holder.kind === 'connection' ? holder.client : holder.mailbox;
    const column = holder.kind === 'connection' ? 'client_key' : 'mailbox_key';
    return `(SELECT COALESCE(json_agg(json_build_object('id', id, 'places', attendee_count) ORDER BY created_at, id), '[]'::json)
               FROM registrations WHERE event_id = :id AND ${column} = :holder_${index} AND ${HELD_UNPAID}) AS held_${index}`;
  });
  return { columns: [...columns, `${unpaidPublicPlacesSql(':id')} AS public_unpaid`], bindings };
}

/** What unpaidStandingAlong counted, read back from the locked event's columns. */
export function unpaidStandingFrom(along: Record<string, unknown> | undefined, holders: readonly UnpaidHolder[]): { held: HeldByClient[]; publicUnpaid: number } {
  const row = along ?? {};
  const held = holders.map((_, index) => {
    const registrations = (row[`held_${index}`] ?? []) as Array<{ id: string; places: number }>;
    return { seats: registrations.reduce((sum, r) => sum + Number(r.places), 0), registrationIds: registrations.map((r) => r.id) };
  });
  return { held, publicUnpaid: Number(row.public_unpaid ?? 0) };
}

/** How the refusal and the alert name a holder. */
const HOLDER_WORDS = {
  connection: { holds: 'This connection', from: 'from one connection', one: 'One connection' },
  mailbox: { holds: 'This email address', from: 'by one email address', one: 'One email address' },
} as const;

/** A bank-transfer (or free) registration that would take a connection's (or a mailbox's) unpaid places past the event's cap. */
export class UnpaidSeatCapError extends AppError {
  constructor(
    readonly held: number,
    readonly cap: number,
    readonly cardOffered: boolean,
    free: boolean,
    holder: UnpaidHolder['kind'] = 'connection',
  ) {
    const words = HOLDER_WORDS[holder];
    // Held 0: the registration alone is larger than the cap (an event whose cap is below its attendees per registration).
    const holds =
      held === 0
        ? 'This registration has more places than may be held in one go'
        : `${words.holds} already holds ${held} ${free ? '' : 'unpaid '}${held === 1 ? 'place' : 'places'} for this event`;
    const limit = `at most ${cap} ${cap === 1 ? 'place' : 'places'} may be held ${free ? '' : 'unpaid '}${words.from}`;
    const next = cardOffered
      ? 'Card payment is chosen below: pay by card to register now, or pay for the places already held first'
      : free
        ? 'Please contact the church office to register more people'
        : 'Please pay for the places already held first, or contact the church office';
    super('unpaid_seat_cap', `${holds}, and ${limit}. ${next}.`, { httpStatus: 409 });
    this.name = 'UnpaidSeatCapError';
  }
}

/** A suggested note for the cancel command in the alert (quoted on its one line). */
export const CAP_CANCEL_NOTE = 'unpaid places held from one connection';
const CAP_CANCEL_NOTE_MAILBOX = 'unpaid places held by one email address';

/** The exact command that cancels every listed registration, one line. */
export function cancelAllCommand(registrationIds: string[], note = CAP_CANCEL_NOTE): string {
  return `eventops registrations cancel ${registrationIds.map(paymentReference).join(' ')} --note "${note}"`;
}

type CapAlertContext = Pick<AppContext, 'config' | 'clock' | 'logger' | 'cipher'>;

/**
 * The client, as the alert's dedupe key: an HMAC under a key of its own, so the alert row (not
 * encrypted) never carries the address, and the same address is recognised on the event.
 */
function clientFingerprint(ctx: CapAlertContext, client: string): string {
  return crypto.createHmac('sha256', purposeKey(ctx.config.keyring, 'unpaid-seat-cap-client')).update(client).digest('hex').slice(0, 32);
}

/**
 * Raises the unpaid_seat_cap alert for this event and holder (a connection, or a mailbox), unless one is
 * already open: a second refusal from the same address adds nothing the office has not been told. Run
 * under the event's row lock, so two refusals racing cannot both raise it.
 */
export async function alertUnpaidSeatCap(
  trx: Knex.Transaction,
  ctx: CapAlertContext,
  event: Pick<EventRecord, 'id' | 'slug' | 'title' | 'maxUnpaidSeatsPerClient'>,
  who: UnpaidHolder,
  held: HeldByClient,
): Promise<boolean> {
  // A mailbox is keyed apart from a connection, so neither alert stands for the other.
  const fingerprint = clientFingerprint(ctx, who.kind === 'connection' ? who.client : `mailbox:${who.mailbox}`);
  const open = await trx('operations_alerts')
    .where({ kind: 'unpaid_seat_cap' })
    .whereNull('resolved_at')
    .whereRaw(`details->>'eventId' = ?`, [event.id])
    .whereRaw(`details->>'client' = ?`, [fingerprint])
    .first('id');
  if (open) return false;
  const references = held.registrationIds.map(paymentReference);
  const command = cancelAllCommand(held.registrationIds, who.kind === 'connection' ? CAP_CANCEL_NOTE : CAP_CANCEL_NOTE_MAILBOX);
  await raiseOperationsAlert(trx, ctx, {
    kind: 'unpaid_seat_cap',
    reason:
      `${HOLDER_WORDS[who.kind].one} holds ${held.seats} unpaid places of "${event.title}" (${event.slug}), the most it may (maxUnpaidSeatsPerClient ${event.maxUnpaidSeatsPerClient}), ` +
      `and was refused more: ${references.join(', ')}. If they are not genuine, cancel them all with: ${command}`,
    details: {
      eventId: event.id,
      event: event.slug,
      client: fingerprint,
      holder: who.kind,
      heldSeats: held.seats,
      maxUnpaidSeatsPerClient: event.maxUnpaidSeatsPerClient,
      references: references.join(' '),
      command,
    },
  });
  return true;
}

/**
 * Blanks the client key and the mailbox key of every registration that no longer holds places unpaid (paid,
 * cancelled) or whose event has started or was deleted: they are kept only as long as the caps need them. Run
 * by sweep-checkouts.
 */
export async function forgetClientKeys(db: Knex, now: Date): Promise<number> {
  const checkouts = await db('checkout_sessions').whereNotNull('client_key').whereNot({ status: 'OPEN' }).update({ client_key: null });
  const result = await db.raw<{ rowCount: number }>(
    `UPDATE registrations r SET client_key = NULL, mailbox_key = NULL
       FROM events e
      WHERE r.event_id = e.id AND (r.client_key IS NOT NULL OR r.mailbox_key IS NOT NULL)
        AND (NOT (r.status = 'PENDING' OR (r.status = 'PAID' AND r.payment_method = 'free')) OR e.starts_at <= :now OR e.deleted_at IS NOT NULL)`,
    { now },
  );
  return (result.rowCount ?? 0) + checkouts;
}
