import type { Knex } from 'knex';
import { AppError, NotFoundError, UsageError } from '../../errors.js';
import { enqueueMail } from '../../mail/queue.js';
import { queueRegistrationConfirmation } from '../../signup/confirmations.js';
import { paymentReference } from '../../registrations/reference.js';
import type { AttendeeChoice } from '../../registrations/pricing.js';
import { renderReceipt } from '../../payments/receipts.js';
import { assertWithinAttendeeCap, priceDayOf, registerWithoutCard, SoldOutError, TierFullError, type RegisteredWithoutCard } from '../../signup/register.js';
import type { RegistrationContact } from '../../registrations/registrations.js';
import { tierPriceOn, type EventTier } from '../../registrations/event-pricing.js';
import { codeUses, CodeRefusedError, findCode, type CodeRefusal } from '../../registrations/codes.js';
import type { EventRecord } from '../../registrations/event-record.js';
import { getEventBySlug } from '../events.js';
import { answerAlert, type AddPaid } from './answer-alert.js';
import { recordHistory } from '../../registrations/history.js';
import { alertIsForCardPayment, type CardSettlement } from './kept-card-payment.js';
import type { OfficeContext } from './mark-paid.js';
import { moneyFormatter } from './money.js';
import { insertOfficePayment } from '../../registrations/ledger.js';
import { counted } from '../../plural.js';
import { atDoorLabel } from '../../registrations/checkin/walk-in.js';
import { outsideEventDays } from '../../registrations/checkin/event-days.js';
import { checkInWalkIn } from '../../registrations/checkin/records.js';
import { AddonSoldOutError } from '../../registrations/addon-stock.js';
import { withOfficeAddons } from './addon-choice.js';

