import type { AppConfig } from '../../config/types.js';

/** Money and time as the church reads them: APP_LOCALE, APP_CURRENCY and APP_TIMEZONE, formatted before templating. */
export interface PageFormat {
  /** Integer minor units of APP_CURRENCY → "$120.00" (or "¥120" for a zero-decimal currency). */
  money(minor: number): string;
  /** A rate given in percent (12.5 → "12.5%"; "12,5 %" in de-DE), to the 4 decimals a card fee rate may have. */
  percent(percent: number): string;
  /** An instant in the church's time zone, e.g. "Saturday, 5 December 2026 at 7:00 pm". */
  dateTime(instant: Date): string;
}

export function pageFormat(regional: AppConfig['regional']): PageFormat {
  const money = new Intl.NumberFormat(regional.locale, { style: 'currency', currency: regional.currency });
  const digits = money.resolvedOptions().maximumFractionDigits ?? 2;
  const percent = new Intl.NumberFormat(regional.locale, { style: 'percent', maximumFractionDigits: 4 });
  const dateTime = new Intl.DateTimeFormat(regional.locale, {
    dateStyle: 'full',
    timeStyle: 'short',
    timeZone: regional.timeZone,
  });
  return {
    money: (minor) => money.format(minor / 10 ** digits),
    percent: (value) => percent.format(value / 100),
    dateTime: (instant) => dateTime.format(instant),
  };
}
