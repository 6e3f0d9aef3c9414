import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { churchIdentityFrom } from '../../mail/identity.js';
import { queuedMailRow } from '../../mail/queue.js';
import { emailBrandingFrom, loadEmailBranding, type EmailBranding } from '../../mail/render.js';
import { raiseOperationsAlert, type AlertKind } from '../alerts.js';
import { CARD_FEE_LINE_LABEL, type PricedLine } from '../../registrations/pricing.js';
import { renderReceiptWith } from '../receipts.js';
import { lockEventForCompletion, registrationRow, tierShortOfPlaces, type CompletionLock } from '../../registrations/registrations.js';
import { decryptStagedRegistration, type StagedRegistration } from '../staging.js';
import { questionsAsked } from '../../registrations/questions.js';
import { hasAnyAnswer } from '../../registrations/answers.js';
import type { EventRecord } from '../../registrations/event-record.js';
import { answerGroupsOf } from '../answer-lines.js';
import { SEEN_LIMITED_SQL, type CompleteAction, type RecordedCompletion, type SeenEvent } from './claim.js';
import { findStagingRow, type StagingRow, type WebhookContext } from './staging-rows.js';
import { mayStillBePaid } from '../../registrations/card-checkouts.js';
import { alertDisputeOfCancelled } from './reversal.js';
import { counted } from '../../plural.js';
import { moneyFormatter } from '../../money-format.js';
import { lockOpenOffer, markOfferClaimed, OfferNotOpenError } from '../../registrations/waitlist/claim.js';
import { codeUses, type CodeRow } from '../../registrations/codes.js';
import type { WaitlistEntryRow } from '../../registrations/waitlist/entries.js';
import { addonRowsOf, insertAddonRows } from '../../registrations/addon-stock.js';
import { addonStockFailure } from './addon-completion.js';
import { depositLines, depositReceipt, partPaymentOf, recordPartPayment, stagedFirstPaymentMinor, type PartPayment } from '../part-payments.js';

/**
 * A paid checkout (checkout.session.completed with payment settled, or
 * async_payment_succeeded, or reconcile finding it paid): claim the staging row
 * (OPEN, or EXPIRED with its payload kept) → COMPLETED atomically,
 * check everything that could make the registration wrong, then create it PAID
 * (or flip the pay-now registration PENDING → PAID) and queue the receipt. Any
 * failed check ends UNFULFILLED with an alert; the money is never refunded here.
 */

export type { CompleteAction } from './claim.js';
export type CompletionOutcome = 'completed' | 'unfulfilled' | 'already_handled' | 'unknown_checkout' | 'already_alerted' | 'completed_then_cancelled';

interface RegistrationRow {
  id: string;
  event_id: string;
  status: 'PENDING' | 'PAID' | 'CANCELLED';
  contact_name: string;
  contact_email_enc: string;
  line_items: PricedLine[];
  total_minor: number;
  manage_link_version: number;
}

interface Failure {
  kind: Extract<AlertKind, 'sold_out' | 'event_deleted' | 'amount_mismatch' | 'paid_twice' | 'registration_cancelled' | 'balance_already_settled'>;
  reason: string;
}

/** A staging row this transaction has claimed → COMPLETED, with what was read beside it. */
interface ClaimedCheckout {
  claimed: StagingRow;
  /** The pay-now registration, locked before the claim. */
  registration?: RegistrationRow;
  /** The event as read before its lock; absent when the event row is gone. */
  seen?: SeenEvent;
  branding: EmailBranding;
}

/**
 * The common case, a new registration's checkout, already claimed by
 * recordAndClaimCompletion (which also recorded the event and took the
 * payment's lock): check, then write, in two more statements.
 */
export async function completeClaimedCheckout(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  action: CompleteAction,
  claim: Required<Pick<RecordedCompletion, 'claimed'>> & RecordedCompletion,
): Promise<CompletionOutcome> {
  const branding = emailBrandingFrom(churchIdentityFrom(claim.identitySettings, ctx.config), ctx.config);
  return settleClaimedCheckout(trx, ctx, eventId, action, { claimed: claim.claimed, seen: claim.seen, branding });
}

