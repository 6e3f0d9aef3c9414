import { MAX_REGISTRATION_TOTAL_MINOR, tierPriceOn, type EventPricing, type SiblingDiscount } from './event-pricing.js';
import { AppError } from '../errors.js';
import { addonLines, addonProblem, type AddonPick } from './addons.js';

/**
 * The one pricing function of every path (free, bank transfer, card checkout,
 * pay-now). Pure and in integer minor units of APP_CURRENCY, so it is correct
 * for zero-decimal currencies too. Rules: decisions.md "Registrations and pricing".
 */

export interface AttendeeChoice {
  name: string;
  tier: string;
  /** The per-attendee add-ons chosen for this attendee (registrations/addons.ts); absent: none. */
  addons?: AddonPick[];
}

export interface RegistrationChoice {
  attendees: AttendeeChoice[];
  /** One household: the family waiver applies. */
  family: boolean;
  /** A code the server has judged usable for this registration: its effect, applied once for the registration. */
  code?: CodeTerms;
  /** The per-registration add-ons chosen (lodging); absent: none. */
  addons?: AddonPick[];
}

/**
 * What a code does to a registration's price (its row in discount_codes, judged usable). At most one of percent,
 * amount and prices; none for a code that only reveals a hidden tier.
 */
export interface CodeTerms {
  /** As the office wrote it, for the order's line. */
  code: string;
  /** Percent off the tickets it reaches (after the family waiver), with at most 2 decimals. */
  percent?: number;
  /** Minor units off the tickets it reaches, once for the registration. */
  amount?: number;
  /** A price per tier id for every ticket of that tier (never above the price in force). */
  prices?: Record<string, number>;
  /** The tiers whose tickets its percent or amount reaches; absent: every ticket. */
  tiers?: string[];
  /** A hidden tier it lets the registration choose. */
  reveals?: string;
}

export interface CardFeeRate {
  /** Percent of the charged total, e.g. 1.7. */
  percent: number;
  /** Fixed minor units per charge, e.g. 30. */
  fixed: number;
}

export type PricedLineKind = 'ticket' | 'waived' | 'registration' | 'addon' | 'fee';

export interface PricedLine {
  label: string;
  /** Minor units, never negative. */
  amount: number;
  kind: PricedLineKind;
}

