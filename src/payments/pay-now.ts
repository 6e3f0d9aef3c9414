import { setTimeout as delay } from 'node:timers/promises';
import type { Knex } from 'knex';
import { eventFromRow, type EventRecord } from '../registrations/event-record.js';
import type { AppContext } from '../context.js';
import { AppError, NotFoundError } from '../errors.js';
import { getCardFeeRate } from '../settings.js';
import { assertCardMinimum } from './card-minimum.js';
import { openProviderSession, type ProviderSessionRef, type ProviderSessionRequest, type StartedCheckout } from './checkout.js';
import { cardPaymentPossible, registrationUrl } from './links.js';
import { CARD_FEE_LINE_LABEL, DISCOUNTED_LINE_LABEL, cardSurcharge, type PricedLine } from '../registrations/pricing.js';
import { createProviderClient, providerErrorDetails, providerUnavailable } from './provider.js';
import { CHECKOUT_EXPIRY_MS } from './staging.js';
import { confirmCheckoutsWithProvider } from './reconcile/confirm.js';
import { confirmUnpaid } from './webhook/handle.js';
import { abandonedClaim, mayStillBePaid, OPENING_LEASE_MS } from '../registrations/card-checkouts.js';
import { heldUntil } from './hold-release.js';
import { balancePaymentDue } from './balance-checkout.js';
import { moneyFormatter } from '../money-format.js';
import { PART_PAYMENT_LINE_LABEL, partPaymentLines } from './deposit-checkout.js';

export type NotPayableReason = 'paid' | 'cancelled' | 'free' | 'card_unavailable' | 'event_deleted' | 'processing' | 'part_paid' | 'hold_ended' | 'event_started';

export const NOT_PAYABLE_MESSAGES: Record<NotPayableReason, string> = {
  paid: 'This registration is already paid.',
  cancelled: 'This registration was cancelled, so there is nothing to pay.',
  free: 'This registration is free, so there is nothing to pay.',
  card_unavailable: 'Card payment is not available for this event; please pay by bank transfer.',
  event_deleted: 'This event has been cancelled, so there is nothing to pay.',
  processing:
    'A card payment for this registration may still be on its way. We will email you as soon as it is confirmed; if you were charged you do not need to pay again.',
  part_paid: 'Part of this registration has already been paid to the church; please pay the balance by bank transfer.',
  event_started: 'The event has started, so the balance can no longer be paid online; please pay it at the door.',
  hold_ended:
    'The time to pay for this registration has ended, so its places are being released for others and it can no longer be paid. If places are still free, you are welcome to register again.',
};

/** Pay-now refused; `reason` says why, and the message says it to the registrant. */
export class NotPayableError extends AppError {
  constructor(readonly reason: NotPayableReason) {
    super('not_payable', NOT_PAYABLE_MESSAGES[reason], { httpStatus: 409 });
    this.name = 'NotPayableError';
  }
}

/**
 * A session handed out again needs time left to pay in (card details, the bank's check): one that
 * closed under the payer would leave the pages saying "processing" until the provider's expiry notice.
 */
export const MIN_TIME_LEFT_TO_REUSE_MS = 10 * 60_000;

export interface PayNowCheckout extends StartedCheckout {
  /** true when an in-progress provider session was handed out again instead of opening a second one. */
  reused: boolean;
}

interface RegistrationRow {
  id: string;
  event_id: string;
  status: 'PENDING' | 'PAID' | 'CANCELLED';
  contact_email_enc: string;
  line_items: unknown;
  total_minor: number;
  surcharge_minor: number;
  /** Signs the registration page's token that the provider's cancel button leads back to. */
  manage_link_version: number;
}

export interface InFlightCheckoutRow {
  id: string;
  status: 'OPEN' | 'EXPIRED';
  created_at: Date;
  expires_at: Date;
  provider_session_id: string | null;
  provider_url: string | null;
  payment_intent_id: string | null;
  net_minor: number;
  surcharge_minor: number;
  balance_part?: boolean;
}