/**
 * Every other paid checkout (pay-now, no id of ours, unknown, late). The
 * caller has recorded the event and holds the payment's advisory lock.
 */
export async function completeCheckout(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  action: CompleteAction,
): Promise<CompletionOutcome> {
  const now = ctx.clock.now();
  const staging = await findStagingRow(trx, action.providerSessionId, action.ids);
  if (!staging) return unknownCheckout(trx, ctx, action);

  // Pay-now: the registration row first, the order startExistingRegistrationCheckout locks in.
  const registration = staging.registration_id
    ? await trx('registrations').where({ id: staging.registration_id }).forUpdate().first<RegistrationRow | undefined>()
    : undefined;

  const [claimed] = await trx('checkout_sessions')
    .where({ id: staging.id })
    // An expired checkout whose payload is kept is honoured as if paid on time, every check included.
    .where(mayStillBePaid)
    .update({
      status: 'COMPLETED',
      completed_at: now,
      payment_intent_id: action.paymentIntentId ?? staging.payment_intent_id,
      // Found by our id while its session was never recorded (the pay-now request died before it could be).
      provider_session_id: staging.provider_session_id ?? action.providerSessionId,
      updated_at: now,
    })
    .returning<StagingRow[]>('*');
  if (!claimed) return lateCompletion(trx, ctx, staging.id, action);

  const seen = await trx('events as e')
    .where({ 'e.id': claimed.event_id })
    .first<SeenEvent | undefined>('e.title', 'e.starts_at', 'e.capacity', 'e.questions', 'e.pricing', trx.raw(`${SEEN_LIMITED_SQL} AS limited`));
  const branding = await loadEmailBranding(trx, ctx.config);
  return settleClaimedCheckout(trx, ctx, eventId, action, { claimed, registration, seen, branding });
}

/**
 * Checks everything that could make the registration wrong, then creates it
 * PAID (or flips the pay-now registration PENDING → PAID) and queues the
 * receipt; a failed check ends UNFULFILLED with an alert.
 */
