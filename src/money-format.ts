// How an amount reads, in an email, on a page and in the office's commands alike: integer minor units of
// APP_CURRENCY, written by Intl in APP_LOCALE.

/** Intl formatters are costly to build and a process's regional settings never change: one per locale and currency. */
const byRegion = new Map<string, (minor: number) => string>();

/** Minor units → "$240.00" (or "¥240" for a currency without decimals) in the church's locale and currency. */
export function moneyFormatter(regional: { locale: string; currency: string }): (minor: number) => string {
  const key = `${regional.locale}|${regional.currency}`;
  let money = byRegion.get(key);
  if (!money) {
    const format = new Intl.NumberFormat(regional.locale, { style: 'currency', currency: regional.currency });
    const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
    money = (minor) => format.format(minor / 10 ** digits);
    byRegion.set(key, money);
  }
  return money;
}
