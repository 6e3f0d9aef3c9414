import { UsageError } from '../../errors.js';

/** Digits after the decimal point of a currency (2 for AUD, 0 for JPY), as Intl knows them. */
export function currencyDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

/**
 * An amount as people write it ("240", "240.00", "1,240.50") in APP_CURRENCY,
 * to integer minor units. Decimals must be none or exactly the currency's;
 * anything else is a usage error naming the flag.
 */
export function parseAmount(text: string, currency: string, flag = '--amount'): number {
  const digits = currencyDigits(currency);
  const match = /^(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?$/.exec(text.trim());
  const example = digits === 0 ? '240' : `240 or 240.${'0'.repeat(digits)}`;
  if (!match) throw new UsageError(`${flag} must be an amount in ${currency}, like ${example}`);
  const whole = Number((match[1] as string).replace(/,/g, ''));
  const fraction = match[2];
  if (fraction !== undefined && fraction.length !== digits) {
    throw new UsageError(
      digits === 0
        ? `${flag} must be a whole amount: ${currency} has no decimals`
        : `${flag} must have ${digits} decimals in ${currency} (or none), like ${example}`,
    );
  }
  const minor = whole * 10 ** digits + Number(fraction ?? 0);
  if (!Number.isSafeInteger(minor) || minor > 2_000_000_000) throw new UsageError(`${flag} is too large`);
  if (minor <= 0) throw new UsageError(`${flag} must be more than 0`);
  return minor;
}

/** Minor units → "$240.00" in the church's locale and currency. */
export function moneyFormatter(regional: { locale: string; currency: string }): (minor: number) => string {
  const format = new Intl.NumberFormat(regional.locale, { style: 'currency', currency: regional.currency });
  const digits = format.resolvedOptions().maximumFractionDigits ?? 2;
  return (minor) => format.format(minor / 10 ** digits);
}