export interface PricedRegistration {
  /** The order as the payer sees it and as the provider receives it; sums to `total`. */
  lines: PricedLine[];
  /** Tickets after the family waiver (at a code's or the sibling rule's prices), before any discount off the whole. */
  subtotal: number;
  /** Of the tickets paid for, what the sibling rules took off them (already in `subtotal`); absent or 0 without. */
  siblingOff?: number;
  /** A code's percent or amount off (once for the registration); absent or 0 without one (and in payloads staged before codes). */
  codeOff?: number;
  /** What the family maximum took off (a family registration above it); absent or 0 otherwise. */
  familyMaxOff?: number;
  /** The event's discount, off what the code and the family maximum left. */
  discount: number;
  /** The add-ons chosen, each at its own price (no discount reaches them); absent or 0 without. */
  addonsTotal?: number;
  /** What the registration costs: subtotal − codeOff − familyMaxOff − discount + addonsTotal. */
  net: number;
  /** The code used, as the office wrote it. */
  code?: string;
  /** What the code took off in all (its prices, percent or amount, with every step after it): net without it − net. Absent or 0 without a code. */
  codeDiscount?: number;
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

/** Whether a code's percent or amount reaches a ticket of this tier: its `tiers`, or every ticket without them. */
export function codeReachesTier(code: CodeTerms, tier: string): boolean {
  return code.tiers === undefined || code.tiers.includes(tier);
}

interface PricedCore {
  ticketLines: PricedLine[];
  subtotal: number;
  siblingOff: number;
  codeOff: number;
  familyMaxOff: number;
  discount: number;
  net: number;
}

/**
 * A ticket's price: the tier's price on the day, lowered by at most one of the per-ticket discounts, the better
 * for the family: the code's price for its tier, or the tier's sibling rule from its Nth attendee on. Never both.
 */
function ticketPrice(scheduled: number, codePrice: number | undefined, sibling: SiblingDiscount | undefined): { price: number; siblingOff: number } {
  const siblingPrice = sibling ? (sibling.price !== undefined ? Math.min(scheduled, sibling.price) : Math.max(0, scheduled - (sibling.amountOff ?? 0))) : scheduled;
  const coded = codePrice !== undefined ? Math.min(scheduled, codePrice) : scheduled;
  return coded <= siblingPrice ? { price: coded, siblingOff: 0 } : { price: siblingPrice, siblingOff: scheduled - siblingPrice };
}

/**
 * The money of a registration, in this order, each step on what the one before left (decisions.md "Codes" and
 * "Automatic discounts"), and no discount twice:
 * 1. each ticket at its tier's price on `day`, lowered by the better of the code's price for its tier and the
 *    tier's sibling rule (from its Nth attendee on, in the order named), never by both;
 * 2. the family waiver: a family pays for its N most expensive tickets;
 * 3. the code's percent or amount off the tickets it reaches, once for the registration;
 * 4. the family maximum: a family pays at most that for its tickets;
 * 5. the event's discount off what is left.
 */
function priceCore(pricing: EventPricing, choice: RegistrationChoice, day: string, allowHidden: boolean, code: CodeTerms | undefined): PricedCore {
  const tiers = new Map(pricing.tiers.map((tier) => [tier.id, tier]));
  const siblingRules = new Map((pricing.siblingDiscounts ?? []).map((rule) => [rule.tier, rule]));
  const ofTier = new Map<string, number>();
  const tickets = choice.attendees.map((attendee, index) => {
    const tier = tiers.get(attendee.tier);
    // A hidden tier is answered as one that does not exist, unless a code reveals it: the form tells nobody it is there.
    if (!tier || (tier.hidden && !allowHidden && choice.code?.reveals !== tier.id)) {
      throw new PricingError(`Attendee ${index + 1} ticket: ${UNKNOWN_TIER_MESSAGE}`, `attendees[${index}].tier`);
    }
    const nth = (ofTier.get(tier.id) ?? 0) + 1;
    ofTier.set(tier.id, nth);
    const rule = siblingRules.get(tier.id);
    // A code's price and the sibling rule never make a ticket dearer.
    const { price, siblingOff } = ticketPrice(tierPriceOn(tier, day), code?.prices?.[tier.id], rule && nth >= rule.from ? rule : undefined);
    return { index, tier: tier.id, label: `${tier.label}${TICKET_NAME_SEPARATOR}${attendee.name}`, price, siblingOff };
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
  const siblingOff = tickets.filter((ticket) => charged.has(ticket.index)).reduce((sum, ticket) => sum + ticket.siblingOff, 0);

  // Once for the registration, never per attendee: the percent of, or the amount off, the tickets it reaches.
  let codeOff = 0;
  if (code && (code.percent !== undefined || code.amount !== undefined)) {
    const reached = tickets.filter((ticket) => charged.has(ticket.index) && codeReachesTier(code, ticket.tier)).reduce((sum, ticket) => sum + ticket.price, 0);
    codeOff = Math.min(code.percent !== undefined ? divideHalfUp(reached * basisPoints(code.percent), 10_000) : (code.amount ?? 0), reached);
  }
  const afterCode = subtotal - codeOff;
  const familyMaxOff = choice.family && pricing.familyMaximum !== undefined ? Math.max(0, afterCode - pricing.familyMaximum) : 0;
  const afterMaximum = afterCode - familyMaxOff;

  let discount = 0;
  if (pricing.discount && 'percent' in pricing.discount) {
    discount = divideHalfUp(afterMaximum * basisPoints(pricing.discount.percent), 10_000);
  } else if (pricing.discount && 'amount' in pricing.discount) {
    discount = pricing.discount.amount;
  }
  discount = Math.min(discount, afterMaximum);
  return { ticketLines, subtotal, siblingOff, codeOff, familyMaxOff, discount, net: afterMaximum - discount };
}

export function priceRegistration(pricing: EventPricing, choice: RegistrationChoice, options: PricingOptions = {}): PricedRegistration {
  if (choice.attendees.length === 0) throw new PricingError('add at least one attendee', 'attendees');
  const day = options.day ?? flatPricesDay(pricing);
  const allowHidden = Boolean(options.allowHidden);
  const code = choice.code;
  const { ticketLines, subtotal, siblingOff, codeOff, familyMaxOff, discount, net: ticketsNet } = priceCore(pricing, choice, day, allowHidden, code);
  // Add-ons come last, each at its own price: no code, sibling rule, waiver, family maximum or event discount reaches them.
  const addonTrouble = addonProblem(pricing, choice.attendees, choice.addons);
  if (addonTrouble) throw new PricingError(addonTrouble.message, addonTrouble.field);
  const extras: PricedLine[] = addonLines(pricing, choice.attendees, choice.addons).map((line) => ({ label: line.label, amount: line.amount, kind: 'addon' }));
  const addonsTotal = extras.reduce((sum, line) => sum + line.amount, 0);
  const net = ticketsNet + addonsTotal;
  // What the code took off, all steps after it included: the same registration priced without its effect.
  const codeDiscount = code ? Math.max(0, priceCore(pricing, choice, day, allowHidden, undefined).net - ticketsNet) : 0;

  // A discount off the whole cannot be a negative line at the provider: the order is one line at what is left.
  const wholeOff = pricing.discount !== undefined || codeOff > 0 || familyMaxOff > 0;
  const label = code && codeOff > 0 ? `${DISCOUNTED_LINE_LABEL} (code ${code.code})` : DISCOUNTED_LINE_LABEL;
  const lines: PricedLine[] = [...(wholeOff ? [{ label, amount: ticketsNet, kind: 'registration' as const }] : ticketLines), ...extras];
  const surcharge = options.cardFee ? cardSurcharge(net, options.cardFee) : 0;
  if (surcharge > 0) lines.push({ label: CARD_FEE_LINE_LABEL, amount: surcharge, kind: 'fee' });
  if (net + surcharge > MAX_REGISTRATION_TOTAL_MINOR) {
    throw new PricingError('this registration costs more than one registration can be charged; please register in smaller groups', 'attendees');
  }

  return {
    lines,
    subtotal,
    siblingOff,
    codeOff,
    familyMaxOff,
    discount,
    ...(addonsTotal > 0 || extras.length > 0 ? { addonsTotal } : {}),
    net,
    surcharge,
    total: net + surcharge,
    attendeeCount: choice.attendees.length,
    free: net === 0,
    ...(code ? { code: code.code, codeDiscount } : { codeDiscount: 0 }),
  };
}
