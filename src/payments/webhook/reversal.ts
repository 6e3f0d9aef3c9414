import type { Knex } from 'knex';
import { recordHistory } from '../../registrations/history.js';
import { officeRefundedSum } from '../../registrations/ledger.js';
import { moneyFormatter } from '../../money-format.js';
import { raiseOperationsAlert } from '../alerts.js';
import type { WebhookAction } from './map.js';
import { lockPaymentIntent, type StagingRow, type WebhookContext } from './staging-rows.js';
import { registrationPaidBy, restoreCardPart, restoreDisputedPart, restoredStanding, reverseCardPart } from './card-parts.js';

/**
 * Reversals a person or the cardholder's bank started at the provider. We only
 * react: a full refund or a dispute cancels the registration paid by that
 * PaymentIntent (the seat is freed because seats count PENDING and PAID only);
 * a partial refund changes nothing and asks a person to look. Nothing here, or
 * anywhere, calls the provider's refund interface.
 */

export type ReverseAction = Extract<WebhookAction, { kind: 'reverse' }>;
export type PartialRefundAction = Extract<WebhookAction, { kind: 'partial_refund' }>;
export type DisputeNoticeAction = Extract<WebhookAction, { kind: 'dispute_notice' }>;
export type FailedRefundAction = Extract<WebhookAction, { kind: 'refund_failed' }>;
export type ReversalOutcome = 'cancelled' | 'already_cancelled' | 'refund_recorded' | 'dispute_recorded' | 'reversal_pending' | 'alerted' | 'already_alerted';

export async function reversePayment(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  action: ReverseAction,
): Promise<ReversalOutcome> {
  const now = ctx.clock.now();
  await lockPaymentIntent(trx, action.paymentIntentId);
  // One card payment of a registration paying in parts (while it has others): that payment only.
  const partReversed = await reverseCardPart(trx, ctx, eventId, action);
  if (partReversed) return partReversed;
  const registration = await registrationPaidBy(trx, action.paymentIntentId, true);
  if (registration) {
    if (registration.status === 'CANCELLED') {
      if (action.reversal !== 'dispute') return recordRefundOfCancelled(trx, ctx, registration, action);
      return recordDisputeOfCancelled(trx, ctx, eventId, registration, action);
    }
    await trx('registrations')
      .where({ id: registration.id })
      .update({ status: 'CANCELLED', cancelled_at: now, cancel_reason: action.reversal, updated_at: now });
    return 'cancelled';
  }

  const staging = await stagingForPaymentIntent(trx, action);
  if (staging?.status === 'UNFULFILLED') {
    // One alert per kind of reversal of a kept payment, whichever path saw it first (this one, a completion
    // that found it waiting, reconcile's repair or the provider's own delivery of the same refund); under the lock.
    const alerted = await trx('operations_alerts')
      .where({ kind: 'reversal_unfulfilled', payment_intent_id: action.paymentIntentId })
      .whereRaw(`details->>'reversal' = ?`, [action.reversal])
      .first('id');
    if (alerted) return 'already_alerted';
    await raiseOperationsAlert(trx, ctx, {
      kind: 'reversal_unfulfilled',
      reason: `a ${action.reversal} of a payment that was kept without a registration (${staging.unfulfilled_reason ?? 'unfulfilled'}); check whether the payer still needs contacting`,
      checkoutId: staging.id,
      providerSessionId: staging.provider_session_id ?? undefined,
      paymentIntentId: action.paymentIntentId,
      amountMinor: action.amountMinor,
      details: { reversal: action.reversal, providerObjectId: action.providerObjectId, providerEventId: eventId },
    });
    return 'alerted';
  }
  // Not paid here yet (or not ours): kept, and applied the moment a registration gets this PaymentIntent.
  // One row per kind: a dispute after a refund is news of its own; the same kind seen again adds nothing.
  await trx('pending_reversals')
    .insert({ payment_intent_id: action.paymentIntentId, kind: action.reversal, provider_event_id: eventId, created_at: now })
    .onConflict(['payment_intent_id', 'kind'])
    .ignore();
  return 'reversal_pending';
}

