// How a member reads a time, in an email and on a public page alike. Intl only (no date library): the
// mail renders on the cron path, which loads as little as it can.
import type { AppConfig } from './config/types.js';

type Regional = Pick<AppConfig['regional'], 'locale' | 'timeZone'>;

/**
 * Intl formatters are costly to build and a process's regional settings never change: one per
 * locale and zone, shared by the mail helpers and the pages.
 */
const byRegion = new Map<string, Intl.DateTimeFormat>();

/**
 * An instant in APP_TIMEZONE, written in APP_LOCALE and naming the zone in its short form:
 * "Saturday 5 December 2026 at 7:00 pm AEDT" (en-AU), or an offset such as "GMT+1" where the locale
 * has no short name for the zone. Intl puts the zone where the locale writes it (before the time in
 * zh-CN). Intl refuses `timeZoneName` beside `dateStyle`/`timeStyle`, so the fields are named one by one.
 */
export function memberDateTime(regional: Regional): (instant: Date) => string {
  const formatter = formatterFor(regional);
  return (instant) => formatter.format(instant);
}

/**
 * An event from its start to its end, if it has one, as memberDateTime writes an instant: Intl leaves out what
 * the two share ("Friday 12 March 2027, 6:00 – 8:30 pm AEDT"; across days, both in full).
 */
export function memberDateTimeSpan(regional: Regional): (start: Date, end: Date | null | undefined) => string {
  const formatter = formatterFor(regional);
  return (start, end) => (end ? formatter.formatRange(start, end) : formatter.format(start));
}

function formatterFor(regional: Regional): Intl.DateTimeFormat {
  const key = `${regional.locale}|${regional.timeZone}`;
  let format = byRegion.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(regional.locale, {
      weekday: 'long',
      day: 'numeric',
      month: 'long',
      year: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      timeZoneName: 'short',
      timeZone: regional.timeZone,
    });
    byRegion.set(key, format);
  }
  return format;
}