/** A registration's pay-now turn, decided under its row lock; every provider call happens after the lock is gone. */
type PayNowStep =
  | { kind: 'reuse'; checkout: PayNowCheckout }
  /** A live session that charges other than shown, or has too little time left: expire it at the provider, then decide again. */
  | { kind: 'replace'; live: InFlightCheckoutRow & { provider_session_id: string } }
  /** Another request is opening this registration's session (its row claimed, the provider not yet answered). */
  | { kind: 'wait' }
  /** Earlier checkouts a payment may still arrive for: ask the provider what became of them, then decide again. */
  | { kind: 'confirm'; checkoutIds: string[] }
  | { kind: 'open'; request: ProviderSessionRequest };

// Defined beside the checkout predicates, which count a claim past its lease as no payment in flight.
export { OPENING_LEASE_MS };
const WAIT_STEP_MS = 100;

/**
 * startExistingRegistrationCheckout (pay-now): card payment for a PENDING,
 * non-free registration (a bank-transfer one). Under the registration's row lock
 * (FOR UPDATE) it decides, and when a session must be opened it claims an OPEN
 * staging row without one; the provider is called only after that transaction
 * ends, with an idempotency key, and the session is then recorded on the row. A
 * concurrent attempt finding that claim waits (without a lock or a connection)
 * and then reuses the session, as long as it charges what a new one would (the
 * pay-now page shows today's card fee) and has time left to pay in; any other is
 * expired at the provider and replaced. While an earlier checkout may still be
 * paid (expired but not confirmed unpaid), the provider is asked what became of it
 * (reconcile/confirm.ts: expired there and recorded unpaid, or its payment completed);
 * only while it still may be paid is no new one opened. A claim whose
 * request died (older than OPENING_LEASE_MS) never handed a session out, so it
 * is recorded as unpaid and replaced. The staging row carries registration_id
 * instead of a payload; a provider failure removes it. On an event with
 * unpaidHoldDays, from the hold's end (heldUntil) nothing is opened or replaced:
 * a live session opened before then is handed out again, and may be paid within
 * its own lifetime, but pay-now never keeps a hold past the time it was told.
 */
export async function startExistingRegistrationCheckout(
  ctx: AppContext,
  input: { registrationId: string; /** Part of the balance (at least the event's minimumPayment, or the instalment due); absent: all of it. */ amountMinor?: number },
): Promise<PayNowCheckout> {
  const deadline = performance.now() + OPENING_LEASE_MS;
  // Each earlier checkout is asked about once per request: one the provider leaves uncertain stays "processing".
  const asked = new Set<string>();
  for (;;) {
    const step = await decidePayNow(ctx, input.registrationId, asked, input.amountMinor);
    if (step.kind === 'reuse') return step.checkout;
    if (step.kind === 'open') return openAndRecord(ctx, step.request);
    if (step.kind === 'confirm') {
      step.checkoutIds.forEach((id) => asked.add(id));
      const report = await confirmCheckoutsWithProvider(ctx, step.checkoutIds);
      if (report.unreachable) throw new NotPayableError('processing');
      continue;
    }
    if (performance.now() > deadline) throw providerUnavailable(new Error('another pay-now for this registration is still opening its session'));
    if (step.kind === 'replace') await expireUnpaidSession(ctx, step.live);
    else await delay(WAIT_STEP_MS);
  }
}

/**
 * For the pay-now page (GET): a registration whose earlier card attempt is past its expiry but not yet
 * confirmed by the provider is asked about first, so a member following a pay-now link after abandoning
 * an attempt is not told a payment "may be on its way" until the sweep runs. False when the provider
 * could not be reached (nothing changed).
 */
export async function confirmEarlierCardAttempts(ctx: AppContext, registrationId: string): Promise<boolean> {
  const uncertain = (await inFlightCheckoutsOf(ctx.db, registrationId)).filter(
    (row) => row.provider_session_id !== null && row.expires_at <= ctx.clock.now(),
  );
  if (uncertain.length === 0) return true;
  return !(await confirmCheckoutsWithProvider(ctx, uncertain.map((row) => row.id))).unreachable;
}