/**
 * A registration cancelled first (by the office, or its hold released) and refunded at the provider
 * afterwards, as the cancel command tells the office to do: the money went back, so it stops counting
 * as paid (PAID_MINOR_SQL reads the refund from cancel_reason). Who cancelled stays in its history.
 */
async function recordRefundOfCancelled(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  registration: { id: string; cancel_reason: string | null },
  action: ReverseAction,
): Promise<ReversalOutcome> {
  if (registration.cancel_reason === 'refund' || registration.cancel_reason === 'dispute') return 'already_cancelled';
  await moveCancelReason(trx, ctx, registration, action, 'refund');
  // The office paid it back another way first (a failed card refund's alert asks it to): the payer may now have it twice.
  const byHand = await officeRefundedSum(trx, registration.id);
  if (byHand > 0) {
    await raiseOperationsAlert(trx, ctx, {
      kind: 'refunded_twice',
      reason: `the card payment was refunded at the provider, but the office had already paid back ${moneyFormatter(ctx.config.regional)(byHand)} by hand for this registration (record-refund); check with the payer whether they were paid twice`,
      paymentIntentId: action.paymentIntentId,
      amountMinor: action.amountMinor,
      details: { registrationId: registration.id, paidBackByHandMinor: byHand, providerObjectId: action.providerObjectId },
    });
  }
  return 'refund_recorded';
}


/** A cancelled registration's reason becomes the provider's reversal, with a history entry keeping the reason it replaced. */
async function moveCancelReason(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  registration: { id: string; cancel_reason: string | null },
  action: ReverseAction,
  to: 'refund' | 'dispute',
): Promise<void> {
  const now = ctx.clock.now();
  await trx('registrations').where({ id: registration.id }).update({ cancel_reason: to, updated_at: now });
  await recordHistory(trx, {
    registrationId: registration.id,
    action: to === 'refund' ? 'refunded' : 'disputed',
    changes: { cancelReason: { from: registration.cancel_reason, to }, amountMinor: action.amountMinor, providerObjectId: action.providerObjectId },
    actor: 'card provider',
    now,
  });
}

/**
 * A dispute that takes the money of a registration already cancelled (by the office, a released hold, or a
 * refund that then failed) while the church still held it: the bank has it now, so the registration stops
 * counting as paid (cancel reason `dispute`, as for a dispute of an active one), with a history entry that
 * keeps the reason it replaced for a won dispute to restore. A refunded one is left as it is: the money was
 * already back with the payer. The office is told once per payment either way.
 */
async function recordDisputeOfCancelled(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  registration: { id: string; cancel_reason: string | null },
  action: ReverseAction,
): Promise<ReversalOutcome> {
  // The same chargeback heard twice (opened, then its funds withdrawn): the registration already says so. After a
  // dispute the church won (the money came back), money taken again is news for the office.
  if (registration.cancel_reason === 'dispute' && !(await disputeWon(trx, action.paymentIntentId))) return 'already_cancelled';
  const takesHeldMoney = registration.cancel_reason !== 'refund' && registration.cancel_reason !== 'dispute';
  if (takesHeldMoney) await moveCancelReason(trx, ctx, registration, action, 'dispute');
  const raised = await alertDisputeOfCancelled(trx, ctx, {
    paymentIntentId: action.paymentIntentId,
    registrationId: registration.id,
    cancelReason: registration.cancel_reason,
    nowCountsNothingPaid: takesHeldMoney,
    paidBackByHandMinor: await officeRefundedSum(trx, registration.id),
    amountMinor: action.amountMinor,
    providerEventId: eventId,
  });
  if (raised) return 'alerted';
  // Disputed again after a won dispute restored the reason: recorded, but the payment's one alert was raised before.
  return takesHeldMoney ? 'dispute_recorded' : 'already_alerted';
}

