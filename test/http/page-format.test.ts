import { describe, expect, it } from 'vitest';
import { pageFormat } from '../../src/http/templates/format.js';

const AUD = { locale: 'en-AU', currency: 'AUD', timeZone: 'Australia/Sydney' };
const EUR = { locale: 'de-DE', currency: 'EUR', timeZone: 'Europe/Berlin' };
const JPY = { locale: 'ja-JP', currency: 'JPY', timeZone: 'Asia/Tokyo' };

describe('the pages build their money and percent formatters once per locale, currency and zone', () => {
  it('hands every page of the same settings the same formatters', () => {
    expect(pageFormat({ ...AUD })).toBe(pageFormat({ ...AUD }));
  });

  it('keeps each currency and locale its own formatters, however the calls interleave', () => {
    const aud = pageFormat(AUD);
    const eur = pageFormat(EUR);
    const jpy = pageFormat(JPY);
    expect(new Set([aud, eur, jpy]).size).toBe(3);
    expect(pageFormat({ ...AUD, currency: 'NZD' })).not.toBe(aud);
    expect(pageFormat({ ...AUD, locale: 'en-GB' })).not.toBe(aud);
    for (const _ of [1, 2]) {
      expect(aud.money(12050)).toBe('$120.50');
      expect(eur.money(12050)).toBe('120,50\u00a0€');
      expect(jpy.money(12050)).toBe('￥12,050');
      expect(aud.percent(1.75)).toBe('1.75%');
      expect(eur.percent(12.5)).toBe('12,5\u00a0%');
    }
  });

  it('writes what a formatter built afresh writes', () => {
    for (const regional of [AUD, EUR, JPY]) {
      const fresh = new Intl.NumberFormat(regional.locale, { style: 'currency', currency: regional.currency });
      const digits = fresh.resolvedOptions().maximumFractionDigits ?? 2;
      for (const minor of [0, 1, 99, 12000, 123456789]) expect(pageFormat(regional).money(minor)).toBe(fresh.format(minor / 10 ** digits));
    }
  });
});
