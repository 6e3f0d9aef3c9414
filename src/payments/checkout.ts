import type { EventRecord } from '../registrations/event-record.js';
import type { AppContext } from '../context.js';
import { AppError, NotFoundError } from '../errors.js';
import { getCardFeeRate } from '../settings.js';
import { assertCardMinimum, cardAmountTooSmall, cardMinimumOf, isProviderAmountTooSmall, type CardMinimumPath } from './card-minimum.js';
import { providerLineItems } from './line-items.js';
import { cancelledCheckoutUrl, cardPaymentPossible, publicBaseUrl } from './links.js';
import { priceRegistration, type AttendeeChoice, type PricedLine } from '../registrations/pricing.js';
import { createProviderClient, providerErrorDetails, providerUnavailable } from './provider.js';
import type { RegistrationContact } from '../registrations/registrations.js';
import type { RegistrationAnswers } from '../registrations/answers.js';
import { setTimeout as delay } from 'node:timers/promises';
import { localDay } from '../local-time.js';
import { CodeRefusedError, codeTerms, findCode, usableCode, type CodeRow } from '../registrations/codes.js';
import { placesForNewCheckout, type CheckoutHold, type CheckoutHoldCapError } from './checkout-hold.js';
import { offerCheckoutStep, type OfferCheckoutStep } from './offer-checkout.js';
import type { SoldOutError, TierFullError } from './registration-errors.js';
import { OPENING_LEASE_MS } from '../registrations/card-checkouts.js';
import { CHECKOUT_EXPIRY_MS, encryptStagedRegistration, type CheckoutMetadata } from './staging.js';
import { takeAddonStock, type AddonSoldOutError } from '../registrations/addon-stock.js';
import type { AddonPick } from '../registrations/addons.js';
import { firstCardPayment } from './deposit-checkout.js';
import type { PaymentChoice } from '../registrations/balance-terms.js';

export interface EventCheckoutInput {
  event: EventRecord;
  contact: RegistrationContact;
  attendees: AttendeeChoice[];
  family: boolean;
  /** A waiting-list offer, checked open here under the event's lock: its places are held, so the public count is not asked. */
  waitlistOffer?: { entryId: string; offerSeq: number };
  /** The public form's client (clientKey): its open checkouts count toward the event's unpaid places per client. */
  client?: string;
  /** Validated answers to the event's questions, staged with the payload. */
  answers?: RegistrationAnswers;
  /** A code for this registration: judged, and one use of it held by the checkout, under the event's lock. */
  code?: string;
  /** Per-registration add-ons; the checkout holds the units of stocked ones (each attendee's too) under the event's lock. */
  addons?: AddonPick[];
  /** Deposit or instalments (the event's balance terms): the checkout charges the deposit; absent or 'full': the whole total. */
  choice?: PaymentChoice;
  /** The card fee rate as the form's page read it with the event just before; else read here. */
  cardFeeRate?: { percent: number; fixed: number };
}

export interface StartedCheckout {
  /** checkout_sessions.id of the staging row. */
  checkoutId: string;
  /** The provider's hosted checkout page: answer the registrant with a 303 to it. */
  redirectUrl: string;
}

/**
 * startEventCheckout: a new registration paid by card. Priced here on the
 * server, staged (encrypted) as an OPEN checkout_sessions row, then a provider
 * Checkout Session is opened for exactly the priced lines. No registration
 * exists until the webhook confirms the payment, but the checkout holds its
 * places from here (checkout-hold.ts) until it is paid, expires or fails, so the
 * payer is not charged for a place taken meanwhile. The event's lock is taken
 * only for the hold, never while the provider is called. A checkout from a
 * waiting-list offer holds none (the offer does) and is one per offer
 * (offer-checkout.ts): a second attempt gets the open one's page again.
 */
