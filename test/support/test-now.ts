/**
 * The instant the test support's default dates are measured from.
 *
 * In-process contexts run on a FixedClock that starts at FIXED_TEST_NOW, so their dates never depend on today's.
 * A test file whose code runs on the real clock (the CLI in a subprocess, `useOfficeCli`) calls followRealClock(),
 * and the factories' defaults (an event two weeks ahead, a checkout open for half an hour) then follow the real clock instead.
 * This is the only file in test/support allowed to hold a literal date (test/repo/no-fixed-test-dates.test.ts).
 */
export const FIXED_TEST_NOW = new Date('2026-11-22T00:00:00Z');

let reference = FIXED_TEST_NOW.getTime();

/**
 * The factories' defaults in this test file follow the real clock its subprocesses run on: the reference becomes
 * the real now, taken once, so two defaults in one file agree with each other.
 */
export function followRealClock(): void {
  reference = Date.now();
}

export function referenceNow(): Date {
  return new Date(reference);
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** `referenceNow()` moved by days, hours and minutes (any may be negative). */
export function fromReferenceNow(offset: { days?: number; hours?: number; minutes?: number }): Date {
  return new Date(referenceNow().getTime() + (offset.days ?? 0) * DAY + (offset.hours ?? 0) * HOUR + (offset.minutes ?? 0) * MINUTE);
}

/** The default event's start: 13 days and 8 hours after the reference (a Saturday morning for the fixed clock). */
export function defaultEventStart(): Date {
  return fromReferenceNow({ days: 13, hours: 8 });
}
