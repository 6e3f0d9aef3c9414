import type { Knex } from 'knex';
import { AppError, NotFoundError } from '../../errors.js';
import { enqueueMail } from '../../mail/queue.js';
import { queueRegistrationConfirmation } from '../../payments/confirmations.js';
import type { AlertKind } from '../../payments/alerts.js';
import { paymentReference } from '../../payments/links.js';
import type { AttendeeChoice } from '../../payments/pricing.js';
import { renderReceipt } from '../../payments/receipts.js';
import { assertWithinAttendeeCap, registerWithoutCard, SoldOutError, type RegisteredWithoutCard } from '../../payments/register.js';
import type { RegistrationContact } from '../../payments/registrations.js';
import { getEventBySlug } from '../events.js';
import { localDay } from '../../local-time.js';
import { recordHistory } from './history.js';
import type { OfficeContext } from './mark-paid.js';
import { insertOfficePayment } from './payments.js';

export interface AddInput {
  eventSlug: string;
  contact: RegistrationContact;
  attendees: AttendeeChoice[];
  family: boolean;
  /** Money already received in full, or none (a bank-transfer registration, PENDING). */
  paid: 'bank' | 'cash' | 'none';
  overCapacity: boolean;
  /** The open alert this registration answers (a payment kept without a registration). */
  resolveAlert?: number;
  note?: string;
  actor: string;
}

export interface AddResult {
  registrationId: string;
  reference: string;
  status: 'PAID' | 'PENDING';
  method: string;
  totalMinor: number;
  seatsLeft: number | null;
  overCapacity: boolean;
  resolvedAlert: number | null;
}

/**
 * Registers someone by hand through the same pricing function and seat check
 * as the public form (registerWithoutCard). The registrant gets the form's
 * confirmation, or the receipt when the money was already received; the
 * history row, the payment and the resolved alert commit with it or not at all.
 */
export async function addRegistration(ctx: OfficeContext, input: AddInput): Promise<AddResult> {
  const event = await getEventBySlug(ctx.db, input.eventSlug);
  if (!event) throw new NotFoundError(`event "${input.eventSlug}"`, 'run `eventops events list` to see the slugs');
  assertWithinAttendeeCap(event, input.attendees.length);
  let resolvedAlert: number | null = null;
  try {
    const registered = await registerWithoutCard(
      ctx,
      event,
      { contact: input.contact, attendees: input.attendees, family: input.family },
      {
        overCapacity: input.overCapacity,
        paidWith: input.paid === 'none' ? undefined : input.paid,
        within: async (trx, done) => {
          const now = ctx.clock.now();
          if (input.resolveAlert !== undefined) {
            resolvedAlert = await resolveAnsweredAlert(trx, input.resolveAlert, { registrationId: done.registrationId, eventId: event.id, paid: input.paid, timeZone: ctx.config.regional.timeZone }, input.note, now);
          }
          await queueWelcome(trx, ctx, input, done, now);
          await recordHistory(trx, {
            registrationId: done.registrationId,
            action: 'registered',
            changes: {
              status: done.status,
              method: done.method,
              attendees: input.attendees.length,
              totalMinor: done.priced.total,
              ...(done.seatsLeftAfter !== null && done.seatsLeftAfter < 0 ? { overCapacityBy: -done.seatsLeftAfter } : {}),
              ...(resolvedAlert !== null ? { resolvedAlert } : {}),
            },
            note: input.note,
            actor: input.actor,
            now,
          });
        },
      },
    );
    return {
      registrationId: registered.registrationId,
      reference: paymentReference(registered.registrationId),
      status: registered.status,
      method: registered.method,
      totalMinor: registered.priced.total,
      seatsLeft: registered.seatsLeftAfter,
      overCapacity: registered.seatsLeftAfter !== null && registered.seatsLeftAfter < 0,
      resolvedAlert,
    };
  } catch (error) {
    if (error instanceof SoldOutError) {
      throw new AppError('sold_out', `${event.slug} has ${error.seatsLeft} place(s) left, fewer than the ${input.attendees.length} asked for; nothing was registered`, {
        exitCode: 1,
        suggestion: 'add --over-capacity to exceed the capacity knowingly',
      });
    }
    throw error;
  }
}