export async function startEventCheckout(ctx: AppContext, input: EventCheckoutInput): Promise<StartedCheckout> {
  const { event } = input;
  if (event.deletedAt) throw new NotFoundError('event');
  assertCardPaymentPossible(ctx, event);

  const cardFee = event.passCardFee ? (input.cardFeeRate ?? (await getCardFeeRate(ctx.db))) : undefined;
  // The price is fixed now, when the checkout is created, and staged with it: a payment after a price step still
  // pays what the payer was shown, and the webhook checks the charge against these amounts, never the event's.
  const pricedOn = localDay(ctx.clock.now(), ctx.config.regional.timeZone);
  // The code's terms never change (a code can only be disabled): priced with them here, judged again under the lock.
  const code = input.code !== undefined ? await findCode(ctx.db, event.id, input.code) : undefined;
  if (input.code !== undefined && !code) throw new CodeRefusedError('unknown');
  const priced = priceRegistration(
    event.pricing,
    { attendees: input.attendees, family: input.family, addons: input.addons, ...(code ? { code: codeTerms(code) } : {}) },
    { cardFee, day: pricedOn },
  );
  if (priced.free) {
    throw new AppError('free_registration', 'this registration costs nothing, so there is no card payment to take', {
      httpStatus: 409,
    });
  }
  const first = firstCardPayment(event, input.choice, priced, { attendees: input.attendees.length, today: pricedOn, cardFee });
  // Below the provider's minimum (the card fee included) the provider would refuse the session: say so now,
  // before anything is staged or sent, and let the member choose bank transfer.
  assertCardMinimum(ctx.config, first ? 'registration-deposit' : 'registration', first ? first.netMinor + first.surchargeMinor : priced.total);

  const payloadEnc = encryptStagedRegistration(ctx.cipher, {
    version: 1,
    contact: input.contact,
    attendees: input.attendees,
    family: input.family,
    priced: first?.priced ?? priced,
    pricedOn,
    ...(first ? { schedule: first.schedule } : {}),
    ...(code ? { codeId: code.id } : {}),
    ...(input.addons?.length ? { addons: input.addons } : {}),
    ...(input.waitlistOffer ? { waitlistOffer: input.waitlistOffer } : {}),
    ...(input.answers ? { answers: input.answers } : {}),
  });
  const staging = await stageUntilDecided(ctx, input, {
    payloadEnc,
    net: first?.netMinor ?? priced.net,
    surcharge: first?.surchargeMinor ?? priced.surcharge,
    pricedOn,
    code,
  });
  if (staging.kind === 'resume') return { checkoutId: staging.checkoutId, redirectUrl: staging.redirectUrl };
  const { checkoutId, expiresAt } = staging;

  let session: ProviderSessionRef;
  try {
    session = await openProviderSession(ctx, {
      checkoutId,
      event,
      lines: first?.lines ?? priced.lines,
      customerEmail: input.contact.email,
      expiresAt,
      cancelUrl: cancelledCheckoutUrl(ctx.config, event.slug, checkoutId),
      idempotencyKey: `checkout:${checkoutId}`,
      ...(first ? { minimumPath: 'registration-deposit' as const } : {}),
    });
  } catch (error) {
    // The payer never saw a provider page, so nothing can be paid against this row: close it and scrub the payload.
    const now = ctx.clock.now();
    await ctx.db('checkout_sessions')
      .where({ id: checkoutId, status: 'OPEN' })
      .update({ status: 'EXPIRED', payload_enc: null, scrubbed_at: now, unpaid_confirmed_at: now, updated_at: now });
    throw error;
  }
  const now = ctx.clock.now();
  const record = ctx.db('checkout_sessions').where({ id: checkoutId });
  // An offer's checkout whose lease ran out while the provider answered may have been taken for abandoned by
  // another attempt from the same offer (which then opened its own): its page is not recorded or handed out.
  if (input.waitlistOffer) record.where('status', 'OPEN').where('created_at', '>', new Date(now.getTime() - OPENING_LEASE_MS));
  const recorded = await record.update({ provider_session_id: session.id, provider_url: session.url, updated_at: now });
  if (recorded === 0) throw providerUnavailable(new Error(`checkout ${checkoutId}'s lease ran out while its session was being opened`));
  return { checkoutId, redirectUrl: session.url };
}

type StagingStep = { kind: 'staged'; checkoutId: string; expiresAt: Date } | Extract<OfferCheckoutStep, { kind: 'resume' }>;
const WAIT_STEP_MS = 100;

/**
 * The staging row, inserted under the event's lock (released before the provider is called). For an offer,
 * its open checkout is resumed instead; one being opened by another request is waited for (without a lock
 * or a connection), at most for the opening lease, after which a claim that never recorded its session is
 * abandoned (openOfferCheckoutAs) and a new one staged.
 */
async function stageUntilDecided(
  ctx: AppContext,
  input: EventCheckoutInput,
  row: { payloadEnc: string; net: number; surcharge: number; pricedOn: string; code: CodeRow | undefined },
): Promise<StagingStep> {
  const { event } = input;
  const deadline = performance.now() + OPENING_LEASE_MS + 10_000;
  for (;;) {
    const now = ctx.clock.now();
    const expiresAt = new Date(now.getTime() + CHECKOUT_EXPIRY_MS);
    const step = await ctx.db.transaction(async (trx): Promise<StagingStep | { kind: 'wait' } | SoldOutError | TierFullError | CheckoutHoldCapError | AddonSoldOutError> => {
      let hold: CheckoutHold | SoldOutError | TierFullError | CheckoutHoldCapError;
      if (input.waitlistOffer) {
        const offerStep = await offerCheckoutStep(trx, event, input.waitlistOffer, input.attendees, now);
        if (offerStep.kind === 'resume' || offerStep.kind === 'wait') return offerStep;
        hold = offerStep.hold;
      } else {
        hold = await placesForNewCheckout(trx, event, input.attendees, input.client, now);
      }
      if (hold instanceof Error) return hold;
      const { places, tierPlaces } = hold;
      // Under the event's lock (taken for the hold): the checkout holds one use of its code while it is open.
      if (row.code) await usableCode(trx, event, row.code.code, { day: row.pricedOn, attendees: input.attendees, now });
      // And the units of its stocked add-ons, counted as places are (the event's lock is held).
      const addonUnits = await takeAddonStock(trx, event, input.attendees, input.addons, now);
      if (addonUnits instanceof Error) return addonUnits;
      const [staged] = await trx('checkout_sessions')
        .insert({
          event_id: event.id,
          status: 'OPEN',
          expires_at: expiresAt,
          payload_enc: row.payloadEnc,
          net_minor: row.net,
          surcharge_minor: row.surcharge,
          places,
          tier_places: JSON.stringify(tierPlaces),
          addon_units: JSON.stringify(addonUnits),
          code_id: row.code?.id ?? null,
          client_key: places > 0 ? (input.client ?? null) : null,
          waitlist_entry_id: input.waitlistOffer?.entryId ?? null,
          waitlist_offer_seq: input.waitlistOffer?.offerSeq ?? null,
          created_at: now,
          updated_at: now,
        })
        .returning<Array<{ id: string }>>('id');
      return { kind: 'staged', checkoutId: (staged as { id: string }).id, expiresAt };
    });
    if (step instanceof Error) throw step;
    if (step.kind !== 'wait') return step;
    if (performance.now() > deadline) throw providerUnavailable(new Error('another checkout for this waiting-list offer is still opening its session'));
    await delay(WAIT_STEP_MS);
  }
}