/** The decision and, to open a session, the claimed staging row: one short transaction under the registration lock. */
async function decidePayNow(ctx: AppContext, registrationId: string, asked: ReadonlySet<string>, amountMinor: number | undefined): Promise<PayNowStep> {
  return ctx.db.transaction(async (trx) => {
    const registration = await trx('registrations')
      .where({ id: registrationId })
      .forUpdate()
      .first<RegistrationRow | undefined>('id', 'event_id', 'status', 'contact_email_enc', 'line_items', 'total_minor', 'surcharge_minor', 'manage_link_version');
    if (!registration) throw new NotFoundError('registration');
    const eventRow = await trx('events').where({ id: registration.event_id }).first();
    const event = eventFromRow(eventRow);
    assertPayable(ctx, registration, event);
    const now = ctx.clock.now();
    // Paying in parts (a schedule, an earlier payment or help, or a part asked for): what is due now, from the ledger, never repriced.
    const part = await balancePaymentDue(trx, { registrationId: registration.id, event, amountMinor, now, money: moneyFormatter(ctx.config.regional) });
    const net = part?.netMinor ?? registration.total_minor - registration.surcharge_minor;
    const surcharge = event.passCardFee ? cardSurcharge(net, await getCardFeeRate(trx)) : 0;
    // The hold ends at the time the registrant was told: a checkout opened before then may still be paid
    // within its own lifetime (the sweep waits for it), but none is opened, or opened anew, from then on.
    const holdEnded = await unpaidHoldEnded(ctx, trx, registration.id, now);
    const inFlight = await withoutAbandonedClaims(trx, await inFlightCheckoutsOf(trx, registration.id), now);
    if (inFlight.some((row) => row.provider_session_id === null)) return { kind: 'wait' };
    const live = resumableCheckout(inFlight, now);
    if (live) {
      // The pay-now page shows today's fee: a session opened before the rate (or the event's fee setting) changed would charge another amount.
      const chargesWhatIsShown = live.net_minor === net && live.surcharge_minor === surcharge && Boolean(live.balance_part) === (part !== undefined);
      const timeToPay = live.expires_at.getTime() - now.getTime() >= MIN_TIME_LEFT_TO_REUSE_MS;
      // Past the hold's end the open session is the last chance to pay: handed out with whatever time it has left.
      if (chargesWhatIsShown && (timeToPay || holdEnded)) return { kind: 'reuse', checkout: { checkoutId: live.id, redirectUrl: live.provider_url, reused: true } };
      if (holdEnded) throw new NotPayableError('hold_ended');
      // Not expired at the provider to make way for a session it would refuse.
      assertCardMinimum(ctx.config, part ? 'pay-now-part' : 'pay-now', net + surcharge);
      return { kind: 'replace', live };
    }
    if (inFlight.length > 0) {
      // Expired (or settling) but not confirmed unpaid: the provider may still confirm a payment, so a second one could
      // double-charge. The provider is asked (once per request) before the registrant is told so.
      const toAsk = inFlight.filter((row) => row.provider_session_id !== null && !asked.has(row.id)).map((row) => row.id);
      if (toAsk.length > 0) return { kind: 'confirm', checkoutIds: toAsk };
      throw new NotPayableError('processing');
    }
    if (holdEnded) throw new NotPayableError('hold_ended');
    // Below the provider's minimum no session is claimed or opened: the registrant is sent to bank transfer. A part is
    // judged on what this checkout charges (the part and its own card fee), never on the registration's total.
    assertCardMinimum(ctx.config, part ? 'pay-now-part' : 'pay-now', net + surcharge);

    const expiresAt = new Date(now.getTime() + CHECKOUT_EXPIRY_MS);
    const [staged] = await trx('checkout_sessions')
      .insert({
        event_id: event.id,
        registration_id: registration.id,
        status: 'OPEN',
        expires_at: expiresAt,
        net_minor: net,
        surcharge_minor: surcharge,
        balance_part: part !== undefined,
        created_at: now,
        updated_at: now,
      })
      .returning<Array<{ id: string }>>('id');
    const checkoutId = (staged as { id: string }).id;
    return {
      kind: 'open',
      request: {
        checkoutId,
        event,
        registrationId: registration.id,
        lines: part ? partPaymentLines(PART_PAYMENT_LINE_LABEL, net, surcharge) : payNowLines(registration.line_items, net, surcharge),
        customerEmail: ctx.cipher.decrypt(registration.contact_email_enc),
        expiresAt,
        cancelUrl: registrationUrl(ctx.config, registration.id, registration.manage_link_version),
        idempotencyKey: `paynow:${checkoutId}`,
        ...(part ? { minimumPath: 'pay-now-part' as const } : {}),
      },
    };
  });
}

