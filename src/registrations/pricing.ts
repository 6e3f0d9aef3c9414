import { MAX_REGISTRATION_TOTAL_MINOR, tierPriceOn, type EventPricing } from './event-pricing.js';
import { AppError } from '../errors.js';

/**
 * The one pricing function of every path (free, bank transfer, card checkout,
 * pay-now). Pure and in integer minor units of APP_CURRENCY, so it is correct
 * for zero-decimal currencies too. Rules: decisions.md "Registrations and pricing".
 */

export interface AttendeeChoice {
  name: string;
  tier: string;
}

export interface RegistrationChoice {
  attendees: AttendeeChoice[];
  /** One household: the family waiver applies. */
  family: boolean;
}

export interface CardFeeRate {
  /** Percent of the charged total, e.g. 1.7. */
  percent: number;
  /** Fixed minor units per charge, e.g. 30. */
  fixed: number;
}

export type PricedLineKind = 'ticket' | 'waived' | 'registration' | 'fee';

export interface PricedLine {
  label: string;
  /** Minor units, never negative. */
  amount: number;
  kind: PricedLineKind;
}

export interface PricedRegistration {
  /** The order as the payer sees it and as the provider receives it; sums to `total`. */
  lines: PricedLine[];
  /** Tickets after the family waiver, before the discount. */
  subtotal: number;
  discount: number;
  /** What the registration costs: subtotal − discount. */
  net: number;
  /** Card processing fee passed on (card payments on events that pass the fee on), else 0. */
  surcharge: number;
  /** Amount charged: net + surcharge. */
  total: number;
  attendeeCount: number;
  free: boolean;
}

/** What the form says of a ticket type it does not offer: a hidden one, not revealed, is answered the same. */
export const UNKNOWN_TIER_MESSAGE = 'choose one of the ticket types';
export const FAMILY_WAIVER_SUFFIX = ' (family waiver)';
/** Between a ticket line's tier and attendee name: "Adult — Ruth". */
export const TICKET_NAME_SEPARATOR = ' — ';
export const DISCOUNTED_LINE_LABEL = 'Registration';
export const CARD_FEE_LINE_LABEL = 'Card processing fee';

export class PricingError extends AppError {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super('pricing_invalid', message, { httpStatus: 400, exitCode: 2 });
    this.name = 'PricingError';
  }
}

/** Half-up rounding of a non-negative rational a/b in integers. */
function divideHalfUp(a: number, b: number): number {
  return Math.floor((2 * a + b) / (2 * b));
}

/** Percent as integer hundredths of a percent (basis points), so 1.7% is exactly 170. */
function basisPoints(percent: number): number {
  return Math.round(percent * 100);
}

/** Card fee rates carry at most this many decimals of a percent (Settings refuse more). */
export const CARD_FEE_PERCENT_DECIMALS = 4;
const RATE_SCALE = 10n ** BigInt(CARD_FEE_PERCENT_DECIMALS + 2);

/**
 * The rate as an exact fraction of RATE_SCALE (1.755% → 17 550 / 1 000 000),
 * read from its decimal digits, so no binary rounding reaches the arithmetic.
 */
export function cardFeeRateNumerator(percent: number): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(String(percent));
  const decimals = match?.[2] ?? '';
  if (!match || decimals.length > CARD_FEE_PERCENT_DECIMALS) {
    throw new PricingError(`the card fee rate ${percent}% must be a plain number with at most ${CARD_FEE_PERCENT_DECIMALS} decimals`, 'cardFee.percent');
  }
  return BigInt(`${match[1] as string}${decimals.padEnd(CARD_FEE_PERCENT_DECIMALS, '0')}`);
}

/**
 * The largest surcharge s that does not exceed the fee on the amount charged:
 * s ≤ rate·(net + s) + fixed, i.e. s = floor((net·rate + fixed) / (1 − rate)),
 * in exact integer arithmetic; 0 when net is 0.
 */
