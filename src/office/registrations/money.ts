import { UsageError } from '../../errors.js';

/** Digits after the decimal point of a currency (2 for AUD, 0 for JPY), as Intl knows them. */
export function currencyDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The locale's decimal and grouping separators ("." and "," in en-AU, "," and "." in de-DE). */
function separators(locale: string): { decimal: string; group: string } {
  const parts = new Intl.NumberFormat(locale).formatToParts(12345.6);
  return {
    decimal: parts.find((part) => part.type === 'decimal')?.value ?? '.',
    group: parts.find((part) => part.type === 'group')?.value ?? ',',
  };
}

/** The amount without a sign or code of the currency written before or after it ("$240", "240 €", "AUD 240"). */
function withoutCurrency(text: string, currency: string, locale: string): string {
  const signs = new Set([currency]);
  for (const where of [locale, 'en']) {
    for (const currencyDisplay of ['symbol', 'narrowSymbol'] as const) {
      const sign = new Intl.NumberFormat(where, { style: 'currency', currency, currencyDisplay }).formatToParts(1).find((part) => part.type === 'currency')?.value;
      if (sign) signs.add(sign);
    }
  }
  for (const sign of [...signs].sort((a, b) => b.length - a.length)) {
    const around = new RegExp(`^${escapeRegExp(sign)}\\s*(.+)$|^(.+?)\\s*${escapeRegExp(sign)}$`, 'i').exec(text);
    if (around) return (around[1] ?? around[2] ?? '').trim();
  }
  return text;
}

/**
 * An amount as people write it in APP_CURRENCY and APP_LOCALE ("240", "240.00", "1,240.50",
 * "$240"; "240,50" and "1.240,50" where the comma is the decimal separator), to integer minor
 * units. A sign or code of the currency is ignored; "240.50" is read as written in a comma
 * locale too. Decimals must be none or exactly the currency's; anything else is a usage error
 * naming the flag.
 */
export function parseAmount(text: string, regional: { currency: string; locale: string }, flag = '--amount'): number {
  const { currency, locale } = regional;
  const digits = currencyDigits(currency);
  const { decimal, group } = separators(locale);
  const example = digits === 0 ? '240' : `240 or 240${decimal}${'0'.repeat(digits)}`;
  const bare = withoutCurrency(text.trim().replace(/[\u00a0\u202f]/g, ' '), currency, locale);
  const groupPattern = /\s/.test(group) ? ' ' : escapeRegExp(group);
  const match =
    new RegExp(`^(\\d{1,3}(?:${groupPattern}\\d{3})+|\\d+)(?:${escapeRegExp(decimal)}(\\d+))?$`).exec(bare) ??
    // A point before the cents, as on a keyboard's number pad, where the locale writes a comma.
    (decimal === '.' ? null : /^(\d+)(?:\.(\d+))?$/.exec(bare));
  if (/^[-−]/.test(bare)) throw new UsageError(`${flag} must be more than 0`);
  if (!match) {
    const otherSeparator = decimal === '.' ? ',' : '.';
    const hint = new RegExp(`\\d${escapeRegExp(otherSeparator)}\\d{1,2}$`).test(bare) ? ` (the cents go after "${decimal}" in ${locale})` : '';
    throw new UsageError(`${flag} must be an amount in ${currency}, like ${example}${hint}`);
  }
  const whole = Number((match[1] as string).replace(/\D/g, ''));
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

/** Minor units as `parseAmount` reads them back and as the help shows them: "170", "170.50" ("170,50" in de-DE); no sign, no grouping. */
export function plainAmount(minor: number, regional: { currency: string; locale: string }): string {
  const digits = currencyDigits(regional.currency);
  const scale = 10 ** digits;
  const fraction = minor % scale;
  const whole = String((minor - fraction) / scale);
  return fraction === 0 ? whole : `${whole}${separators(regional.locale).decimal}${String(fraction).padStart(digits, '0')}`;
}

export { moneyFormatter } from '../../money-format.js';
