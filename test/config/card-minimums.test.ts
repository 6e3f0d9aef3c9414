import { describe, expect, it } from 'vitest';
import { cardMinimumMinor } from '../../src/config/card-minimums.js';

// The provider's table, as amounts a person reads (docs.stripe.com/currencies, "Minimum and maximum charge amounts").
const READABLE: Record<string, number> = {
  USD: 0.5, AED: 2, AUD: 0.5, BGN: 1, BRL: 0.5, CAD: 0.5, CHF: 0.5, CZK: 15, DKK: 2.5, EUR: 0.5, GBP: 0.3, HKD: 4,
  INR: 0.5, JPY: 50, MXN: 10, MYR: 2, NOK: 3, NZD: 0.5, PLN: 2, RON: 2, SEK: 3, SGD: 0.5, THB: 10,
};

describe('the card provider minimums', () => {
  it('are kept in the minor units prices are counted in (Intl decimals), e.g. ¥50 is 50 and $0.50 is 50', () => {
    for (const [currency, amount] of Object.entries(READABLE)) {
      const digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
      expect(cardMinimumMinor(currency), currency).toBe(Math.round(amount * 10 ** digits));
    }
  });

  it('a currency not in the table has no local minimum (the provider answers for it); the code is read in any case', () => {
    expect(cardMinimumMinor('usd')).toBe(50);
    expect(cardMinimumMinor('KES')).toBeUndefined();
    // Card payments refuse HUF at start (card-currencies.ts): no entry to keep in step.
    expect(cardMinimumMinor('HUF')).toBeUndefined();
  });
});
