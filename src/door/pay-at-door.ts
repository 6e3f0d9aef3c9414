import { AppError } from '../errors.js';
import { moneyFormatter } from '../money-format.js';
import { registrationMoney } from '../registrations/ledger.js';
import { markRegistrationPaid, type MarkPaidResult, type OfficeContext } from '../office/registrations/mark-paid.js';
import type { CheckinLink } from './links.js';

export type DoorPaymentMethod = 'cash' | 'bank';

/**
 * The balance paid at the door, recorded through a link made with --can-take-payment: exactly what
 * `registrations mark-paid` records for the whole balance (the same ledger row, history entry and receipt, and the
 * same refusals, made under the registration's lock), with the link's label as who recorded it.
 */
export async function payAtDoor(
  ctx: OfficeContext,
  link: CheckinLink,
  input: { registrationId: string; method: DoorPaymentMethod },
): Promise<MarkPaidResult> {
  if (!link.canTakePayment) throw new AppError('payment_not_allowed', 'this check-in link cannot record payments', { httpStatus: 403 });
  const registration = await ctx.db('registrations')
    .where({ id: input.registrationId, event_id: link.eventId })
    .first<{ id: string; status: string; total_minor: number } | undefined>('id', 'status', 'total_minor');
  if (!registration) throw new AppError('not_found', 'no such registration for this event', { httpStatus: 404 });
  const balance = (await registrationMoney(ctx.db, registration.id)).balanceMinor;
  const money = moneyFormatter(ctx.config.regional);
  return markRegistrationPaid(
    ctx,
    { registration: registration.id, amountMinor: balance, method: input.method, note: 'paid at the door', actor: link.label },
    money,
  );
}