/** Whether the registration's unpaid hold (the event's unpaidHoldDays) has reached the end it was told: heldUntil. */
export async function unpaidHoldEnded(ctx: Pick<AppContext, 'config'>, db: Knex | Knex.Transaction, registrationId: string, now: Date): Promise<boolean> {
  const releaseAt = await heldUntil(db, registrationId, ctx.config.regional.timeZone);
  return releaseAt !== undefined && releaseAt.getTime() <= now.getTime();
}

/**
 * Claimed rows whose request died before recording a session (older than the lease): the session's
 * address was never handed out, so nothing can be paid on it. Recorded as unpaid, and left out.
 */
async function withoutAbandonedClaims(trx: Knex.Transaction, inFlight: InFlightCheckoutRow[], now: Date): Promise<InFlightCheckoutRow[]> {
  const abandoned: InFlightCheckoutRow[] = [];
  for (const row of inFlight.filter((candidate) => abandonedClaim(candidate, now))) {
    // Only while it still has no session: a request recording its session at the last moment of its lease
    // (committed while we read) keeps its row, and stays in flight.
    if (await confirmUnpaid(trx, row.id, now, (stillAbandoned) => void stillAbandoned.where('status', 'OPEN').whereNull('provider_session_id'))) abandoned.push(row);
  }
  return inFlight.filter((row) => !abandoned.includes(row));
}


/**
 * The provider call, with no transaction open, then the session recorded on the claimed row. A row
 * taken over meanwhile, or one whose lease is over (this request outlived it: the pages, the office
 * and the reminders already count the claim as abandoned), is not recorded, and its address is not handed out.
 */
async function openAndRecord(ctx: AppContext, request: ProviderSessionRequest): Promise<PayNowCheckout> {
  let session: ProviderSessionRef;
  try {
    session = await openProviderSession(ctx, request);
  } catch (error) {
    await ctx.db('checkout_sessions').where({ id: request.checkoutId, status: 'OPEN' }).whereNull('provider_session_id').delete();
    throw error;
  }
  const now = ctx.clock.now();
  const recorded = await ctx.db('checkout_sessions')
    .where({ id: request.checkoutId, status: 'OPEN' })
    .whereNull('provider_session_id')
    .where('created_at', '>', new Date(now.getTime() - OPENING_LEASE_MS))
    .update({ provider_session_id: session.id, provider_url: session.url, updated_at: now });
  if (recorded === 0) throw providerUnavailable(new Error(`checkout ${request.checkoutId} was taken over, or its lease ran out, while its session was being opened`));
  return { checkoutId: request.checkoutId, redirectUrl: session.url, reused: false };
}

/**
 * Closes a live session that has taken no payment at the provider, so a new one can be opened in its place:
 * the provider refuses to expire a session that was paid meanwhile (its completion not yet delivered), and
 * then nothing new is opened. Once the provider reports it expired it is recorded as confirmed unpaid.
 */
