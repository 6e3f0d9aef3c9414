import type { Knex } from 'knex';
import { enqueueMail } from '../mail/queue.js';
import { loadEmailBranding } from '../mail/render.js';
import { listUsersByRole } from '../office-users.js';
import { raiseOperationsAlert } from '../payments/alerts.js';
import { recordHistory } from '../registrations/history.js';
import { cardPaymentMayArrive, receivedMinor } from '../registrations/ledger.js';
import { paymentReference } from '../registrations/reference.js';
import { cancelLockedRegistration, type SeatsFreed } from '../office/registrations/cancel-locked.js';
import type { OfficeContext } from '../office/registrations/mark-paid.js';
import { lockManagedRegistration, ManageRefusedError, REGISTRANT_ACTOR, refuseUnlessChangeable, type ManagedRegistration } from './managed-registration.js';
import { registrantCancelledOfficeEmail } from './templates.js';

/**
 * What the registrant may do about cancelling: cancel it themselves (nothing was paid: a free registration, or an
 * unpaid bank transfer with no card payment on its way), or, once money has come in, ask the office, which decides
 * under the no-refund policy and replies. Nothing is ever refunded from the manage page.
 */
export type CancelOption = 'self' | 'ask_office';

export function cancelOption(registration: ManagedRegistration['registration'], paidMinor: number, cardPaymentInFlight: boolean): CancelOption {
  if (registration.total_minor === 0) return 'self';
  const unpaidBank = registration.status === 'PENDING' && registration.payment_method === 'bank' && paidMinor === 0 && !cardPaymentInFlight;
  return unpaidBank ? 'self' : 'ask_office';
}

/** Read under the lock: what has come in, and whether a card payment may still arrive. */
async function paidSoFar(trx: Knex.Transaction, registration: ManagedRegistration['registration'], now: Date) {
  const paidMinor = await receivedMinor(trx, registration.id);
  const cardPaymentInFlight = registration.status === 'PENDING' && (await cardPaymentMayArrive(trx, registration.id, now)) !== undefined;
  return { paidMinor, cardPaymentInFlight };
}

/**
 * The registrant cancels a free or unpaid bank-transfer registration (the page's second step): its seats are freed
 * through cancelLockedRegistration, as the office's cancel frees them; the registrant gets the cancellation notice
 * and the office an email. Returns undefined for a link that opens nothing.
 */
export async function cancelByRegistrant(ctx: OfficeContext, token: string, client: string): Promise<SeatsFreed | undefined> {
  return ctx.db.transaction(async (trx) => {
    const managed = await lockManagedRegistration(trx, ctx.config.authSecret, token);
    if (!managed) return undefined;
    const now = ctx.clock.now();
    refuseUnlessChangeable(managed, now);
    const { registration, event } = managed;
    const paid = await paidSoFar(trx, registration, now);
    if (cancelOption(registration, paid.paidMinor, paid.cardPaymentInFlight) !== 'self') {
      throw new ManageRefusedError(
        'cancel_needs_office',
        'Money has been paid (or a card payment is on its way) for this registration, so only the church office can cancel it. Use "Ask the office to cancel" instead.',
      );
    }
    const freed = await cancelLockedRegistration(trx, ctx, registration, {
      by: 'registrant',
      notify: true,
      paidMinor: 0,
      actor: REGISTRANT_ACTOR,
      changes: { client },
    });
    await tellOffice(trx, ctx, {
      reference: paymentReference(registration.id),
      registrationId: registration.id,
      contactName: registration.contact_name,
      eventTitle: event.title,
      eventStartsAt: event.startsAt,
      seatsFreed: freed.seatsFreed,
    });
    return freed;
  });
}

/** The office's users who handle registrations; with none, the configured sender (as operations alerts do). */
const OFFICE_ROLES = ['ADMIN', 'STAFF'] as const;