async function settleClaimedCheckout(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  eventId: string,
  action: CompleteAction,
  { claimed, registration, seen, branding }: ClaimedCheckout,
): Promise<CompletionOutcome> {
  const now = ctx.clock.now();
  const charged = action.amountTotal;
  const staged = claimed.payload_enc ? decryptStagedRegistration(ctx.cipher, claimed.payload_enc) : undefined;
  // A payment of part of a balance (a deposit's registration, an instalment, any part): a ledger row, the total kept.
  const part = registration ? await partPaymentOf(trx, registration.id, claimed) : undefined;
  const payer = staged
    ? { name: staged.contact.name, email: staged.contact.email }
    : registration
      ? { name: registration.contact_name, email: ctx.cipher.decrypt(registration.contact_email_enc) }
      : undefined;

  // Everything that does not depend on the seats is rendered before the event lock, which
  // completions for the same event take in turn: under it only the checks and the writes remain.
  const newRegistrationId = staged ? crypto.randomUUID() : undefined;
  const registrationId = newRegistrationId ?? registration?.id;
  const reference = action.paymentIntentId ?? action.providerSessionId;
  const lines = part?.lines ?? (staged?.schedule ? depositLines(claimed) : staged ? staged.priced.lines : registration ? withCardFee(registration.line_items, claimed.surcharge_minor) : []);
  const answered = staged?.answers && hasAnyAnswer(staged.answers) ? staged.answers : undefined;
  const partReceipt = part?.receipt ?? (staged ? depositReceipt(staged, claimed) : undefined);
  const renderFor = (event: { title: string; startsAt: Date } & Partial<Pick<EventRecord, 'questions' | 'pricing'>>, receiptPart = partReceipt) =>
    payer && registrationId && charged !== null
      ? renderReceiptWith(branding, ctx, {
          registrationId,
          contact: payer,
          event,
          lines,
          answerGroups:
            answered && staged && event.questions && event.pricing
              ? answerGroupsOf({ questions: event.questions, pricing: event.pricing }, answered, staged.attendees.map((a) => a.name), ctx.config.regional)
              : undefined,
          amountMinor: charged,
          ...(receiptPart ? { part: receiptPart } : {}),
          paymentIntentId: reference,
          paidAt: now,
          // A new registration starts at the first version.
          manageLinkVersion: registration?.manage_link_version,
        })
      : undefined;
  let renderedFor: Parameters<typeof renderFor>[0] | undefined = seen
    ? { title: seen.title, startsAt: seen.starts_at, questions: seen.questions ?? [], pricing: seen.pricing }
    : undefined;
  let receipt = renderedFor ? renderFor(renderedFor) : undefined;

  const locked = seen ? await lockEventForCompletion(trx, claimed.event_id, seen.limited, action.paymentIntentId, now) : undefined;
  // An edit committed while this completion waited for the lock: the receipt names the event as it now is, and lists
  // answers by the questions as the locked event asks them (rendered again only then, not under every lock).
  if (seen && locked && seenChanged(seen, locked.event, Boolean(answered))) {
    renderedFor = locked.event;
    receipt = renderFor(renderedFor);
  }
  // A checkout from a waiting-list offer takes the places the offer holds, if it still holds them.
  const offer = locked && !locked.event.deletedAt && staged?.waitlistOffer ? await openOfferOf(trx, claimed.event_id, staged.waitlistOffer, now) : undefined;
  const seats = locked ? placesFor(claimed, locked, offer, now) : undefined;
  // A live checkout held its code's use; one paid after its expiry takes a use only if one is left (counted under the lock).
  const codeUsedUp = locked && staged?.codeId && claimed.expires_at.getTime() <= now.getTime() ? await codeWithNoUseLeft(trx, staged.codeId, now) : undefined;
  const failure =
    settledAlready(checkCompletion(ctx, claimed, action, seats, staged, registration), part) ??
    codeFailure(codeUsedUp) ??
    (await addonStockFailure(trx, locked?.event, staged, claimed, now));
  if (failure) {
    await trx('checkout_sessions').where({ id: claimed.id }).update({ status: 'UNFULFILLED', unfulfilled_reason: failure.kind, updated_at: now });
    await raiseOperationsAlert(trx, ctx, {
      kind: failure.kind,
      reason: failure.reason,
      checkoutId: claimed.id,
      providerSessionId: action.providerSessionId,
      paymentIntentId: action.paymentIntentId ?? undefined,
      amountMinor: charged ?? undefined,
      details: {
        eventId: claimed.event_id,
        expectedMinor: claimed.net_minor + claimed.surcharge_minor,
        registrationId: claimed.registration_id,
        providerEventId: eventId,
      },
      payer,
    });
    if (action.paymentIntentId) await reportEarlyReversal(trx, ctx, action.paymentIntentId, claimed, failure.kind);
    return 'unfulfilled';
  }
  // checkCompletion guarantees these.
  const { event, pendingReversal } = locked as CompletionLock;
  const amount = charged as number;
  const paidId = registrationId as string;
  if (!receipt) throw new Error(`the receipt for checkout ${claimed.id} was not rendered`);
  // A reversal waiting for this payment cancels the registration at once: no receipt for it.
  const receiptRow = pendingReversal ? undefined : queuedMailRow(ctx.cipher, receipt, now);

  if (staged) {
    const registrationInsert = trx('registrations').insert(
      registrationRow(ctx.cipher, {
        id: paidId,
        eventId: event.id,
        // A deposit leaves the rest owing: PENDING, its place kept by the payment (unpaid holds skip it).
        status: staged.schedule ? 'PENDING' : 'PAID',
        method: 'card',
        contact: staged.contact,
        attendees: staged.attendees,
        family: staged.family,
        priced: staged.priced,
        pricedOn: staged.pricedOn,
        codeId: staged.codeId,
        paymentIntentId: action.paymentIntentId ?? undefined,
        ...(staged.answers ? { answers: { questions: questionsAsked(event), values: staged.answers } } : {}),
        now,
      }),
    );
    // The payload has served its purpose: keep only the link to the registration it became.
    const scrub = trx('checkout_sessions').where({ id: claimed.id }).update({ payload_enc: null, registration_id: paidId });
    await writeTogether(trx, [registrationInsert, scrub], receiptRow);
    await insertAddonRows(trx, addonRowsOf(paidId, staged.attendees, staged.addons, staged.priced, now));
    if (staged.schedule) await recordPartPayment(trx, ctx, { registrationId: paidId, claimed, schedule: staged.schedule, paymentIntentId: action.paymentIntentId, now });
    if (offer) await markOfferClaimed(trx, offer, { registrationId: paidId, attendees: staged.attendees.length, actor: 'card provider', now });
  } else if (part) {
    // The receipt says what the ledger says once this payment's row is written, read in this transaction: rendered
    // from the same figures (read under the registration's lock) unless they moved, which would take another writer.
    const after = await recordPartPayment(trx, ctx, { registrationId: paidId, claimed, paymentIntentId: action.paymentIntentId, now, part });
    const moved = after.paidSoFarMinor !== part.receipt.paidSoFarMinor || after.balanceLeftMinor !== part.receipt.balanceLeftMinor;
    const rerendered = moved && receiptRow && renderedFor ? renderFor(renderedFor, after) : undefined;
    await writeTogether(trx, [], rerendered ? queuedMailRow(ctx.cipher, rerendered, now) : receiptRow);
  } else {
    const paid = trx('registrations').where({ id: paidId }).update({
      status: 'PAID',
      payment_method: 'card',
      payment_intent_id: action.paymentIntentId,
      paid_at: now,
      surcharge_minor: claimed.surcharge_minor,
      total_minor: amount,
      line_items: JSON.stringify(lines),
      updated_at: now,
    });
    await writeTogether(trx, [paid], receiptRow);
  }

  if (pendingReversal && action.paymentIntentId && (await applyPendingReversal(trx, ctx, action.paymentIntentId, paidId, claimed, amount))) {
    return 'completed_then_cancelled';
  }
  return 'completed';
}