export function assertCardPaymentPossible(ctx: Pick<AppContext, 'config'>, event: Pick<EventRecord, 'onlinePayment'>): void {
  if (!cardPaymentPossible(ctx.config, { online_payment: event.onlinePayment })) {
    throw new AppError('payment_unavailable', 'card payment is not available for this event; please choose bank transfer', {
      httpStatus: 409,
    });
  }
}

/** The card success page; the provider fills in {CHECKOUT_SESSION_ID} (literally, unencoded). */
export function checkoutSuccessUrl(ctx: Pick<AppContext, 'config'>, slug: string): string {
  return `${publicBaseUrl(ctx.config)}/events/${encodeURIComponent(slug)}/success?session_id={CHECKOUT_SESSION_ID}`;
}

export interface ProviderSessionRequest {
  checkoutId: string;
  event: Pick<EventRecord, 'id' | 'slug'>;
  registrationId?: string;
  lines: readonly PricedLine[];
  customerEmail: string;
  expiresAt: Date;
  cancelUrl: string;
  idempotencyKey: string;
  /** How a refusal for the provider's minimum names the amount; default: the registration (pay-now with an id). */
  minimumPath?: CardMinimumPath;
}

export interface ProviderSessionRef {
  id: string;
  url: string;
}

/**
 * Opens the provider Checkout Session for a staged checkout. Our ids go into
 * the session metadata and into the PaymentIntent's, so refunds and disputes
 * map back even before the PaymentIntent id is stored. The provider's
 * `amount_too_small` (its minimum is above our table's) becomes the same
 * CardAmountTooSmallError the table gives (409); any other failure becomes
 * AppError provider_unavailable (502).
 */
export async function openProviderSession(ctx: AppContext, request: ProviderSessionRequest): Promise<ProviderSessionRef> {
  const metadata: CheckoutMetadata = {
    eventops_checkout_id: request.checkoutId,
    eventops_event_id: request.event.id,
    ...(request.registrationId ? { eventops_registration_id: request.registrationId } : {}),
  };
  const currency = ctx.config.regional.currency.toLowerCase();
  const successUrl = checkoutSuccessUrl(ctx, request.event.slug);
  const provider = await createProviderClient(ctx.config);
  try {
    const session = await provider.checkout.sessions.create(
      {
        mode: 'payment',
        line_items: providerLineItems(request.lines, currency),
        currency,
        expires_at: Math.floor(request.expiresAt.getTime() / 1000),
        success_url: successUrl,
        cancel_url: request.cancelUrl,
        customer_email: request.customerEmail,
        client_reference_id: request.checkoutId,
        metadata: { ...metadata },
        payment_intent_data: { metadata: { ...metadata } },
      },
      { idempotencyKey: request.idempotencyKey },
    );
    if (!session.url) throw new Error(`provider session ${session.id} came back without a hosted page URL`);
    return { id: session.id, url: session.url };
  } catch (error) {
    if (isProviderAmountTooSmall(error)) {
      const total = request.lines.reduce((sum, line) => sum + line.amount, 0);
      const known = cardMinimumOf(ctx.config);
      ctx.logger.warn(
        { checkoutId: request.checkoutId, totalMinor: total, tableMinimumMinor: known ?? null, provider: providerErrorDetails(error) },
        'the card provider refused an amount below its minimum that the minimum table allowed: src/config/card-minimums.ts may be out of date',
      );
      // Our table let this amount through, so its minimum is not the provider's: name none.
      throw cardAmountTooSmall(ctx.config, request.minimumPath ?? (request.registrationId ? 'pay-now' : 'registration'), total, undefined);
    }
    ctx.logger.error(
      { checkoutId: request.checkoutId, provider: providerErrorDetails(error) },
      'opening the provider checkout session failed',
    );
    throw providerUnavailable(error);
  }
}