export async function alertPartialRefund(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  action: PartialRefundAction,
): Promise<ReversalOutcome> {
  const registration = action.paymentIntentId ? await registrationPaidBy(trx, action.paymentIntentId) : undefined;
  await raiseOperationsAlert(trx, ctx, {
    kind: 'partial_refund',
    reason: `${moneyFormatter(ctx.config.regional)(action.amountRefundedMinor)} of ${moneyFormatter(ctx.config.regional)(action.amountMinor)} was refunded at the provider; refunds are all-or-nothing, so the registration was left as it is`,
    paymentIntentId: action.paymentIntentId ?? undefined,
    checkoutId: action.ids.checkoutId,
    amountMinor: action.amountRefundedMinor,
    details: {
      chargeId: action.chargeId,
      chargedMinor: action.amountMinor,
      registrationId: registration?.id ?? null,
      registrationStatus: registration?.status ?? null,
      providerEventId: eventId,
    },
  });
  return 'alerted';
}

/**
 * A dispute of a payment whose registration is already cancelled: the bank may take the money (again, after a
 * refund), and a person answers it at the provider. One alert per payment. `nowCountsNothingPaid`: the dispute
 * took money the church held, so the registration was moved to cancel reason `dispute`.
 */
export async function alertDisputeOfCancelled(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  dispute: {
    paymentIntentId: string;
    registrationId: string;
    cancelReason: string | null;
    nowCountsNothingPaid?: boolean;
    /** Paid back by hand by the office (record-refund): the evidence to answer the dispute with. */
    paidBackByHandMinor?: number;
    amountMinor?: number;
    providerEventId: string;
    checkoutId?: string;
  },
): Promise<boolean> {
  const alerted = await trx('operations_alerts').where({ kind: 'dispute_after_cancellation', payment_intent_id: dispute.paymentIntentId }).first('id');
  if (alerted) return false;
  // The evidence to answer it with: the provider's refund, and what the office paid back by hand.
  const evidence = [
    ...(dispute.cancelReason === 'refund' ? ['the refund'] : []),
    ...(dispute.paidBackByHandMinor ? [`that the office paid ${moneyFormatter(ctx.config.regional)(dispute.paidBackByHandMinor)} back by hand (record-refund)`] : []),
  ];
  const what =
    evidence.length > 0
      ? `, showing ${evidence.join(' and ')}`
      : dispute.nowCountsNothingPaid
        ? '; the registration now counts nothing paid (cancel reason dispute)'
        : '';
  await raiseOperationsAlert(trx, ctx, {
    kind: 'dispute_after_cancellation',
    reason: `a dispute was opened for a payment whose registration was already cancelled (${dispute.cancelReason ?? 'cancelled'}); answer it at the card provider${what}`,
    paymentIntentId: dispute.paymentIntentId,
    checkoutId: dispute.checkoutId,
    amountMinor: dispute.amountMinor,
    details: { registrationId: dispute.registrationId, cancelReason: dispute.cancelReason, providerEventId: dispute.providerEventId },
  });
  return true;
}

/**
 * An inquiry to answer, or a won dispute's money back: a person decides. A won dispute that had hit a registration
 * already cancelled gives it back the reason the dispute replaced (see restoreReasonBeforeDispute); one the dispute
 * cancelled stays cancelled for the dispute until the office registers the payer again.
 */
export async function alertDisputeNotice(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  action: DisputeNoticeAction,
): Promise<ReversalOutcome> {
  await lockPaymentIntent(trx, action.paymentIntentId);
  // One card payment of several whose dispute took it out of the ledger: it counts again, and nobody is to register anyone.
  const partRestored = action.notice === 'won' ? await restoreDisputedPart(trx, ctx, eventId, action) : undefined;
  if (partRestored) return partRestored;
  const registration = await registrationPaidBy(trx, action.paymentIntentId, true);
  const restored = action.notice === 'won' && registration ? await restoreReasonBeforeDispute(trx, ctx, registration, action) : undefined;
  await raiseOperationsAlert(trx, ctx, {
    kind: action.notice === 'inquiry' ? 'dispute_inquiry' : 'dispute_won',
    reason: disputeNoticeReason(action.notice, registration !== undefined, restored),
    paymentIntentId: action.paymentIntentId,
    checkoutId: action.ids.checkoutId,
    amountMinor: action.amountMinor,
    details: {
      disputeId: action.disputeId,
      registrationId: registration?.id ?? null,
      registrationStatus: registration?.status ?? null,
      ...(restored ? { restoredCancelReason: restored.reason } : {}),
      providerEventId: eventId,
    },
  });
  return 'alerted';
}