export interface AddInput {
  eventSlug: string;
  contact: RegistrationContact;
  attendees: AttendeeChoice[];
  family: boolean;
  /**
   * Money already received in full (bank, cash; card: the card payment of the alert resolved), or
   * none (a bank-transfer registration, PENDING). Unset: card when resolving the alert of a card
   * payment, else none.
   */
  paid?: AddPaid;
  overCapacity: boolean;
  /** The open alert this registration answers (a payment kept without a registration). */
  resolveAlert?: number;
  note?: string;
  actor: string;
  /** A walk-in on the day: every attendee checked in, in the registration's own transaction. */
  atDoor?: boolean;
  /** `--price-at`: the church-local day (yyyy-MM-dd) whose prices apply (a family promised the early price); else today's. */
  priceAt?: string;
  /** `--code`: a code of the event, judged and its use counted as on the form (the office is told why one is refused). */
  code?: string;
  /** `--addon ATTENDEE:ADDON[=OPTION]`, each one unit (addon-choice.ts); priced and stock-checked as on the form. */
  addons?: string[];
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
  /** The code used and what it took off (minor units); null without one. */
  code: { code: string; discountMinor: number } | null;
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
  const money = moneyFormatter(ctx.config.regional);
  const day = input.priceAt ?? priceDayOf(ctx, ctx.clock.now());
  const tiered = input.attendees.map((attendee, index) => ({ ...attendee, tier: tierIdOf(event, attendee, index, (tier) => money(tierPriceOn(tier, day))) }));
  const { attendees, addons } = withOfficeAddons(event.pricing, tiered, input.addons ?? []);
  const paid = input.paid ?? (input.resolveAlert !== undefined && (await alertIsForCardPayment(ctx.db, input.resolveAlert)) ? 'card' : 'none');
  let resolvedAlert: number | null = null;
  let card: CardSettlement | undefined;
  try {
    const registered = await registerWithoutCard(
      ctx,
      event,
      { contact: input.contact, attendees, family: input.family, ...(input.priceAt ? { priceDay: input.priceAt } : {}), ...(input.code ? { code: input.code } : {}), ...(addons.length > 0 ? { addons } : {}) },
      {
        overCapacity: input.overCapacity,
        paidWith: paid === 'none' ? undefined : paid,
        within: async (trx, done) => {
          const now = ctx.clock.now();
          if (input.resolveAlert !== undefined) {
            ({ card } = await answerAlert(trx, input.resolveAlert, { registered: done, paid, note: input.note, timeZone: ctx.config.regional.timeZone, money, now }));
            resolvedAlert = input.resolveAlert;
          }
          await queueWelcome(trx, ctx, input, paid, done, card, now);
          await recordHistory(trx, {
            registrationId: done.registrationId,
            action: 'registered',
            changes: {
              status: done.status,
              method: done.method,
              attendees: input.attendees.length,
              totalMinor: card?.amountMinor ?? done.priced.total,
              ...(input.priceAt ? { pricedAt: input.priceAt } : {}),
              ...(done.priced.code ? { code: done.priced.code, codeDiscountMinor: done.priced.codeDiscount ?? 0 } : {}),
              ...(done.seatsLeftAfter !== null && done.seatsLeftAfter < 0 ? { overCapacityBy: -done.seatsLeftAfter } : {}),
              ...(resolvedAlert !== null ? { resolvedAlert } : {}),
            },
            note: input.note,
            actor: input.actor,
            now,
          });
          if (input.atDoor) {
            await checkInWalkIn(trx, {
              eventId: event.id,
              registrationId: done.registrationId,
              attendees: attendees.length,
              label: atDoorLabel(input.actor),
              now,
              outsideEventDays: outsideEventDays(now, done.event, ctx.config.regional.timeZone),
            });
          }
        },
      },
    );
    return {
      registrationId: registered.registrationId,
      reference: paymentReference(registered.registrationId),
      status: registered.status,
      method: registered.method,
      totalMinor: card?.amountMinor ?? registered.priced.total,
      seatsLeft: registered.seatsLeftAfter,
      overCapacity: registered.seatsLeftAfter !== null && registered.seatsLeftAfter < 0,
      resolvedAlert,
      code: registered.priced.code ? { code: registered.priced.code, discountMinor: registered.priced.codeDiscount ?? 0 } : null,
    };
  } catch (error) {
    if (error instanceof CodeRefusedError) throw await officeCodeRefusal(ctx, event, input.code ?? '', error.reason, day);
    if (error instanceof TierFullError) {
      throw new AppError('sold_out', `${event.slug} has ${counted(error.placesLeft, `${error.label} place`, `${error.label} places`)} left, fewer than this registration names; nothing was registered`, {
        exitCode: 1,
        suggestion: "add --over-capacity to exceed the ticket type's places knowingly",
      });
    }
    if (error instanceof AddonSoldOutError) {
      throw new AppError('sold_out', `${event.slug} has ${error.left} ${error.label} left, fewer than the ${error.wanted} asked for; nothing was registered`, {
        exitCode: 1,
        suggestion: `see the stock with \`eventops events addons ${event.slug}\``,
      });
    }
    if (error instanceof SoldOutError) {
      throw new AppError('sold_out', `${event.slug} has ${counted(error.seatsLeft, 'place', 'places')} left, fewer than the ${input.attendees.length} asked for; nothing was registered`, {
        exitCode: 1,
        suggestion: 'add --over-capacity to exceed the capacity knowingly',
      });
    }
    throw error;
  }
}

/**
 * The event's tier id the office meant: as written, else the one id equal to it when case is
 * ignored ("Adult" for "adult": what the office reads off the form is the label). Tier ids
 * differing only in case would leave a guess: refused, as is an id the event does not have,
 * naming the event's ticket types.
 */
function tierIdOf(event: EventRecord, attendee: AttendeeChoice, index: number, price: (tier: EventTier) => string): string {
  const tiers = event.pricing.tiers;
  if (tiers.some((tier) => tier.id === attendee.tier)) return attendee.tier;
  const sameLetters = tiers.filter((tier) => tier.id.toLowerCase() === attendee.tier.toLowerCase());
  if (sameLetters.length === 1) return (sameLetters[0] as EventTier).id;
  const listed = tiers.map((tier) => `${tier.id} (${tier.label}, ${price(tier)}${tier.hidden ? ', hidden' : ''})`).join(', ');
  const which = `attendee ${index + 1} (${attendee.name}) has the ticket type "${attendee.tier}"`;
  const example = `e.g. --attendee "${attendee.name}:${(sameLetters[0] ?? (tiers[0] as EventTier)).id}"`;
  if (sameLetters.length > 1) {
    throw new UsageError(
      `${which}, which matches ${sameLetters.map((tier) => tier.id).join(' and ')} of ${event.slug} when case is ignored; its ticket types are ${listed}; nothing was registered`,
      `give the id exactly as written, ${example}`,
    );
  }
  throw new UsageError(
    `${which}, which ${event.slug} does not have; its ticket types are ${listed}; nothing was registered`,
    `give one of those ids after the colon (case does not matter), ${example}`,
  );
}

