import type { EventRecord } from '../registrations/event-record.js';
import type { AppConfig } from '../config/types.js';
import { cardMinimumMinor } from '../config/card-minimums.js';
import { AppError } from '../errors.js';
import { moneyFormatter } from '../money-format.js';
import { cardPaymentPossible } from './links.js';
import { PricingError, cardSurcharge, priceRegistration, type CardFeeRate, type PricedRegistration } from '../registrations/pricing.js';
import { tierPrices, type EventPricing } from '../registrations/event-pricing.js';

/**
 * A card total (surcharge included) the provider cannot charge because it is below its minimum
 * for the currency. Not the provider's fault and not worth retrying: the member is told the
 * minimum and sent to bank transfer, which has none. A free registration (0) never gets here.
 */
export type CardMinimumPath = 'registration' | 'registration-deposit' | 'pay-now' | 'pay-now-part';

export class CardAmountTooSmallError extends AppError {
  constructor(
    readonly amountMinor: number,
    /** undefined when the provider refused an amount our table allows (or has no entry for). */
    readonly minimumMinor: number | undefined,
    message: string,
  ) {
    super('card_amount_too_small', message, { httpStatus: 409, suggestion: 'choose bank transfer' });
    this.name = 'CardAmountTooSmallError';
  }
}

type RegionalConfig = Pick<AppConfig, 'regional'>;

/** The provider's minimum charge in APP_CURRENCY, or undefined when the table has none. */
export function cardMinimumOf(config: RegionalConfig): number | undefined {
  return cardMinimumMinor(config.regional.currency);
}

/** Whether a card total is above 0 and below the provider's known minimum. */
export function belowCardMinimum(config: RegionalConfig, totalMinor: number): boolean {
  const minimum = cardMinimumOf(config);
  return minimum !== undefined && totalMinor > 0 && totalMinor < minimum;
}

/**
 * The refusal in words for the member. `minimumMinor` undefined: the provider said so though our
 * table did not, so the page says the amount is too small without naming a minimum it does not know.
 */
export function cardAmountTooSmall(
  config: RegionalConfig,
  path: CardMinimumPath,
  amountMinor: number,
  minimumMinor: number | undefined,
): CardAmountTooSmallError {
  const money = moneyFormatter(config.regional);
  // A part (a deposit, a part of a balance) is judged on what its own checkout charges: the part and its card fee.
  const subject = path === 'pay-now-part' ? 'this payment' : path === 'registration-deposit' ? 'the deposit' : 'this registration';
  const what =
    minimumMinor === undefined
      ? `${subject.charAt(0).toUpperCase()}${subject.slice(1)} comes to ${money(amountMinor)} by card, which is less than our card payment provider can charge in one payment`
      : `Card payment needs at least ${money(minimumMinor)}, and ${subject} comes to ${money(amountMinor)} by card`;
  const instead =
    path === 'registration'
      ? 'Please choose bank transfer instead.'
      : path === 'registration-deposit'
        ? 'Please pay the whole amount now, or choose bank transfer.'
        : 'Please pay by bank transfer, using the details on your registration page.';
  return new CardAmountTooSmallError(amountMinor, minimumMinor, `${what}. ${instead}`);
}

/**
 * The least amount (before its card fee) one card payment can be for: its total, with the fee when the event passes
 * it on (`cardFee`), reaches the provider's minimum. undefined when the table has no minimum for the currency.
 */
export function leastCardNetMinor(config: RegionalConfig, cardFee: CardFeeRate | undefined): number | undefined {
  const minimum = cardMinimumOf(config);
  if (minimum === undefined || !cardFee) return minimum;
  // net + fee(net) rises with net, and from here it is at most the minimum: the least is at most fee(minimum) steps on.
  let net = Math.max(1, minimum - cardSurcharge(minimum, cardFee));
  while (net + cardSurcharge(net, cardFee) < minimum) net += 1;
  return net;
}

/** Refuses, before anything is staged or sent to the provider, a card total below the known minimum. */
export function assertCardMinimum(config: RegionalConfig, path: CardMinimumPath, totalMinor: number): void {
  if (belowCardMinimum(config, totalMinor)) throw cardAmountTooSmall(config, path, totalMinor, cardMinimumOf(config));
}

/** The provider's own refusal of an amount below its minimum (its table may be newer than ours). */
export function isProviderAmountTooSmall(error: unknown): boolean {
  return Boolean(error && typeof error === 'object' && 'code' in error && (error as { code?: unknown }).code === 'amount_too_small');
}

/**
 * The tickets that, bought alone by card, come to less than the provider's minimum (the event discount
 * and, when passed on, the card fee included). None when card payment is not possible for the event,
 * or the currency is not in the table.
 */
export function ticketsBelowCardMinimum(
  config: Pick<AppConfig, 'regional' | 'payments'>,
  event: Pick<EventRecord, 'onlinePayment' | 'passCardFee' | 'pricing'>,
  /** The Settings rate, when the event passes the card fee on. */
  cardFee: CardFeeRate | undefined,
): Array<{ label: string; totalMinor: number; surchargeMinor: number }> {
  const minimum = cardMinimumOf(config);
  if (minimum === undefined || !cardPaymentPossible(config, { online_payment: event.onlinePayment })) return [];
  // Every price a ticket has on some day (a schedule's steps), each priced alone; hidden tiers too (a code reveals them).
  return event.pricing.tiers.flatMap((tier) =>
    [...new Set(tierPrices(tier))].flatMap((price) => {
      // The ticket alone: its add-ons (a required one, say) are not part of what this check asks.
      const { addons: _addons, ...ticketPricing } = event.pricing;
      const alone: EventPricing = { ...ticketPricing, tiers: [{ ...tier, price, prices: undefined, hidden: undefined }] };
      let priced: PricedRegistration;
      try {
        priced = priceRegistration(alone, { attendees: [{ name: tier.label, tier: tier.id }], family: false }, { cardFee: event.passCardFee ? cardFee : undefined });
      } catch (error) {
        // Too much for one charge (a price near the most one registration may cost, plus the fee): not this check's business.
        if (error instanceof PricingError) return [];
        throw error;
      }
      if (priced.free || priced.total >= minimum) return [];
      return [{ label: tier.label, totalMinor: priced.total, surchargeMinor: priced.surcharge }];
    }),
  );
}

/**
 * For the office, when it creates or updates an event: each ticket too cheap to be paid for alone by
 * card. A member registering just that ticket is refused card payment and sent to bank transfer, so
 * this is a warning, not a refusal: larger registrations of it still pay by card.
 */
export function cardMinimumWarnings(
  config: Pick<AppConfig, 'regional' | 'payments'>,
  event: Pick<EventRecord, 'onlinePayment' | 'passCardFee' | 'pricing'>,
  cardFee: CardFeeRate | undefined,
): string[] {
  const money = moneyFormatter(config.regional);
  const minimum = money(cardMinimumOf(config) ?? 0);
  return ticketsBelowCardMinimum(config, event, cardFee).map(
    (ticket) =>
      `one "${ticket.label}" ticket alone comes to ${money(ticket.totalMinor)} by card${ticket.surchargeMinor > 0 ? ' with the card fee' : ''}, ` +
      `below the card provider's minimum of ${minimum}: a registration of just that ticket cannot be paid by card, and the member is asked to choose bank transfer`,
  );
}
