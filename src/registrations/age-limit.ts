import type { EventTier } from './event-pricing.js';
import { ageOn } from './child.js';

/**
 * A tier's age limit, checked on a date of birth: one rule and one wording for the server (questions.ts reads
 * every post with it) and for the event page's script, which says the same words as soon as a date is typed
 * (bundled into the browser's assets: nothing here needs Node). Ages are whole years on the event's first day
 * (child.ts's ageOn).
 */

/** A tier as its age limit needs it. */
export type AgeLimitedTier = Pick<EventTier, 'label' | 'minAge' | 'maxAge'>;

export const DATE_FORMAT_PROBLEM = 'enter a date as YYYY-MM-DD';

/** A real calendar date written YYYY-MM-DD. */
export function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

/**
 * What is wrong with a calendar date of birth for `name`, an attendee of `tier`, on the event's `firstDay`
 * (YYYY-MM-DD in the church's time zone): born after the event starts, or outside the tier's minAge–maxAge.
 */
export function ageLimitProblem(tier: AgeLimitedTier | undefined, dateOfBirth: string, firstDay: string, name: string): string | undefined {
  if (dateOfBirth > firstDay) return 'enter a date before the event';
  if (!tier) return undefined;
  const age = ageOn(dateOfBirth, firstDay) ?? 0;
  const { minAge, maxAge } = tier;
  if ((minAge === undefined || age >= minAge) && (maxAge === undefined || age <= maxAge)) return undefined;
  const range =
    minAge !== undefined && maxAge !== undefined ? `ages ${minAge} to ${maxAge}` : minAge !== undefined ? `ages ${minAge} and over` : `ages up to ${maxAge}`;
  return `${tier.label} tickets are for ${range} on the first day of the event, and ${name} will be ${age}`;
}

/** A typed date of birth's problem, as the form reads one answer: not a calendar date, or outside the limit. */
export function dateOfBirthProblem(tier: AgeLimitedTier | undefined, typed: string, firstDay: string, name: string): string | undefined {
  return isCalendarDate(typed) ? ageLimitProblem(tier, typed, firstDay, name) : DATE_FORMAT_PROBLEM;
}