/** Why the office's code was refused, in full: the office may know what the public form never says. */
async function officeCodeRefusal(
  ctx: OfficeContext,
  event: EventRecord,
  given: string,
  reason: CodeRefusal,
  day: string,
): Promise<AppError> {
  const row = await findCode(ctx.db, event.id, given);
  const name = row?.code ?? given;
  const uses = row ? await codeUses(ctx.db, row.id, ctx.clock.now()) : 0;
  const why: Record<CodeRefusal, string> = {
    unknown: `${event.slug} has no code "${given}"`,
    disabled: `the code ${name} was disabled`,
    expired: `the code ${name} could be used until the end of ${row?.valid_until ?? '?'}, and this registration is priced on ${day}`,
    used_up: `the code ${name} has been used ${uses} of ${row?.max_uses ?? uses} ${row?.max_uses === 1 ? 'time' : 'times'} (registrations awaiting payment or paid, and card payments in progress)`,
    not_for_these_tiers: `the code ${name} is only for ${(row?.tiers ?? Object.keys(row?.tier_prices ?? {})).concat(row?.reveals && !row.tiers && !row.tier_prices ? [row.reveals] : []).join(', ')} tickets, and this registration names none`,
  };
  return new AppError('code_refused', `${why[reason]}; nothing was registered`, {
    exitCode: 1,
    suggestion: `see the event's codes with \`eventops codes list --event ${event.slug}\``,
  });
}

/** The form's confirmation, or, when the money is already here, the receipt naming how it came. */
async function queueWelcome(
  trx: Knex.Transaction,
  ctx: OfficeContext,
  input: AddInput,
  paid: AddPaid,
  done: RegisteredWithoutCard,
  card: CardSettlement | undefined,
  now: Date,
): Promise<void> {
  if (paid === 'none' || done.priced.free) {
    await queueRegistrationConfirmation(
      trx,
      ctx,
      { registrationId: done.registrationId, contact: input.contact, event: done.event, priced: done.priced, byOffice: true },
      now,
    );
    return;
  }
  const receiptOf = { registrationId: done.registrationId, contact: input.contact, event: { title: done.event.title, startsAt: done.event.startsAt }, paidAt: now };
  if (card) {
    const receipt = await renderReceipt(trx, ctx, { ...receiptOf, lines: card.lines, amountMinor: card.amountMinor, paymentIntentId: card.providerReference, method: 'card' });
    // Not the webhook's key (receipt-<PaymentIntent>): a payment the webhook once receipted (dispute_won) would be dropped as a repeat.
    receipt.message.idempotencyKey = `receipt-alert-${String(input.resolveAlert)}`;
    await enqueueMail(trx, ctx.cipher, receipt, now);
    return;
  }
  // Only an alert's card payment pays by card (the command refuses --paid card without --resolve-alert).
  if (paid === 'card') throw new Error(`registration ${done.registrationId} is paid by card but no card payment was settled`);
  const paymentId = await insertOfficePayment(trx, {
    registrationId: done.registrationId,
    amountMinor: done.priced.total,
    method: paid,
    note: input.note,
    actor: input.actor,
    now,
  });
  const receipt = await renderReceipt(trx, ctx, {
    ...receiptOf,
    lines: done.priced.lines,
    amountMinor: done.priced.total,
    method: paid,
    officePaymentKey: String(paymentId),
  });
  await enqueueMail(trx, ctx.cipher, receipt, now);
}
