import type { EventPricing } from './event-pricing.js';
import type { Question } from './answers.js';
import type { BalanceTerms } from './balance-terms.js';

/** An event as the services see it, mapped from its table row by eventFromRow. */
export interface EventRecord {
  id: string;
  slug: string;
  title: string;
  description: string | null;
  location: string | null;
  startsAt: Date;
  /** null: not given (a calendar entry then lasts two hours). */
  endsAt: Date | null;
  /** null = unlimited. */
  capacity: number | null;
  published: boolean;
  deletedAt: Date | null;
  onlinePayment: boolean;
  passCardFee: boolean;
  pricing: EventPricing;
  reminderAt: Date | null;
  reminderClaimedAt: Date | null;
  reminderSentAt: Date | null;
  maxAttendeesPerRegistration: number;
  /** The form offers "We would like to talk about help with the cost". */
  helpWithCost: boolean;
  /** null = an unpaid bank-transfer registration holds its seats until the event. */
  unpaidHoldDays: number | null;
  /** The most unpaid places the public registrations from one client (clientKey) may hold on the event. */
  maxUnpaidSeatsPerClient: number;
  /** The share of the capacity (0–1) public registrations may hold unpaid before the office is alerted; null: never. */
  unpaidAlertShare: number | null;
  /** Until when the registrant may change details or cancel on the manage page; null = until startsAt. */
  changesCloseAt: Date | null;
  /** Off by default; offers hold their places for offerHours (1–168). */
  waitingList: { enabled: boolean; offerHours: number };
  /** The event file's questions, in the order the form asks them (the date of birth is not among them). */
  questions: Question[];
  /** Days after the event ends (or starts, without an end) that sensitive answers are purged. */
  sensitiveRetentionDays: number;
  /** Deposits, instalments and what follows an overdue balance; null: each registration pays its whole total. */
  balanceTerms: BalanceTerms | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface EventRow {
  id: string;
  slug: string;
  title: string;
  description: string | null;
  location: string | null;
  starts_at: Date;
  ends_at: Date | null;
  capacity: number | null;
  published: boolean;
  deleted_at: Date | null;
  online_payment: boolean;
  pass_card_fee: boolean;
  pricing: EventPricing;
  reminder_at: Date | null;
  reminder_claimed_at: Date | null;
  reminder_sent_at: Date | null;
  max_attendees_per_registration: number;
  help_with_cost?: boolean;
  unpaid_hold_days: number | null;
  /** When the hold limit was last set or shortened: no hold ends sooner than a day after it. */
  unpaid_hold_since: Date | null;
  max_unpaid_seats_per_client: number;
  unpaid_alert_share: number | null;
  changes_close_at: Date | null;
  waitlist_enabled: boolean;
  waitlist_offer_hours: number;
  questions: Question[];
  sensitive_retention_days: number;
  /** Raised by one with every change: the SEQUENCE of the event's calendar entry. */
  calendar_sequence: number;
  balance_terms?: BalanceTerms | null;
  created_at: Date;
  updated_at: Date;
}

export function eventFromRow(row: EventRow): EventRecord {
  return {
    id: row.id,
    slug: row.slug,
    title: row.title,
    description: row.description,
    location: row.location,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    capacity: row.capacity,
    published: row.published,
    deletedAt: row.deleted_at,
    onlinePayment: row.online_payment,
    passCardFee: row.pass_card_fee,
    pricing: row.pricing,
    reminderAt: row.reminder_at,
    reminderClaimedAt: row.reminder_claimed_at,
    reminderSentAt: row.reminder_sent_at,
    maxAttendeesPerRegistration: row.max_attendees_per_registration,
    helpWithCost: row.help_with_cost ?? false,
    unpaidHoldDays: row.unpaid_hold_days,
    maxUnpaidSeatsPerClient: row.max_unpaid_seats_per_client,
    // A row read before the column existed (a test's hand-built row) has the default.
    unpaidAlertShare: row.unpaid_alert_share === undefined ? 0.4 : row.unpaid_alert_share,
    changesCloseAt: row.changes_close_at,
    waitingList: { enabled: row.waitlist_enabled ?? false, offerHours: row.waitlist_offer_hours ?? 24 },
    questions: row.questions ?? [],
    sensitiveRetentionDays: row.sensitive_retention_days ?? 30,
    balanceTerms: row.balance_terms ?? null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}