/** The offer a checkout names, locked, while it still holds its places (even past its time: the sweep has not moved them on). */
async function openOfferOf(trx: Knex.Transaction, eventId: string, claim: { entryId: string; offerSeq: number }, now: Date): Promise<WaitlistEntryRow | undefined> {
  try {
    return await lockOpenOffer(trx, eventId, claim, now, { allowLate: true });
  } catch (error) {
    if (error instanceof OfferNotOpenError) return undefined;
    throw error;
  }
}

/**
 * The seats left as this checkout sees them. A payment completes into the places its own checkout holds
 * (still live: open and unexpired when claimed), or its offer's; a checkout holding none of its own takes
 * only places nobody else holds, never those of another payer's open checkout (lockEventForCompletion).
 */
function placesFor(claimed: StagingRow, locked: CompletionLock, offer: Pick<WaitlistEntryRow, 'places' | 'tier'> | undefined, now: Date): CompletionLock {
  const live = claimed.expires_at.getTime() > now.getTime();
  const ownHold = claimed.places > 0 && live;
  const seatsLeft = ownHold ? locked.seatsLeftForOwnHold : locked.seatsLeft;
  // A ticket type's places likewise: into its own live hold of them, else only places nobody holds; plus the offer's.
  const ownTierHold = live && Object.keys(claimed.tier_places ?? {}).length > 0;
  const tierFree = new Map(ownTierHold ? locked.tierFreeForOwnHold : locked.tierFree);
  if (offer?.tier && tierFree.has(offer.tier)) tierFree.set(offer.tier, (tierFree.get(offer.tier) ?? 0) + offer.places);
  return { ...locked, seatsLeft: seatsLeft === null ? null : seatsLeft + (offer?.places ?? 0), tierFree };
}