function disputeNoticeReason(notice: DisputeNoticeAction['notice'], registered: boolean, restored: { reason: string | null } | undefined): string {
  if (notice === 'inquiry') {
    return 'the cardholder’s bank asks about this payment (an inquiry: no money was withdrawn, the registration stands); answer it at the card provider before its deadline';
  }
  if (restored) {
    return `the dispute was decided for the church and the money came back; the registration stays cancelled as it was before the dispute (${restored.reason ?? 'cancelled'}) and counts as paid again; refund the payer or settle with them`;
  }
  return registered
    ? 'the dispute was decided for the church and the money came back, but the registration was cancelled when the dispute opened; register the payer by hand or settle with them'
    : 'the dispute was decided for the church and the money came back, for a payment that has no registration; register the payer by hand or settle with them';
}

/**
 * The money of a dispute the church won is back. A registration this dispute found already cancelled (its latest
 * `disputed` history entry names this dispute and kept the reason it replaced) gets that reason back, so it counts
 * as paid again and stays cancelled as the office wanted. One the dispute itself cancelled has no such entry and is
 * left to the office; so is one whose latest entry is another dispute's, whose money is still gone.
 */
async function restoreReasonBeforeDispute(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  registration: { id: string; status: string; cancel_reason: string | null },
  action: DisputeNoticeAction,
): Promise<{ reason: string | null } | undefined> {
  if (registration.status !== 'CANCELLED' || registration.cancel_reason !== 'dispute') return undefined;
  const disputed = await trx('registration_history')
    .where({ registration_id: registration.id, action: 'disputed' })
    .orderBy('id', 'desc')
    .first<{ changes: { cancelReason?: { from?: string | null }; providerObjectId?: string } } | undefined>('changes');
  const before = disputed?.changes.cancelReason;
  if (!before || !('from' in before) || disputed.changes.providerObjectId !== action.disputeId) return undefined;
  const reason = before.from ?? null;
  const now = ctx.clock.now();
  await trx('registrations').where({ id: registration.id }).update({ cancel_reason: reason, updated_at: now });
  await recordHistory(trx, {
    registrationId: registration.id,
    action: 'dispute_won',
    changes: { cancelReason: { from: 'dispute', to: reason }, amountMinor: action.amountMinor, providerObjectId: action.disputeId },
    actor: 'card provider',
    now,
  });
  return { reason };
}

async function disputeWon(trx: Knex.Transaction, paymentIntentId: string): Promise<boolean> {
  return Boolean(await trx('operations_alerts').where({ kind: 'dispute_won', payment_intent_id: paymentIntentId }).first('id'));
}

/**
 * A refund that failed at the provider: the money is back with the church, the payer has not got it,
 * and the registration the refund cancelled stays cancelled (its places may be taken). Nothing changes
 * here; one alert per refund tells the office to refund another way or register the payer again.
 */
