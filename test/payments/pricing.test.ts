import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import { cardSurcharge, priceRegistration, PricingError } from '../../src/registrations/pricing.js';

const camp: EventPricing = {
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000 },
  ],
  familyWaiver: { maxChargedTickets: 3 },
};
const fee = { percent: 1.7, fixed: 30 };

const pricingArb = fc
  .record({
    tiers: fc.uniqueArray(fc.record({ id: fc.string({ minLength: 1, maxLength: 5 }), label: fc.string({ minLength: 1, maxLength: 10 }), price: fc.integer({ min: 0, max: 500_000 }) }), {
      minLength: 1,
      maxLength: 4,
      selector: (t) => t.id,
    }),
    waiver: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
    discount: fc.option(fc.oneof(fc.record({ percent: fc.integer({ min: 0, max: 10000 }).map((n) => n / 100) }), fc.record({ amount: fc.integer({ min: 0, max: 600_000 }) })), { nil: undefined }),
  })
  .map(({ tiers, waiver, discount }): EventPricing => ({
    tiers,
    ...(waiver ? { familyWaiver: { maxChargedTickets: waiver } } : {}),
    ...(discount ? { discount } : {}),
  }));

const caseArb = pricingArb.chain((pricing) =>
  fc.record({
    pricing: fc.constant(pricing),
    attendees: fc.array(fc.record({ name: fc.string({ maxLength: 12 }), tier: fc.constantFrom(...pricing.tiers.map((t) => t.id)) }), { minLength: 1, maxLength: 8 }),
    family: fc.boolean(),
    feeRate: fc.option(fc.record({ percent: fc.integer({ min: 0, max: 500 }).map((n) => n / 100), fixed: fc.integer({ min: 0, max: 100 }) }), { nil: undefined }),
  }),
);

