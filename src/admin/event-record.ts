import type { EventPricing } from './event-file.js';

/** An event as the services see it; events.ts maps it from the table row. Here so website-sync needs nothing from events.ts. */
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
  /** null = an unpaid bank-transfer registration holds its seats until the event. */
  unpaidHoldDays: number | null;
  createdAt: Date;
  updatedAt: Date;
}