/**
 * The writes of a completion as one statement (data-modifying CTEs, which all
 * run whether or not they are read), with the receipt's queue row when there is one.
 */
async function writeTogether(trx: Knex.Transaction, writes: Knex.QueryBuilder[], receiptRow: Record<string, unknown> | undefined): Promise<void> {
  const withWrites = writes.reduce((query, write, index) => query.with(`write_${index}`, write), trx.queryBuilder());
  if (receiptRow) await withWrites.insert(receiptRow).into('queued_mail');
  else await withWrites.select(trx.raw('1'));
}

function checkCompletion(
  ctx: WebhookContext,
  claimed: StagingRow,
  action: CompleteAction,
  locked: CompletionLock | undefined,
  staged: StagedRegistration | undefined,
  registration: RegistrationRow | undefined,
): Failure | undefined {
  const expected = claimed.net_minor + claimed.surcharge_minor;
  const currency = ctx.config.regional.currency.toLowerCase();
  const money = moneyFormatter(ctx.config.regional);
  if (action.amountTotal !== expected || (action.currency !== null && action.currency.toLowerCase() !== currency)) {
    const charged =
      action.amountTotal === null
        ? 'an amount the provider did not say'
        : moneyFormatter({ locale: ctx.config.regional.locale, currency: (action.currency ?? currency).toUpperCase() })(action.amountTotal);
    return { kind: 'amount_mismatch', reason: `charged ${charged} but the registration was priced at ${money(expected)}` };
  }
  if (staged && stagedFirstPaymentMinor(staged, claimed) !== expected) {
    const stagedMinor = stagedFirstPaymentMinor(staged, claimed);
    return { kind: 'amount_mismatch', reason: `the price staged with the checkout (${money(stagedMinor)}) differs from the checkout amount (${money(expected)})` };
  }
  if (!locked || locked.event.deletedAt) {
    return { kind: 'event_deleted', reason: 'the event was deleted while the payer was at the checkout' };
  }
  if (claimed.registration_id) {
    if (registration?.status === 'PAID') {
      return { kind: 'paid_twice', reason: 'paid with pay-now for a registration that was already PAID: it has now been paid twice' };
    }
    if (!registration || registration.status !== 'PENDING') {
      return {
        kind: 'registration_cancelled',
        reason: `paid with pay-now for a registration that is ${registration?.status ?? 'missing'}: nothing is owed for it`,
      };
    }
    return undefined;
  }
  if (!staged) return { kind: 'amount_mismatch', reason: 'the checkout has neither a staged registration nor a registration to pay' };
  const wanted = staged.attendees.length;
  if (locked.seatsLeft !== null && wanted > locked.seatsLeft) {
    return { kind: 'sold_out', reason: `${counted(wanted, 'seat', 'seats')} paid for but only ${locked.seatsLeft} left: the event sold out during checkout` };
  }
  const tierShort = tierShortOfPlaces(staged.attendees, (tier) => locked.tierFree.get(tier) ?? null);
  if (tierShort) {
    const label = locked.event.pricing.tiers.find((tier) => tier.id === tierShort.tier)?.label ?? tierShort.tier;
    return {
      kind: 'sold_out',
      reason: `${counted(tierShort.wanted, `${label} place`, `${label} places`)} paid for but only ${tierShort.left} left: that ticket type sold out during checkout`,
    };
  }
  return undefined;
}

