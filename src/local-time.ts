// The church's local time for people to read (office commands): loaded only where it is shown, not on the cron path.
import { formatInTimeZone } from 'date-fns-tz';

/** The church's calendar date of an instant, `yyyy-MM-dd` in APP_TIMEZONE. */
export function localDay(date: Date, timeZone: string): string {
  return formatInTimeZone(date, timeZone, 'yyyy-MM-dd');
}

/** An instant to the minute, `yyyy-MM-dd HH:mm` in APP_TIMEZONE. */
export function localMinute(date: Date, timeZone: string): string {
  return formatInTimeZone(date, timeZone, 'yyyy-MM-dd HH:mm');
}
