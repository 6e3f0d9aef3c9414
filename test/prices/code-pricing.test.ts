import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import { priceRegistration, type CodeTerms } from '../../src/registrations/pricing.js';

const tiers = ['adult', 'child', 'infant'];
const pricingArb = fc.record({
  prices: fc.tuple(fc.integer({ min: 0, max: 50_000 }), fc.integer({ min: 0, max: 50_000 }), fc.integer({ min: 0, max: 50_000 })),
  waiver: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
  discount: fc.option(fc.oneof(fc.record({ percent: fc.integer({ min: 0, max: 10000 }).map((n) => n / 100) }), fc.record({ amount: fc.integer({ min: 0, max: 60_000 }) })), { nil: undefined }),
}).map(({ prices, waiver, discount }): EventPricing => ({
  tiers: tiers.map((id, index) => ({ id, label: id, price: prices[index] as number })),
  ...(waiver ? { familyWaiver: { maxChargedTickets: waiver } } : {}),
  ...(discount ? { discount } : {}),
}));
const codeArb: fc.Arbitrary<CodeTerms> = fc.oneof(
  fc.record({ code: fc.constant('C'), percent: fc.integer({ min: 1, max: 10000 }).map((n) => n / 100) }),
  fc.record({ code: fc.constant('C'), amount: fc.integer({ min: 1, max: 80_000 }) }),
  fc.record({ code: fc.constant('C'), prices: fc.dictionary(fc.constantFrom(...tiers), fc.integer({ min: 0, max: 60_000 })) }),
).chain((code: CodeTerms) => fc.option(fc.subarray(tiers, { minLength: 1 }), { nil: undefined }).map((only): CodeTerms => (only && !code.prices ? { ...code, tiers: only } : code)));
const caseArb = fc.record({
  pricing: pricingArb,
  code: codeArb,
  attendees: fc.array(fc.record({ name: fc.constant('A'), tier: fc.constantFrom(...tiers) }), { minLength: 1, maxLength: 8 }),
  family: fc.boolean(),
});

describe("a code's effect in the one pricing function", () => {
  it('never makes a registration dearer; what it took off is exactly the registration priced without it less with it; the lines sum to the total', () => {
    fc.assert(
      fc.property(caseArb, ({ pricing, code, attendees, family }) => {
        const withCode = priceRegistration(pricing, { attendees, family, code });
        const without = priceRegistration(pricing, { attendees, family });
        expect(withCode.net).toBeLessThanOrEqual(without.net);
        expect(withCode.codeDiscount).toBe(without.net - withCode.net);
        expect(withCode.lines.reduce((sum, line) => sum + line.amount, 0)).toBe(withCode.total);
        expect(withCode.net).toBe(withCode.subtotal - (withCode.codeOff ?? 0) - withCode.discount);
        if (code.amount !== undefined) expect(withCode.codeOff).toBeLessThanOrEqual(code.amount);
      }),
      { numRuns: 400 },
    );
  });

  it('an amount off is taken once for the registration, however many people it names, and only off the tiers it is for', () => {
    const pricing: EventPricing = { tiers: [{ id: 'adult', label: 'Adult', price: 10000 }, { id: 'child', label: 'Child', price: 5000 }] };
    const five = Array.from({ length: 5 }, (_, i) => ({ name: `P${i}`, tier: 'adult' }));
    expect(priceRegistration(pricing, { attendees: five, family: false, code: { code: 'X', amount: 2000 } })).toMatchObject({ net: 48000, codeDiscount: 2000 });
    const mixed = [{ name: 'A', tier: 'adult' }, { name: 'B', tier: 'child' }];
    expect(priceRegistration(pricing, { attendees: mixed, family: false, code: { code: 'X', percent: 50, tiers: ['child'] } })).toMatchObject({ net: 12500, codeDiscount: 2500 });
    expect(priceRegistration(pricing, { attendees: mixed, family: false, code: { code: 'X', amount: 9000, tiers: ['child'] } })).toMatchObject({ net: 10000, codeOff: 5000 });
  });
});
