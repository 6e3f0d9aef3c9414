import type { EventTier } from './event-pricing.js';

/**
 * Who is a child, for the one rule that needs it: a consent given for a child attendee is recorded as the
 * contact's, as guardian, and the door shows the child's guardian. The form's answers (questions.ts) and the
 * check-in roll both ask this module, so the two can never disagree.
 */

/** Adults from this age (whole years on the event's first day). */
export const ADULT_AGE = 18;

/** The tier facts that can make its attendees children. */
export type ChildTier = Pick<EventTier, 'child' | 'minAge' | 'maxAge'>;

/** Whole years from a date of birth to a calendar day (both YYYY-MM-DD); undefined for a malformed date. */
export function ageOn(dateOfBirth: string, day: string): number | undefined {
  const birth = /^(\d{4})-(\d{2})-(\d{2})$/.exec(dateOfBirth);
  const on = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!birth || !on) return undefined;
  const years = Number(on[1]) - Number(birth[1]);
  const hadBirthday = `${on[2]}-${on[3]}` >= `${birth[2]}-${birth[3]}`;
  return hadBirthday ? years : years - 1;
}

/** Every attendee of this tier is a child: it says `"child": true`, or its maxAge is under 18. */
export function tierIsChildren(tier: ChildTier | undefined): boolean {
  if (!tier) return false;
  return tier.child === true || (tier.maxAge !== undefined && tier.maxAge < ADULT_AGE);
}

/**
 * Some attendee of this tier may be a child: a children's tier, or one that asks a date of birth (minAge or maxAge)
 * without a minAge of 18 or more. A tier with neither can never be a child, whatever its label says.
 */
export function tierMayBeChild(tier: ChildTier): boolean {
  if (tierIsChildren(tier)) return true;
  const asksDateOfBirth = tier.minAge !== undefined || tier.maxAge !== undefined;
  return asksDateOfBirth && (tier.minAge ?? 0) < ADULT_AGE;
}

/**
 * A child: of a children's tier (tierIsChildren), or under 18 on the event's first day (`firstDay`, YYYY-MM-DD in
 * the church's time zone) by the date of birth given. Nothing else makes one: without a children's tier or a
 * date of birth, an attendee is an adult.
 */
export function isChild(input: { tier: ChildTier | undefined; dateOfBirth?: unknown; firstDay: string }): boolean {
  if (tierIsChildren(input.tier)) return true;
  if (typeof input.dateOfBirth !== 'string') return false;
  const age = ageOn(input.dateOfBirth, input.firstDay);
  return age !== undefined && age < ADULT_AGE;
}
