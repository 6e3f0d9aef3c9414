/** An event's prices, as the event file gives them and pricing reads them. */

export interface EventTier {
  id: string;
  label: string;
  /** Minor units of APP_CURRENCY. */
  price: number;
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

export interface EventPricing {
  tiers: EventTier[];
  familyWaiver?: FamilyWaiver;
  discount?: EventDiscount;
}

/**
 * The most one registration may cost, in minor units: the most the card provider
 * takes in one charge (8 digits), and well inside the integer columns amounts are stored in.
 * Pricing refuses a total above it; an event file, a price or discount above it.
 */
export const MAX_REGISTRATION_TOTAL_MINOR = 99_999_999;