describe('pricing properties', () => {
  it('the provider line items always sum to the priced total, and none is negative', () => {
    fc.assert(
      fc.property(caseArb, ({ pricing, attendees, family, feeRate }) => {
        const priced = priceRegistration(pricing, { attendees, family }, { cardFee: feeRate });
        expect(priced.lines.reduce((sum, line) => sum + line.amount, 0)).toBe(priced.total);
        for (const line of priced.lines) {
          expect(Number.isInteger(line.amount)).toBe(true);
          expect(line.amount).toBeGreaterThanOrEqual(0);
        }
        expect(priced.total).toBe(priced.net + priced.surcharge);
      }),
      { numRuns: 500 },
    );
  });

  it('with a discount the order is one line "Registration" at the discounted net total (plus the fee line)', () => {
    fc.assert(
      fc.property(caseArb.filter((c) => c.pricing.discount !== undefined), ({ pricing, attendees, family, feeRate }) => {
        const priced = priceRegistration(pricing, { attendees, family }, { cardFee: feeRate });
        const [first, ...rest] = priced.lines;
        expect(first).toEqual({ label: 'Registration', amount: priced.net, kind: 'registration' });
        expect(rest.every((line) => line.kind === 'fee')).toBe(true);
        expect(priced.net).toBeLessThanOrEqual(priced.subtotal);
      }),
      { numRuns: 300 },
    );
  });

  it('with the fee passed on there is exactly one "Card processing fee" line and the amount charged equals the amount shown', () => {
    fc.assert(
      fc.property(caseArb.filter((c) => c.feeRate !== undefined), ({ pricing, attendees, family, feeRate }) => {
        const priced = priceRegistration(pricing, { attendees, family }, { cardFee: feeRate });
        const feeLines = priced.lines.filter((line) => line.label === 'Card processing fee');
        expect(feeLines).toHaveLength(priced.surcharge > 0 ? 1 : 0);
        expect(feeLines[0]?.amount ?? 0).toBe(priced.surcharge);
      }),
      { numRuns: 300 },
    );
  });

  it('the surcharge never exceeds the card fee on the total charged, and is the largest whole amount that does not', () => {
    // Every rate Settings accept: [0, 10) percent with up to 4 decimals, as the decimal text an administrator types.
    const rateArb = fc.integer({ min: 0, max: 99_999 }).map((tenThousandths) => ({ tenThousandths, percent: Number((tenThousandths / 10_000).toFixed(4)) }));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), rateArb, fc.integer({ min: 0, max: 10_000 }), (net, { tenThousandths, percent }, fixed) => {
        const surcharge = cardSurcharge(net, { percent, fixed });
        expect(Number.isInteger(surcharge)).toBe(true);
        expect(surcharge).toBeGreaterThanOrEqual(0);
        if (net === 0) {
          expect(surcharge).toBe(0);
          return;
        }
        // The fee on an amount A is A·p/1 000 000 + fixed (p = rate in millionths); compared exactly, scaled by 1 000 000.
        const feeScaled = (charged: number) => BigInt(charged) * BigInt(tenThousandths) + BigInt(fixed) * 1_000_000n;
        expect(BigInt(surcharge) * 1_000_000n <= feeScaled(net + surcharge)).toBe(true);
        expect(BigInt(surcharge + 1) * 1_000_000n > feeScaled(net + surcharge + 1)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('pricing examples', () => {
  it('one line per ticket without a discount', () => {
    const priced = priceRegistration(camp, { attendees: [{ name: 'Ann', tier: 'adult' }, { name: 'Ben', tier: 'child' }], family: false });
    expect(priced.lines).toEqual([
      { label: 'Adult — Ann', amount: 12000, kind: 'ticket' },
      { label: 'Child — Ben', amount: 6000, kind: 'ticket' },
    ]);
    expect(priced).toMatchObject({ net: 18000, total: 18000, surcharge: 0, free: false });
  });

  it('a family pays for its N most expensive tickets; the others appear at 0 marked as waived', () => {
    const attendees = [
      { name: 'Kid1', tier: 'child' },
      { name: 'Mum', tier: 'adult' },
      { name: 'Kid2', tier: 'child' },
      { name: 'Dad', tier: 'adult' },
      { name: 'Kid3', tier: 'child' },
    ];
    const priced = priceRegistration(camp, { attendees, family: true });
    expect(priced.net).toBe(12000 + 12000 + 6000);
    expect(priced.lines.filter((l) => l.kind === 'waived').map((l) => l.label)).toEqual(['Child — Kid2 (family waiver)', 'Child — Kid3 (family waiver)']);
    expect(priceRegistration(camp, { attendees, family: false }).net).toBe(42000);
  });

  it('a percent discount applies after the waiver, rounded half up', () => {
    const priced = priceRegistration({ ...camp, discount: { percent: 12.5 } }, { attendees: [{ name: 'A', tier: 'child' }, { name: 'B', tier: 'adult' }, { name: 'C', tier: 'adult' }, { name: 'D', tier: 'adult' }], family: true });
    // waiver: 3 adults charged = 36000; 12.5% = 4500
    expect(priced).toMatchObject({ subtotal: 36000, discount: 4500, net: 31500 });
    expect(priceRegistration({ tiers: [{ id: 'x', label: 'X', price: 5 }], discount: { percent: 50 } }, { attendees: [{ name: 'a', tier: 'x' }], family: false }).net).toBe(2);
  });

  it('an amount discount never takes the total below 0, which makes the registration free', () => {
    const priced = priceRegistration({ ...camp, discount: { amount: 50_000 } }, { attendees: [{ name: 'A', tier: 'adult' }], family: false }, { cardFee: fee });
    expect(priced).toMatchObject({ net: 0, surcharge: 0, total: 0, free: true });
  });

  it('the default card fee 1.7% + 30 is passed on so the church nets the price', () => {
    expect(cardSurcharge(12000, fee)).toBe(238);
    const priced = priceRegistration(camp, { attendees: [{ name: 'A', tier: 'adult' }], family: false }, { cardFee: fee });
    expect(priced.lines.at(-1)).toEqual({ label: 'Card processing fee', amount: 238, kind: 'fee' });
    expect(priced.total).toBe(12238);
  });

  it('a rate with three decimals is used exactly, not rounded: 1.755% + 30 on 199 855 is 3 600 (the fee on 203 455 is 3 600.63)', () => {
    expect(cardSurcharge(199_855, { percent: 1.755, fixed: 30 })).toBe(3600);
  });

  it('a rate with more than 4 decimals is refused by name rather than rounded', () => {
    expect(() => cardSurcharge(1000, { percent: 1.23456, fixed: 0 })).toThrow(/cardFee\.percent|4 decimals/);
  });

  it('is exact for a zero-decimal currency (amounts are whole yen)', () => {
    const yen: EventPricing = { tiers: [{ id: 'a', label: 'Adult', price: 3000 }], discount: { percent: 10 } };
    const priced = priceRegistration(yen, { attendees: [{ name: 'A', tier: 'a' }], family: false }, { cardFee: { percent: 3.6, fixed: 0 } });
    expect(priced).toMatchObject({ net: 2700, surcharge: 100, total: 2800 });
  });

  it('refuses a total above what one registration may cost, the card fee included, naming the attendees', () => {
    const dear: EventPricing = { tiers: [{ id: 'a', label: 'Adult', price: 49_500_000 }] };
    const two = [{ name: 'A', tier: 'a' }, { name: 'B', tier: 'a' }];
    expect(priceRegistration(dear, { attendees: two, family: false }).total).toBe(99_000_000);
    // By card the fee takes the same registration over the limit.
    expect(() => priceRegistration(dear, { attendees: two, family: false }, { cardFee: fee })).toThrow(PricingError);
    try {
      priceRegistration(dear, { attendees: [...two, { name: 'C', tier: 'a' }], family: false });
      throw new Error('not refused');
    } catch (error) {
      expect((error as PricingError).field).toBe('attendees');
    }
  });

  it('rejects an unknown tier and an empty registration, naming the field', () => {
    expect(() => priceRegistration(camp, { attendees: [{ name: 'A', tier: 'vip' }], family: false })).toThrow(PricingError);
    try {
      priceRegistration(camp, { attendees: [], family: false });
    } catch (error) {
      expect((error as PricingError).field).toBe('attendees');
    }
  });
});
