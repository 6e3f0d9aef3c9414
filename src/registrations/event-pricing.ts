/** An event's prices, as the event file gives them and pricing reads them. */

/**
 * One step of a tier's price schedule: `price` until the end of the church-local day `until`
 * (yyyy-MM-dd, inclusive: "until 2027-03-01" is through the last minute of 1 March in APP_TIMEZONE);
 * the last step has no `until` and lasts for ever. Steps are in increasing date order.
 */
export interface PriceStep {
  until?: string;
  /** Minor units of APP_CURRENCY. */
  price: number;
}

export interface EventTier {
  id: string;
  label: string;
  /** Minor units of APP_CURRENCY: the one price, when the tier has no schedule (exactly one of price or prices). */
  price?: number;
  /** The price schedule, when the price changes by date (exactly one of price or prices). */
  prices?: PriceStep[];
  /** Places of this ticket type, inside the event's capacity; absent: only the event's capacity limits it. */
  capacity?: number;
  /** Not shown on the page, and not accepted from the public form, without a code that reveals it. */
  hidden?: boolean;
  /** Age limits in whole years, checked on the attendee's date of birth as of the event's start. */
  minAge?: number;
  maxAge?: number;
  /**
   * Every attendee of this tier is a child (a "Child" ticket without an age limit): a consent given for one is
   * the contact's as guardian, and the door shows the guardian. See registrations/child.ts.
   */
  child?: boolean;
}

export interface FamilyWaiver {
  /** A family registration pays for at most this many tickets, the most expensive ones. */
  maxChargedTickets: number;
}

/** Event-level discount, applied after the family waiver to the registration total. */
export type EventDiscount = { percent: number } | { amount: number };

/**
 * The sibling rule of one tier: within one registration, its `from`th attendee of that tier and every later one (in
 * the order the registration names them) pays `price`, or `amountOff` less than the ticket's price then.
 */
export interface SiblingDiscount {
  tier: string;
  /** 2 or more: the first attendee of the tier it reaches. */
  from: number;
  /** Minor units: the price of each ticket it reaches (never above the ticket's own price). */
  price?: number;
  /** Minor units off each ticket it reaches (down to 0). */
  amountOff?: number;
}

/**
 * An extra a family may buy with a ticket (a T-shirt, a bus seat) or once with the registration (lodging): priced at
 * its own `price`, never reached by a discount, and never sold on its own (it belongs to an attendee or a
 * registration). See registrations/addons.ts and decisions.md "Add-ons".
 */
export interface EventAddon {
  id: string;
  label: string;
  /** Minor units of APP_CURRENCY, for each one chosen. */
  price: number;
  /** Chosen for each attendee, or once for the registration. */
  per: 'attendee' | 'registration';
  /** How many may be sold in all (paid, pending and open card checkouts); absent: no limit. */
  stock?: number;
  /**
   * Without a group: every attendee it reaches (per attendee), or the registration, must choose it. With a group:
   * must choose one add-on of the group (every add-on of a group says the same).
   */
  required?: boolean;
  /** Add-ons of one group are alternatives: an attendee (or the registration) chooses at most one of them. */
  group?: string;
  /** Only for attendees of these ticket types (per-attendee add-ons); absent: every ticket type. */
  tiers?: string[];
  /** How many one attendee (or the registration) may choose; absent: 1. */
  maxPerAttendee?: number;
  /** A choice the family makes with it (a T-shirt's size): one of these is named with each one chosen. */
  options?: string[];
}

export interface EventPricing {
  tiers: EventTier[];
  /** Extras with their own price and stock (absent: none). */
  addons?: EventAddon[];
  familyWaiver?: FamilyWaiver;
  discount?: EventDiscount;
  /** Automatic sibling discounts, at most one per tier. */
  siblingDiscounts?: SiblingDiscount[];
  /** Minor units: the most a family registration pays for its tickets (after a code, before the event's discount). */
  familyMaximum?: number;
}

/**
 * The most one registration may cost, in minor units: the most the card provider
 * takes in one charge (8 digits), and well inside the integer columns amounts are stored in.
 * Pricing refuses a total above it; an event file, a price or discount above it.
 */
export const MAX_REGISTRATION_TOTAL_MINOR = 99_999_999;

/** A tier's schedule as steps: a single price is one open-ended step. */
export function priceSteps(tier: Pick<EventTier, 'price' | 'prices'>): PriceStep[] {
  if (tier.prices && tier.prices.length > 0) return tier.prices;
  return [{ price: tier.price ?? 0 }];
}

/**
 * The step in force on the church-local day `day` (yyyy-MM-dd): the first whose `until` is that day or
 * later, else the open-ended last one. Dates in this form compare as strings.
 */
export function priceStepOn(tier: Pick<EventTier, 'price' | 'prices'>, day: string): { step: PriceStep; next?: PriceStep } {
  const steps = priceSteps(tier);
  const index = steps.findIndex((step) => step.until === undefined || day <= step.until);
  const at = index === -1 ? steps.length - 1 : index;
  return { step: steps[at] as PriceStep, next: steps[at + 1] };
}

/** The tier's price on the church-local day `day` (yyyy-MM-dd). */
export function tierPriceOn(tier: Pick<EventTier, 'price' | 'prices'>, day: string): number {
  return priceStepOn(tier, day).step.price;
}

/** Every price the tier has on any day, in schedule order. */
export function tierPrices(tier: Pick<EventTier, 'price' | 'prices'>): number[] {
  return priceSteps(tier).map((step) => step.price);
}

/** The tiers the public sees without a code: every tier not hidden, and the hidden ones `revealed` names. */
export function visibleTiers<T extends Pick<EventTier, 'id' | 'hidden'>>(tiers: readonly T[], revealed: readonly string[] = []): T[] {
  return tiers.filter((tier) => !tier.hidden || revealed.includes(tier.id));
}

/** The pricing as the public may see it: hidden tiers left out unless `revealed` names them. */
export function publicPricing(pricing: EventPricing, revealed: readonly string[] = []): EventPricing {
  return { ...pricing, tiers: visibleTiers(pricing.tiers, revealed) };
}
