import type { Knex } from 'knex';
import { recordHistory } from '../../registrations/history.js';
import { registrationMoney } from '../../registrations/ledger.js';
import { moneyFormatter } from '../../money-format.js';
import { raiseOperationsAlert } from '../alerts.js';
import type { WebhookAction } from './map.js';
import type { WebhookContext } from './staging-rows.js';

/**
 * One card payment of a registration paying in parts: a ledger row of registration_payments (method card)
 * naming its PaymentIntent. Only a registration's first card payment is also on registrations.payment_intent_id,
 * so every look-up of "the registration this payment pays" goes through the ledger as well.
 */

type ReverseAction = Extract<WebhookAction, { kind: 'reverse' }>;
export type Reversal = 'refund' | 'dispute';

export interface PaidRegistration {
  id: string;
  status: string;
  cancel_reason: string | null;
  event_id: string;
}

interface CardPartRow {
  id: number;
  registration_id: string;
  amount_minor: number;
  reversal: Reversal | null;
}

/**
 * The registration a card payment pays: the one holding it as its (first or whole) payment, else the one whose
 * ledger row names it. `lock`: FOR UPDATE, as the reversals that change it take it.
 */
export function registrationPaidBy(trx: Knex.Transaction, paymentIntentId: string, lock = false): Promise<PaidRegistration | undefined> {
  const query = trx('registrations')
    .where({ payment_intent_id: paymentIntentId })
    .orWhereIn('id', trx('registration_payments').select('registration_id').where({ method: 'card', payment_intent_id: paymentIntentId }));
  if (lock) void query.forUpdate();
  return query.first<PaidRegistration | undefined>('id', 'status', 'cancel_reason', 'event_id');
}

function cardPartOf(trx: Knex.Transaction, paymentIntentId: string): Promise<CardPartRow | undefined> {
  return trx('registration_payments')
    .where({ method: 'card', payment_intent_id: paymentIntentId })
    .first<CardPartRow | undefined>('id', 'registration_id', 'amount_minor', 'reversal');
}

/**
 * Whether the office was already told of this kind of reversal of the payment, and not since told it was undone
 * (a dispute won, a refund failed): a payment disputed again after its win is news.
 */
async function reversalAlreadyTold(trx: Knex.Transaction, paymentIntentId: string, reversal: Reversal): Promise<boolean> {
  const { rows } = await trx.raw<{ rows: Array<{ told: string; undone: string }> }>(
    `SELECT COUNT(*) FILTER (WHERE kind = 'part_payment_reversed' AND details->>'reversal' = ?) AS told,
            COUNT(*) FILTER (WHERE details->>'restoredReversal' = ?) AS undone
       FROM operations_alerts WHERE payment_intent_id = ?`,
    [reversal, reversal, paymentIntentId],
  );
  const counts = rows[0] ?? { told: '0', undone: '0' };
  return Number(counts.told) > Number(counts.undone);
}

/**
 * A refund or dispute of one card payment (a ledger row of registration_payments) of a registration that has
 * other payments or help: that row stops counting as paid (reversal), the registration is not cancelled, a PAID
 * one owes again (PENDING), and the office is alerted once per payment and kind. Nothing is refunded here.
 * undefined: not such a payment (the registration's only payment follows the whole-registration policy).
 */
export async function reverseCardPart(trx: Knex.Transaction, ctx: WebhookContext, eventId: string, action: ReverseAction): Promise<'alerted' | 'already_alerted' | undefined> {
  const row = await cardPartOf(trx, action.paymentIntentId);
  if (!row) return undefined;
  const registration = await trx('registrations').where({ id: row.registration_id }).forUpdate().first<{ id: string; status: string; event_id: string }>('id', 'status', 'event_id');
  const others = await trx('registration_payments').where({ registration_id: row.registration_id }).whereNot({ id: row.id }).whereNull('reversal').first('id');
  const credits = await trx('registration_credits').where({ registration_id: row.registration_id }).first('id');
  if (!others && !credits && row.reversal === null) return undefined;
  const now = ctx.clock.now();
  if (row.reversal === null) {
    await trx('registration_payments').where({ id: row.id }).update({ reversal: action.reversal, reversed_at: now });
    if (registration.status === 'PAID') await trx('registrations').where({ id: registration.id }).update({ status: 'PENDING', paid_at: null, updated_at: now });
    await recordHistory(trx, {
      registrationId: registration.id,
      action: action.reversal === 'refund' ? 'refunded' : 'disputed',
      changes: { amountMinor: row.amount_minor, reversal: action.reversal, paymentIntentId: action.paymentIntentId, ...(registration.status === 'PAID' ? { status: { from: 'PAID', to: 'PENDING' } } : {}) },
      actor: 'card provider',
      now,
    });
  }
  if (await reversalAlreadyTold(trx, action.paymentIntentId, action.reversal)) return 'already_alerted';
  await raiseOperationsAlert(trx, ctx, {
    kind: 'part_payment_reversed',
    reason: `a ${action.reversal} of one card payment (${moneyFormatter(ctx.config.regional)(row.amount_minor)}) of a registration paying in parts; that payment no longer counts as paid and the registration owes it again`,
    paymentIntentId: action.paymentIntentId,
    amountMinor: action.amountMinor,
    details: { registrationId: registration.id, eventId: registration.event_id, reversal: action.reversal, providerObjectId: action.providerObjectId, providerEventId: eventId },
  });
  return 'alerted';
}

