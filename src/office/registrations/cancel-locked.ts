import type { Knex } from 'knex';
import { queueCancellationNotice } from '../../signup/notices.js';
import { recordHistory } from '../../registrations/history.js';
import { lockEventForSeats } from '../../registrations/registrations.js';
import type { RegistrationRow } from './lookup.js';
import type { OfficeContext } from './mark-paid.js';

/** Who cancelled: the office's command, or the registrant on the manage page. Stored as cancel_reason. */
export type CancelledBy = 'office' | 'registrant';

export interface CancelLockedInput {
  by: CancelledBy;
  /** Whether the registrant is emailed the cancellation notice. */
  notify: boolean;
  /** Paid so far: the notice then says the church will be in touch about the money. */
  paidMinor: number;
  actor: string;
  note?: string;
  /** Further facts for the history entry (e.g. the registrant's client). */
  changes?: Record<string, unknown>;
}

export interface SeatsFreed {
  registrationId: string;
  eventId: string;
  previousStatus: 'PENDING' | 'PAID';
  seatsFreed: number;
}

/**
 * The one place a live registration is cancelled and its seats freed (seats count PENDING and PAID only), for
 * the office's `registrations cancel` and the registrant's own cancel alike. The caller holds the registration's
 * row lock (lockRegistration) and has checked it is not CANCELLED. Anything that should follow freed seats (a
 * waiting list) belongs here, in the same transaction.
 */
export async function cancelLockedRegistration(
  trx: Knex.Transaction,
  ctx: OfficeContext,
  registration: RegistrationRow,
  input: CancelLockedInput,
): Promise<SeatsFreed> {
  if (registration.status === 'CANCELLED') throw new Error(`registration ${registration.id} is already cancelled`);
  // The event's lock too (after the registration's, the order a pay-now completion takes them in): places move
  // only under it, so a waiting-list claim or offer beside this cancellation sees it whole or not at all.
  const now = ctx.clock.now();
  await lockEventForSeats(trx, registration.event_id, now);
  const id = registration.id;
  await trx('registrations').where({ id }).update({ status: 'CANCELLED', cancelled_at: now, cancel_reason: input.by, updated_at: now });
  if (input.notify) {
    const event = await trx('events').where({ id: registration.event_id }).first<{ title: string; starts_at: Date }>('title', 'starts_at');
    await queueCancellationNotice(
      trx,
      ctx,
      {
        registrationId: id,
        name: registration.contact_name,
        email: ctx.cipher.decrypt(registration.contact_email_enc),
        event: { title: event.title, startsAt: event.starts_at },
      },
      { holdReleased: false, paid: input.paidMinor > 0, byRegistrant: input.by === 'registrant' },
      now,
    );
  }
  await recordHistory(trx, {
    registrationId: id,
    action: 'cancelled',
    changes: {
      status: { from: registration.status, to: 'CANCELLED' },
      seatsFreed: registration.attendee_count,
      notified: input.notify,
      ...input.changes,
    },
    note: input.note,
    actor: input.actor,
    now,
  });
  return { registrationId: id, eventId: registration.event_id, previousStatus: registration.status, seatsFreed: registration.attendee_count };
}