export async function alertFailedRefund(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  action: FailedRefundAction,
): Promise<ReversalOutcome> {
  await lockPaymentIntent(trx, action.paymentIntentId);
  const alerted = await trx('operations_alerts')
    .where({ kind: 'refund_failed', payment_intent_id: action.paymentIntentId })
    .whereRaw(`details->>'refundId' = ?`, [action.refundId])
    .first('id');
  if (alerted) return 'already_alerted';
  const partRestored = await restoreRefundedPart(trx, ctx, eventId, action);
  if (partRestored) return partRestored;
  const registration = await registrationPaidBy(trx, action.paymentIntentId, true);
  const staging = registration ? undefined : await stagingForPaymentIntent(trx, { paymentIntentId: action.paymentIntentId, ids: action.ids });
  // A refund that arrived before its payment completed waits to cancel the registration: it did not happen after all.
  const waitingRefundDropped = (await trx('pending_reversals').where({ payment_intent_id: action.paymentIntentId, kind: 'refund' }).delete()) > 0;
  const refundedHere = registration?.status === 'CANCELLED' && registration.cancel_reason === 'refund';
  if (refundedHere) {
    // The money is back with the church: the cancelled registration counts as paid again (PAID_MINOR_SQL), so the
    // office's figures show what it holds. A refund made again later records 'refund' once more.
    const now = ctx.clock.now();
    await trx('registrations').where({ id: registration.id }).update({ cancel_reason: 'refund_failed', updated_at: now });
    await recordHistory(trx, {
      registrationId: registration.id,
      action: 'refund_failed',
      changes: { cancelReason: { from: 'refund', to: 'refund_failed' }, amountMinor: action.amountMinor, refundId: action.refundId, failureReason: action.failureReason },
      actor: 'card provider',
      now,
    });
  }
  const what = registration
    ? registration.status === 'CANCELLED'
      ? 'its registration stays cancelled; refund the payer another way (or again in the dashboard), then resolve this alert'
      : `its registration is ${registration.status}; check whether the refund was meant for it, then resolve this alert`
    : waitingRefundDropped
      ? 'no registration has it yet: if it is one of ours, its registration will be PAID when the payment is recorded (if it is another tool’s payment on this account, nothing changes here); refund the payer another way if they still want their money back, then resolve this alert'
      : 'no registration has it; refund the payer another way, then resolve this alert';
  await raiseOperationsAlert(trx, ctx, {
    kind: 'refund_failed',
    reason: `a refund of this card payment failed at the provider${action.failureReason ? ` (${action.failureReason})` : ''}, so the money is still with the church: ${what}`,
    paymentIntentId: action.paymentIntentId,
    checkoutId: staging?.id ?? action.ids.checkoutId,
    amountMinor: action.amountMinor,
    details: {
      refundId: action.refundId,
      failureReason: action.failureReason,
      registrationId: registration?.id ?? null,
      registrationStatus: registration?.status ?? null,
      providerEventId: eventId,
    },
  });
  return 'alerted';
}

async function stagingForPaymentIntent(trx: Knex.Transaction, action: Pick<ReverseAction, 'paymentIntentId' | 'ids'>): Promise<StagingRow | undefined> {
  const byPaymentIntent = await trx('checkout_sessions')
    .where({ payment_intent_id: action.paymentIntentId })
    .orderBy('created_at', 'desc')
    .first<StagingRow | undefined>();
  if (byPaymentIntent || !action.ids.checkoutId) return byPaymentIntent;
  return trx('checkout_sessions').where({ id: action.ids.checkoutId }).first<StagingRow | undefined>();
}

/**
 * A failed refund of one card payment of several, which the refund had taken out of the ledger: the money is back
 * with the church, so that payment counts as paid again (a registration it left owing is PAID again, as before the
 * refund), as a failed refund makes a refunded registration count as paid again. The office is told once per refund.
 */
async function restoreRefundedPart(trx: Knex.Transaction, ctx: WebhookContext, eventId: string, action: FailedRefundAction): Promise<ReversalOutcome | undefined> {
  const restored = await restoreCardPart(trx, ctx, action.paymentIntentId, 'refund', {
    action: 'refund_failed',
    changes: { refundId: action.refundId, failureReason: action.failureReason },
  });
  if (!restored) return undefined;
  await raiseOperationsAlert(trx, ctx, {
    kind: 'refund_failed',
    reason:
      `a refund of one card payment (${moneyFormatter(ctx.config.regional)(restored.amountMinor)}) of a registration paying in parts failed at the provider${action.failureReason ? ` (${action.failureReason})` : ''}, ` +
      `so the money is still with the church: that payment counts as paid again and ${restoredStanding(ctx, restored)}; refund the payer another way if the refund was meant, then resolve this alert`,
    paymentIntentId: action.paymentIntentId,
    checkoutId: action.ids.checkoutId,
    amountMinor: action.amountMinor,
    details: {
      refundId: action.refundId,
      failureReason: action.failureReason,
      registrationId: restored.registrationId,
      registrationStatus: restored.status,
      restoredReversal: 'refund',
      providerEventId: eventId,
    },
  });
  return 'alerted';
}