/** A payment towards a balance settled meanwhile (another payment, or help) is told as such: kept, never applied twice. */
function settledAlready(failure: Failure | undefined, part: PartPayment | undefined): Failure | undefined {
  if (failure?.kind !== 'paid_twice' || !part) return failure;
  return {
    kind: 'balance_already_settled',
    reason: 'paid with pay-now towards a balance that was already settled: the payment was kept and not applied (no refund was made)',
  };
}

/** The code (as written) when it has no use left for a payment whose checkout no longer held one. */
async function codeWithNoUseLeft(trx: Knex.Transaction, codeId: string, now: Date): Promise<string | undefined> {
  const row = await trx('discount_codes').where({ id: codeId }).first<Pick<CodeRow, 'code' | 'max_uses'> | undefined>('code', 'max_uses');
  if (!row || row.max_uses === null) return undefined;
  return (await codeUses(trx, codeId, now)) >= row.max_uses ? row.code : undefined;
}

function codeFailure(code: string | undefined): Failure | undefined {
  if (code === undefined) return undefined;
  return {
    kind: 'sold_out',
    reason: `the code ${code} had no use left: the payment came after its checkout had expired and others had used the code meanwhile`,
  };
}

/** A bank-transfer registration paid by card: its lines plus the card fee passed on, so the lines sum to the amount charged. */
function withCardFee(lines: PricedLine[], surcharge: number): PricedLine[] {
  const withoutFee = lines.filter((line) => line.kind !== 'fee');
  return surcharge > 0 ? [...withoutFee, { label: CARD_FEE_LINE_LABEL, amount: surcharge, kind: 'fee' }] : withoutFee;
}

/**
 * Refunds or disputes that arrived before this payment completed: the first to
 * arrive cancels at once and tells the administrators. Any other then finds the
 * registration cancelled, as it would had it arrived after the payment: nothing
 * more to do (reversePayment's `already_cancelled`).
 */
async function applyPendingReversal(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  paymentIntentId: string,
  registrationId: string,
  claimed: StagingRow,
  amount: number,
): Promise<boolean> {
  const [pending, ...later] = await takePendingReversals(trx, paymentIntentId);
  if (!pending) return false;
  const now = ctx.clock.now();
  await trx('registrations')
    .where({ id: registrationId })
    .update({ status: 'CANCELLED', cancelled_at: now, cancel_reason: pending.kind, updated_at: now });
  await raiseOperationsAlert(trx, ctx, {
    kind: 'reversal_applied',
    reason: `a ${pending.kind} of this payment arrived before the payment itself; the registration was created and cancelled at once`,
    checkoutId: claimed.id,
    providerSessionId: claimed.provider_session_id ?? undefined,
    paymentIntentId,
    amountMinor: amount,
    details: { registrationId, reversalEventId: pending.provider_event_id },
  });
  // What would have happened had they arrived after the payment: a dispute of the now-cancelled registration is told.
  for (const reversal of later.filter((r) => r.kind === 'dispute')) {
    await alertDisputeOfCancelled(trx, ctx, {
      paymentIntentId,
      registrationId,
      cancelReason: pending.kind,
      providerEventId: reversal.provider_event_id,
      checkoutId: claimed.id,
    });
  }
  return true;
}

interface PendingReversal {
  kind: string;
  provider_event_id: string;
}

/**
 * Every reversal waiting for this PaymentIntent (one per kind), deleted and
 * returned in the order they arrived: created_at, then kind for a tie.
 */
async function takePendingReversals(trx: Knex.Transaction, paymentIntentId: string): Promise<PendingReversal[]> {
  const taken = trx('pending_reversals')
    .where({ payment_intent_id: paymentIntentId })
    .delete()
    .returning(['kind', 'provider_event_id', 'created_at']);
  return trx
    .with('taken', taken)
    .from('taken')
    .orderBy([{ column: 'created_at' }, { column: 'kind' }])
    .select<PendingReversal[]>('kind', 'provider_event_id');
}

