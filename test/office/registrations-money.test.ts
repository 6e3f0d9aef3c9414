import { describe, expect, it } from 'vitest';
import { parseAmount, plainAmount } from '../../src/office/registrations/money.js';

describe('plainAmount: an amount written as the office types it back into --amount', () => {
  it('has no sign and no grouping, the currency’s decimals only when there are cents, and reads back as the same amount', () => {
    const cases: Array<[{ locale: string; currency: string }, number, string]> = [
      [{ locale: 'en-AU', currency: 'AUD' }, 17000, '170'],
      [{ locale: 'en-AU', currency: 'AUD' }, 17005, '170.05'],
      [{ locale: 'en-AU', currency: 'AUD' }, 123456789, '1234567.89'],
      [{ locale: 'de-DE', currency: 'EUR' }, 17050, '170,50'],
      [{ locale: 'ja-JP', currency: 'JPY' }, 17000, '17000'],
    ];
    for (const [regional, minor, written] of cases) {
      expect(plainAmount(minor, regional)).toBe(written);
      expect(parseAmount(written, regional)).toBe(minor);
    }
  });
});
