import { formatInTimeZone } from 'date-fns-tz';

/**
 * The event's days: from the calendar day it starts to the day it ends (its start's, without an end), in the
 * church's time zone. A check-in tap timed outside them (a phone's clock wrong, a tap backdated to the link's
 * making, a link tried out the day before) is recorded all the same, and flagged.
 */
export function outsideEventDays(at: Date, event: { startsAt: Date; endsAt: Date | null }, timeZone: string): boolean {
  const day = (date: Date) => formatInTimeZone(date, timeZone, 'yyyy-MM-dd');
  const tapped = day(at);
  return tapped < day(event.startsAt) || tapped > day(event.endsAt ?? event.startsAt);
}
