import { formatInTimeZone } from 'date-fns-tz';

/** Adults from this age (whole years at the event's start). */
export const ADULT_AGE = 18;

/** Whole years from a date of birth (YYYY-MM-DD) to a calendar day (YYYY-MM-DD); undefined for a malformed date. */
export function ageOn(dateOfBirth: string, day: string): number | undefined {
  const birth = /^(\d{4})-(\d{2})-(\d{2})$/.exec(dateOfBirth);
  const on = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!birth || !on) return undefined;
  const years = Number(on[1]) - Number(birth[1]);
  const hadBirthday = `${on[2]}-${on[3]}` >= `${birth[2]}-${birth[3]}`;
  return hadBirthday ? years : years - 1;
}

/**
 * A child, as the questions contract defines one: under 18 at the event's start (its calendar day in the
 * church's time zone) by date of birth, or of a tier whose maxAge is under 18.
 */
export function isChild(input: { dateOfBirth?: unknown; tierMaxAge?: number; startsAt: Date; timeZone: string }): boolean {
  if (typeof input.tierMaxAge === 'number' && input.tierMaxAge < ADULT_AGE) return true;
  if (typeof input.dateOfBirth !== 'string') return false;
  const age = ageOn(input.dateOfBirth, formatInTimeZone(input.startsAt, input.timeZone, 'yyyy-MM-dd'));
  return age !== undefined && age < ADULT_AGE;
}