/** What undoing a part's reversal did: the registration as it now stands, and the amount restored. */
export interface RestoredPart {
  registrationId: string;
  eventId: string;
  amountMinor: number;
  status: string;
  /** What is still owed (negative: received beyond the total, the family having paid that part again meanwhile). */
  outstandingMinor: number;
}

/**
 * The money of a card part's reversal came back (a dispute won, a refund that failed): its ledger row counts as paid
 * again, and a PENDING registration that then owes nothing is PAID again, as it was before the reversal. One the
 * office cancelled meanwhile stays cancelled. undefined: no ledger row of this payment carries that reversal.
 */
export async function restoreCardPart(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  paymentIntentId: string,
  reversal: Reversal,
  history: { action: 'dispute_won' | 'refund_failed'; changes: Record<string, unknown> },
): Promise<RestoredPart | undefined> {
  const row = await cardPartOf(trx, paymentIntentId);
  if (row?.reversal !== reversal) return undefined;
  const registration = await trx('registrations').where({ id: row.registration_id }).forUpdate().first<PaidRegistration>('id', 'status', 'cancel_reason', 'event_id');
  const now = ctx.clock.now();
  await trx('registration_payments').where({ id: row.id }).update({ reversal: null, reversed_at: null });
  const money = await registrationMoney(trx, registration.id);
  const paidAgain = registration.status === 'PENDING' && money.outstandingMinor <= 0;
  if (paidAgain) await trx('registrations').where({ id: registration.id }).update({ status: 'PAID', paid_at: now, updated_at: now });
  await recordHistory(trx, {
    registrationId: registration.id,
    action: history.action,
    changes: { amountMinor: row.amount_minor, reversal: { from: reversal, to: null }, paymentIntentId, ...history.changes, ...(paidAgain ? { status: { from: 'PENDING', to: 'PAID' } } : {}) },
    actor: 'card provider',
    now,
  });
  return {
    registrationId: registration.id,
    eventId: registration.event_id,
    amountMinor: row.amount_minor,
    status: paidAgain ? 'PAID' : registration.status,
    outstandingMinor: money.outstandingMinor,
  };
}

/** The registration as a restored part leaves it, in words for the office. */
export function restoredStanding(ctx: Pick<WebhookContext, 'config'>, restored: RestoredPart): string {
  const money = moneyFormatter(ctx.config.regional);
  if (restored.status === 'CANCELLED') return 'the registration stays cancelled as the office left it';
  if (restored.outstandingMinor < 0) {
    return `the registration is ${restored.status}, and ${money(-restored.outstandingMinor)} more than its total has now been received (that part was paid again meanwhile): decide with the family about the excess`;
  }
  if (restored.outstandingMinor === 0) return `the registration is ${restored.status} with nothing owed`;
  return `the registration is ${restored.status}, owing ${money(restored.outstandingMinor)}`;
}

/**
 * A dispute of one card part decided for the church: the payment counts as paid again (restoreCardPart), and the
 * office is told so, never asked to register the payer (the payment already pays this registration).
 * undefined: the payment is no card part whose dispute is recorded (the whole-registration policy applies).
 */
export async function restoreDisputedPart(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  action: { paymentIntentId: string; disputeId: string; amountMinor: number; ids: { checkoutId?: string } },
): Promise<'alerted' | undefined> {
  const restored = await restoreCardPart(trx, ctx, action.paymentIntentId, 'dispute', { action: 'dispute_won', changes: { providerObjectId: action.disputeId } });
  if (!restored) return undefined;
  await raiseOperationsAlert(trx, ctx, {
    kind: 'part_payment_restored',
    reason: `the dispute of one card payment (${moneyFormatter(ctx.config.regional)(restored.amountMinor)}) of a registration paying in parts was decided for the church and the money came back; that payment counts as paid again and ${restoredStanding(ctx, restored)}`,
    paymentIntentId: action.paymentIntentId,
    checkoutId: action.ids.checkoutId,
    amountMinor: action.amountMinor,
    details: { registrationId: restored.registrationId, eventId: restored.eventId, registrationStatus: restored.status, restoredReversal: 'dispute', disputeId: action.disputeId, providerEventId: eventId },
  });
  return 'alerted';
}
