import type { EventPricing } from '../registrations/event-pricing.js';
import type { CardFeeRate, CodeTerms } from '../registrations/pricing.js';

/**
 * What the event page's script needs to price the form exactly as the server will, carried in the form's
 * data-pricing attribute (JSON). The script calls the server's own priceRegistration on it (src/http/assets/).
 */
export interface LiveTotalConfig {
  pricing: EventPricing;
  /** The card fee a card payment adds: only when the event passes it on and card payment is offered. */
  cardFee?: CardFeeRate;
  /** The church-local day (yyyy-MM-dd) the server prices a registration made now on: it picks each schedule's step. */
  day: string;
  /** A code applied on the page ("Have a code?"): the script prices with it, as the server will once for the registration. */
  code?: CodeTerms;
  /** The event's deposit (its balance terms): the box says what a deposit or instalment plan pays now. */
  deposit?: { perAttendee?: number; perRegistration?: number; balanceDueAt: string; instalments?: number };
  /** APP_LOCALE and APP_CURRENCY, for the amounts the script writes. */
  locale: string;
  currency: string;
}

/**
 * What the event page's script checks a date of birth with, as the server will: carried in the form's
 * data-age-limits attribute (JSON), read by registrations/age-limit.ts in the browser.
 */
export interface AgeLimitsConfig {
  /** The event's first day in the church's time zone (YYYY-MM-DD): ages are counted on it. */
  firstDay: string;
  /** The date-of-birth question's label, which begins the server's message. */
  label: string;
  /** The age-limited tiers, by id. */
  tiers: Record<string, { label: string; minAge?: number; maxAge?: number }>;
}