export function cardSurcharge(net: number, rate: CardFeeRate): number {
  if (net <= 0) return 0;
  const numerator = cardFeeRateNumerator(rate.percent);
  if (numerator >= RATE_SCALE) throw new PricingError('the card fee rate must be below 100%', 'cardFee.percent');
  const surcharge = (BigInt(net) * numerator + BigInt(rate.fixed) * RATE_SCALE) / (RATE_SCALE - numerator);
  return Number(surcharge);
}

export interface PricingOptions {
  /**
   * The church-local day (yyyy-MM-dd, APP_TIMEZONE) the price is fixed on: it picks each tier's price step.
   * A registration's price is fixed when it is made (or its card checkout created) and never priced again.
   */
  day?: string;
  cardFee?: CardFeeRate;
  /** The office registers hidden tiers without a code; the public form only with a code that reveals them. */
  allowHidden?: boolean;
}

/**
 * Prices without a schedule are the same on every day, so a caller pricing them may leave the day out; a
 * schedule priced without its day is a mistake of ours, never a guess at the price.
 */
function flatPricesDay(pricing: EventPricing): string {
  if (pricing.tiers.some((tier) => tier.prices !== undefined)) throw new Error('a price schedule is priced on a day: pass the day the price is fixed on');
  return '';
}

export function priceRegistration(pricing: EventPricing, choice: RegistrationChoice, options: PricingOptions = {}): PricedRegistration {
  if (choice.attendees.length === 0) throw new PricingError('add at least one attendee', 'attendees');
  const day = options.day ?? flatPricesDay(pricing);
  const tiers = new Map(pricing.tiers.map((tier) => [tier.id, tier]));
  const tickets = choice.attendees.map((attendee, index) => {
    const tier = tiers.get(attendee.tier);
    // A hidden tier is answered as one that does not exist: the form tells nobody it is there.
    if (!tier || (tier.hidden && !options.allowHidden)) throw new PricingError(`Attendee ${index + 1} ticket: ${UNKNOWN_TIER_MESSAGE}`, `attendees[${index}].tier`);
    return { index, label: `${tier.label}${TICKET_NAME_SEPARATOR}${attendee.name}`, price: tierPriceOn(tier, day) };
  });

  // The family pays for its N most expensive tickets; ties keep attendee order.
  const charged = new Set<number>();
  const limit = choice.family && pricing.familyWaiver ? pricing.familyWaiver.maxChargedTickets : tickets.length;
  [...tickets]
    .sort((a, b) => b.price - a.price || a.index - b.index)
    .slice(0, limit)
    .forEach((ticket) => charged.add(ticket.index));
  const ticketLines: PricedLine[] = tickets.map((ticket) =>
    charged.has(ticket.index)
      ? { label: ticket.label, amount: ticket.price, kind: 'ticket' }
      : { label: `${ticket.label}${FAMILY_WAIVER_SUFFIX}`, amount: 0, kind: 'waived' },
  );
  const subtotal = ticketLines.reduce((sum, line) => sum + line.amount, 0);

  let discount = 0;
  if (pricing.discount && 'percent' in pricing.discount) {
    discount = divideHalfUp(subtotal * basisPoints(pricing.discount.percent), 10_000);
  } else if (pricing.discount && 'amount' in pricing.discount) {
    discount = pricing.discount.amount;
  }
  discount = Math.min(discount, subtotal);
  const net = subtotal - discount;

  const lines: PricedLine[] = pricing.discount ? [{ label: DISCOUNTED_LINE_LABEL, amount: net, kind: 'registration' }] : ticketLines;
  const surcharge = options.cardFee ? cardSurcharge(net, options.cardFee) : 0;
  if (surcharge > 0) lines.push({ label: CARD_FEE_LINE_LABEL, amount: surcharge, kind: 'fee' });
  if (net + surcharge > MAX_REGISTRATION_TOTAL_MINOR) {
    throw new PricingError('this registration costs more than one registration can be charged; please register in smaller groups', 'attendees');
  }

  return {
    lines,
    subtotal,
    discount,
    net,
    surcharge,
    total: net + surcharge,
    attendeeCount: choice.attendees.length,
    free: net === 0,
  };
}