async function expireUnpaidSession(ctx: AppContext, live: InFlightCheckoutRow & { provider_session_id: string }): Promise<void> {
  const provider = await createProviderClient(ctx.config);
  let status: string | null;
  try {
    status = (await provider.checkout.sessions.expire(live.provider_session_id)).status;
  } catch (error) {
    // Refused (not open any more), or the answer was lost: what the session is now decides.
    try {
      status = (await provider.checkout.sessions.retrieve(live.provider_session_id)).status;
    } catch {
      ctx.logger.error({ checkoutId: live.id, provider: providerErrorDetails(error) }, 'expiring the earlier pay-now session failed');
      throw providerUnavailable(error);
    }
    if (status === 'open') {
      ctx.logger.error({ checkoutId: live.id, provider: providerErrorDetails(error) }, 'expiring the earlier pay-now session failed');
      throw providerUnavailable(error);
    }
  }
  if (status !== 'expired') throw new NotPayableError('processing');
  await confirmUnpaid(ctx.db, live.id, ctx.clock.now());
}

function assertPayable(ctx: AppContext, registration: RegistrationRow, event: EventRecord): void {
  if (registration.status === 'PAID') throw new NotPayableError('paid');
  if (registration.status === 'CANCELLED') throw new NotPayableError('cancelled');
  if (registration.total_minor <= 0) throw new NotPayableError('free');
  if (event.deletedAt) throw new NotPayableError('event_deleted');
  if (!cardPaymentPossible(ctx.config, { online_payment: event.onlinePayment })) throw new NotPayableError('card_unavailable');
}

/**
 * The registration's pay-now checkouts a card payment may still arrive for:
 * OPEN, or EXPIRED with the payload kept (not scrubbed, not confirmed unpaid).
 */
export async function inFlightCheckoutsOf(db: Knex, registrationId: string): Promise<InFlightCheckoutRow[]> {
  return db('checkout_sessions')
    .where({ registration_id: registrationId })
    .where(mayStillBePaid)
    .orderBy('expires_at', 'desc')
    .select<InFlightCheckoutRow[]>('id', 'status', 'created_at', 'expires_at', 'provider_session_id', 'provider_url', 'payment_intent_id', 'net_minor', 'surcharge_minor', 'balance_part');
}

/**
 * The registration's one checkout in flight when it is a live session that has taken no payment
 * (no PaymentIntent yet): handing it out again cannot charge twice, because a provider session
 * takes one payment. Anything else in flight may still be paid, so nothing is offered.
 */
export function resumableCheckout(
  inFlight: InFlightCheckoutRow[],
  now: Date,
): (InFlightCheckoutRow & { provider_session_id: string; provider_url: string }) | undefined {
  if (inFlight.length !== 1) return undefined;
  const [row] = inFlight as [InFlightCheckoutRow];
  const live =
    row.status === 'OPEN' && row.expires_at > now && row.provider_session_id !== null && row.provider_url !== null && row.payment_intent_id === null;
  return live ? (row as InFlightCheckoutRow & { provider_session_id: string; provider_url: string }) : undefined;
}

/**
 * The order for an existing registration: the lines it was priced with (what
 * the registrant was shown and owes, even if the event's prices changed since),
 * plus today's card fee line when the event passes the fee on. Lines that do
 * not add up to the amount owed collapse to one "Registration" line.
 */
export function payNowLines(storedLines: unknown, net: number, surcharge: number): PricedLine[] {
  const owed = Array.isArray(storedLines) ? storedLines.filter(isPricedLine).filter((line) => line.kind !== 'fee') : [];
  const sum = owed.reduce((total, line) => total + line.amount, 0);
  const lines: PricedLine[] =
    owed.length > 0 && sum === net ? owed : [{ label: DISCOUNTED_LINE_LABEL, amount: net, kind: 'registration' }];
  if (surcharge > 0) lines.push({ label: CARD_FEE_LINE_LABEL, amount: surcharge, kind: 'fee' });
  return lines;
}

function isPricedLine(value: unknown): value is PricedLine {
  if (!value || typeof value !== 'object') return false;
  const line = value as Record<string, unknown>;
  return (
    typeof line.label === 'string' &&
    Number.isInteger(line.amount) &&
    (line.amount as number) >= 0 &&
    typeof line.kind === 'string'
  );
}
