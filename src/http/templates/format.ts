import type { AppConfig } from '../../config/types.js';
import { moneyFormatter } from '../../money-format.js';
import { memberDateTime, memberDateTimeSpan } from '../../time-format.js';

/** Money and time as the church reads them: APP_LOCALE, APP_CURRENCY and APP_TIMEZONE, formatted before templating. */
export interface PageFormat {
  /** Integer minor units of APP_CURRENCY → "$120.00" (or "¥120" for a zero-decimal currency). */
  money(minor: number): string;
  /** A rate given in percent (12.5 → "12.5%"; "12,5 %" in de-DE), to the 4 decimals a card fee rate may have. */
  percent(percent: number): string;
  /** An instant in the church's time zone, naming it as the emails do: "Saturday 5 December 2026 at 7:00 pm AEDT". */
  dateTime(instant: Date): string;
  /** An event's start to its end, if it has one, as its reminder writes it: "Friday 12 March 2027, 6:00 – 8:30 pm AEDT". */
  dateTimeSpan(start: Date, end: Date | null): string;
}

type Regional = Pick<AppConfig['regional'], 'locale' | 'currency' | 'timeZone'>;

/**
 * Intl formatters are costly to build and a process's regional settings never change: every page
 * shares one set per locale, currency and zone, built on first use (as memberDateTime does).
 */
const byRegion = new Map<string, PageFormat>();

export function pageFormat(regional: Regional): PageFormat {
  const key = `${regional.locale}|${regional.currency}|${regional.timeZone}`;
  let format = byRegion.get(key);
  if (!format) {
    format = buildPageFormat(regional);
    byRegion.set(key, format);
  }
  return format;
}

function buildPageFormat(regional: Regional): PageFormat {
  const percent = new Intl.NumberFormat(regional.locale, { style: 'percent', maximumFractionDigits: 4 });
  return {
    money: moneyFormatter(regional),
    percent: (value) => percent.format(value / 100),
    // The emails' own formatter: a member reading the page and the email sees the same time written the same way.
    dateTime: memberDateTime(regional),
    dateTimeSpan: memberDateTimeSpan(regional),
  };
}