/** The row can no longer be completed: a redelivery under a new event id (nothing to do), or paid after its payload was scrubbed. */
async function lateCompletion(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  stagingId: string,
  action: CompleteAction,
): Promise<CompletionOutcome> {
  const now = ctx.clock.now();
  const [expired] = await trx('checkout_sessions')
    .where({ id: stagingId, status: 'EXPIRED' })
    .update({
      status: 'UNFULFILLED',
      unfulfilled_reason: 'checkout_expired',
      payment_intent_id: action.paymentIntentId,
      provider_session_id: trx.raw('COALESCE(provider_session_id, ?)', [action.providerSessionId]),
      updated_at: now,
    })
    .returning<StagingRow[]>('*');
  if (!expired) return 'already_handled';
  await raiseOperationsAlert(trx, ctx, {
    kind: 'checkout_expired',
    reason: 'the payment completed after our checkout record had expired and its details were scrubbed; no registration was made',
    checkoutId: expired.id,
    providerSessionId: action.providerSessionId,
    paymentIntentId: action.paymentIntentId ?? undefined,
    amountMinor: action.amountTotal ?? undefined,
    details: { eventId: expired.event_id, registrationId: expired.registration_id },
  });
  if (action.paymentIntentId) await reportEarlyReversal(trx, ctx, action.paymentIntentId, expired, 'checkout_expired');
  return 'unfulfilled';
}

/**
 * Refunds or disputes that arrived before this payment, which is now kept
 * without a registration: the administrator following up the UNFULFILLED alert
 * must know the money already went back (or is disputed), or they might refund
 * it a second time. Each kind is reported as it is when it comes after: one
 * alert per kind, in the order they arrived.
 */
async function reportEarlyReversal(
  trx: Knex.Transaction,
  ctx: WebhookContext,
  paymentIntentId: string,
  staging: StagingRow,
  reason: string,
): Promise<void> {
  for (const pending of await takePendingReversals(trx, paymentIntentId)) {
    await raiseOperationsAlert(trx, ctx, {
      kind: 'reversal_unfulfilled',
      reason: `a ${pending.kind} of this payment arrived before the payment itself, which was kept without a registration (${reason}); check it before contacting the payer`,
      checkoutId: staging.id,
      providerSessionId: staging.provider_session_id ?? undefined,
      paymentIntentId,
      details: { reversal: pending.kind, reversalEventId: pending.provider_event_id },
    });
  }
}

/**
 * A paid session we have no staging row for. Ours by its metadata → money without a record → alert; else not ours.
 * One alert per session, resolved or not, whichever sees it first: its completion and async success events,
 * a redelivery under a new event id, or reconcile (under its own event id); under a lock on the session.
 */
async function unknownCheckout(trx: Knex.Transaction, ctx: WebhookContext, action: CompleteAction): Promise<CompletionOutcome> {
  if (!action.ids.checkoutId) return 'unknown_checkout';
  await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`unknown_checkout:${action.providerSessionId}`]);
  const alerted = await trx('operations_alerts').where({ kind: 'unknown_checkout', provider_session_id: action.providerSessionId }).first('id');
  if (alerted) return 'already_alerted';
  await raiseOperationsAlert(trx, ctx, {
    kind: 'unknown_checkout',
    reason: 'a checkout carrying our id was paid, but there is no record of it here',
    checkoutId: action.ids.checkoutId,
    providerSessionId: action.providerSessionId,
    paymentIntentId: action.paymentIntentId ?? undefined,
    amountMinor: action.amountTotal ?? undefined,
  });
  return 'unknown_checkout';
}

/** Whether the event moved between the read before the lock and the locked row, in what the receipt shows. */
function seenChanged(seen: SeenEvent, locked: EventRecord, withAnswers: boolean): boolean {
  if (locked.title !== seen.title || locked.startsAt.getTime() !== seen.starts_at.getTime()) return true;
  return withAnswers && (JSON.stringify(locked.questions) !== JSON.stringify(seen.questions ?? []) || JSON.stringify(locked.pricing) !== JSON.stringify(seen.pricing));
}