async function tellOffice(
  trx: Knex.Transaction,
  ctx: OfficeContext,
  data: { reference: string; registrationId: string; contactName: string; eventTitle: string; eventStartsAt: Date; seatsFreed: number },
): Promise<void> {
  const users = await listUsersByRole({ db: trx, cipher: ctx.cipher }, OFFICE_ROLES);
  const fallback = ctx.config.mailFrom ?? ctx.config.smtp?.user;
  const recipients = [...new Set(users.length > 0 ? users.map((user) => user.email) : fallback ? [fallback] : [])];
  if (recipients.length === 0) {
    ctx.logger.warn({ registrationId: data.registrationId }, 'a registrant cancelled, and no ADMIN or STAFF user or MAIL_FROM is there to tell');
    return;
  }
  const placesReleased = data.seatsFreed === 1 ? '1 place was' : `${data.seatsFreed} places were`;
  const rendered = registrantCancelledOfficeEmail({ ...data, placesReleased }, await loadEmailBranding(trx, ctx.config));
  const now = ctx.clock.now();
  for (const to of recipients) {
    await enqueueMail(
      trx,
      ctx.cipher,
      { kind: 'registrant-cancelled', registrationId: data.registrationId, message: { to: [to], ...rendered, idempotencyKey: `registrant-cancelled-${data.registrationId}-${to}` } },
      now,
    );
  }
}

/** "Ask the office to cancel" for a registration nothing was paid for: the page's own cancel is the way. */
export class CancelYourselfError extends ManageRefusedError {
  constructor() {
    super(
      'cancel_yourself',
      'Nothing has been paid for this registration, so the office is not needed: you can cancel it yourself with "Cancel this registration".',
    );
    this.name = 'CancelYourselfError';
  }
}

export type AskOfficeOutcome = { kind: 'not_found' } | { kind: 'asked'; alertId: number } | { kind: 'already_asked'; alertId: number };

/**
 * "Ask the office to cancel", for a registration money has come in for (or a card payment may still arrive; one
 * nothing was paid for is refused with CancelYourselfError, so no alert ever says an unpaid one "is paid"): recorded in the history (by the registrant,
 * from `client`) and raised as an operations alert naming the reference, which every ADMIN is emailed. Asking again
 * while that alert is open changes nothing.
 */
export async function askOfficeToCancel(ctx: OfficeContext, token: string, client: string): Promise<AskOfficeOutcome> {
  return ctx.db.transaction(async (trx) => {
    const managed = await lockManagedRegistration(trx, ctx.config.authSecret, token);
    if (!managed) return { kind: 'not_found' } as const;
    const now = ctx.clock.now();
    refuseUnlessChangeable(managed, now);
    const { registration, event } = managed;
    const paid = await paidSoFar(trx, registration, now);
    // Nothing paid (free, or an unpaid bank transfer): the family cancels it itself; the office is not asked to.
    if (cancelOption(registration, paid.paidMinor, paid.cardPaymentInFlight) === 'self') throw new CancelYourselfError();
    const open = await trx('operations_alerts')
      .where({ kind: 'cancellation_requested' })
      .whereNull('resolved_at')
      .whereRaw(`details->>'registrationId' = ?`, [registration.id])
      .first<{ id: number } | undefined>('id');
    if (open) return { kind: 'already_asked', alertId: open.id } as const;
    const reference = paymentReference(registration.id);
    await recordHistory(trx, {
      registrationId: registration.id,
      action: 'cancellation_requested',
      changes: { paidMinor: paid.paidMinor, client },
      actor: REGISTRANT_ACTOR,
      now,
    });
    const alert = await raiseOperationsAlert(trx, ctx, {
      kind: 'cancellation_requested',
      reason: `the registrant asks the office to cancel registration ${reference} for "${event.title}"; it is paid (in part or whole), so nothing was cancelled or refunded automatically: decide under the refund policy and reply to them`,
      amountMinor: paid.paidMinor > 0 ? paid.paidMinor : undefined,
      details: { registrationId: registration.id, reference, eventId: event.id },
      payer: { name: registration.contact_name, email: ctx.cipher.decrypt(registration.contact_email_enc) },
    });
    return { kind: 'asked', alertId: alert.id } as const;
  });
}
