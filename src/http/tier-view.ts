import { priceStepOn, type EventTier } from '../registrations/event-pricing.js';

/** A ticket type as the event page lists it: today's price, and when and to what it changes. */
export interface TierView {
  id: string;
  label: string;
  /** Today's price ("$300.00", or "Free"), then its next change and whether it is full, as one line: "$300.00 until 1 March, then $350.00". */
  price: string;
  /** Today's price alone. */
  priceNow: string;
  /** When today's price ends and what follows: "until 1 March, then $350.00"; absent when it does not change. */
  changes?: string;
  /** Every place of this ticket type is taken (its own capacity). */
  full: boolean;
}

/** "1 March" (or "March 1") for a church-local date yyyy-MM-dd, in APP_LOCALE. */
export function dayAndMonth(locale: string, day: string): string {
  return new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'long', timeZone: 'UTC' }).format(new Date(`${day}T00:00:00Z`));
}

/**
 * The tier on the church-local day `day`: its price then, the end of that step ("until" is the last day it
 * applies) and the next step's price. `price` formats an amount ("Free" for 0).
 */
export function tierView(tier: EventTier, day: string, options: { price: (minor: number) => string; locale: string; full?: boolean }): TierView {
  const { step, next } = priceStepOn(tier, day);
  const priceNow = options.price(step.price);
  const changes = step.until !== undefined && next ? `until ${dayAndMonth(options.locale, step.until)}, then ${options.price(next.price)}` : undefined;
  const full = options.full ?? false;
  const price = [changes ? `${priceNow} ${changes}` : priceNow, full ? 'full' : ''].filter(Boolean).join(' · ');
  return { id: tier.id, label: tier.label, price, priceNow, changes, full };
}