/** The form's confirmation, or, when the office already has the money, the receipt naming how it came. */
async function queueWelcome(trx: Knex.Transaction, ctx: OfficeContext, input: AddInput, done: RegisteredWithoutCard, now: Date): Promise<void> {
  if (input.paid === 'none' || done.priced.free) {
    await queueRegistrationConfirmation(
      trx,
      ctx,
      { registrationId: done.registrationId, contact: input.contact, event: done.event, priced: done.priced, byOffice: true },
      now,
    );
    return;
  }
  const paymentId = await insertOfficePayment(trx, {
    registrationId: done.registrationId,
    amountMinor: done.priced.total,
    method: input.paid,
    note: input.note,
    actor: input.actor,
    now,
  });
  const receipt = await renderReceipt(trx, ctx, {
    registrationId: done.registrationId,
    contact: input.contact,
    event: { title: done.event.title, startsAt: done.event.startsAt },
    lines: done.priced.lines,
    amountMinor: done.priced.total,
    paidAt: now,
    method: input.paid,
    officePaymentKey: String(paymentId),
  });
  await enqueueMail(trx, ctx.cipher, receipt, now);
}

/** Alerts for a payment kept without a registration: the ones a registration made by hand answers. */
const ANSWERED_BY_REGISTERING: ReadonlySet<string> = new Set<AlertKind>([
  'sold_out',
  'event_deleted',
  'amount_mismatch',
  'checkout_expired',
  'unknown_checkout',
  'registration_cancelled',
  'dispute_won',
]);

async function resolveAnsweredAlert(
  trx: Knex.Transaction,
  alertId: number,
  answer: { registrationId: string; eventId: string; paid: AddInput['paid']; timeZone: string },
  note: string | undefined,
  now: Date,
): Promise<number> {
  const alert = await trx('operations_alerts')
    .where({ id: alertId })
    .forUpdate()
    .first<{ id: number; kind: string; details: Record<string, unknown>; resolved_at: Date | null } | undefined>();
  if (!alert) throw new NotFoundError(`alert ${alertId}`, 'list open alerts with `eventops alerts list`; nothing was registered');
  if (alert.resolved_at) {
    throw new AppError('alert_already_resolved', `alert ${alertId} was already resolved on ${localDay(alert.resolved_at, answer.timeZone)}; nothing was registered`, {
      exitCode: 1,
      suggestion: 'run the command again without --resolve-alert if the registration is still wanted',
    });
  }
  const refuse = (why: string, suggestion: string) =>
    new AppError('alert_not_answered', `alert ${alertId} ${why}; nothing was registered`, { exitCode: 1, suggestion });
  if (!ANSWERED_BY_REGISTERING.has(alert.kind)) {
    throw refuse(`is a ${alert.kind} alert, not a payment kept without a registration`, 'resolve it with `eventops alerts resolve` once handled');
  }
  if (typeof alert.details.eventId === 'string' && alert.details.eventId !== answer.eventId) {
    throw refuse('is for a payment for another event', 'check the alert with `eventops alerts list` and name its event with --event');
  }
  if (answer.paid === 'none') {
    // The payer's money is already here: a PENDING registration would ask them to pay again.
    throw refuse('is for money already received', 'add --paid bank or --paid cash, so the registration is PAID and no payment is asked for');
  }
  const resolution = `registered by hand as ${paymentReference(answer.registrationId)}${note ? `: ${note}` : ''}`;
  await trx('operations_alerts')
    .where({ id: alertId })
    .update({
      resolved_at: now,
      resolution,
      details: trx.raw(`details || ?::jsonb`, [JSON.stringify({ registeredAs: answer.registrationId })]),
    });
  return alertId;
}
