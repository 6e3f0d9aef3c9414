import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EventFileError, parseEventFile } from '../../src/office/event-file.js';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import { priceRegistration, type CodeTerms } from '../../src/registrations/pricing.js';

const people = (...tiers: string[]) => tiers.map((tier, index) => ({ name: `P${index}`, tier }));
const camp = (extra: Partial<EventPricing> = {}): EventPricing => ({
  tiers: [
    { id: 'adult', label: 'Adult', price: 20000 },
    { id: 'child', label: 'Child', price: 10000 },
  ],
  ...extra,
});

describe('automatic discounts in the one pricing function', () => {
  it('a sibling rule lowers each ticket of its tier from the Nth one named in the registration: the latest ones, in the order named', () => {
    const pricing = camp({ siblingDiscounts: [{ tier: 'child', from: 3, price: 5000 }] });
    expect(priceRegistration(pricing, { attendees: people('child', 'child', 'child', 'child'), family: false })).toMatchObject({ net: 30000, siblingOff: 10000 });
    const named = priceRegistration(pricing, { attendees: people('child', 'adult', 'child', 'child'), family: false });
    expect(named.lines.map((line) => line.amount)).toEqual([10000, 20000, 10000, 5000]);
    const off = camp({ siblingDiscounts: [{ tier: 'child', from: 2, amountOff: 2500 }] });
    expect(priceRegistration(off, { attendees: people('child', 'child', 'child'), family: false })).toMatchObject({ net: 25000, siblingOff: 5000 });
    // Two registrations of one child each are each a first child.
    expect(priceRegistration(off, { attendees: people('child'), family: false })).toMatchObject({ net: 10000, siblingOff: 0 });
  });

  it("no discount twice: a ticket gets the better of the code's price and the sibling rule, never both", () => {
    const pricing = camp({ siblingDiscounts: [{ tier: 'child', from: 2, amountOff: 5000 }] });
    const code: CodeTerms = { code: 'KIDS', prices: { child: 7000 } };
    const priced = priceRegistration(pricing, { attendees: people('child', 'child'), family: false, code });
    expect(priced.lines.map((line) => line.amount)).toEqual([7000, 5000]);
    expect(priced).toMatchObject({ net: 12000, siblingOff: 5000, codeDiscount: 3000 });
  });

  it('a family maximum caps what a family registration pays for its tickets; a registration that is not one household is not capped', () => {
    const pricing = camp({ familyMaximum: 45000 });
    expect(priceRegistration(pricing, { attendees: people('adult', 'adult', 'child', 'child'), family: true })).toMatchObject({ net: 45000, familyMaxOff: 15000 });
    expect(priceRegistration(pricing, { attendees: people('adult', 'adult', 'child', 'child'), family: false })).toMatchObject({ net: 60000, familyMaxOff: 0 });
  });

  it('one stacking order: per-ticket prices (code or sibling), the family waiver, the code off the whole, the family maximum, the event discount', () => {
    const pricing = camp({
      siblingDiscounts: [{ tier: 'child', from: 3, price: 6000 }],
      familyWaiver: { maxChargedTickets: 4 },
      familyMaximum: 50000,
      discount: { percent: 5 },
    });
    const priced = priceRegistration(pricing, { attendees: people('adult', 'adult', 'child', 'child', 'child'), family: true, code: { code: 'TEN', percent: 10 } });
    // Tickets 20000, 20000, 10000, 10000, 6000 (the third child); the waiver pays the four dearest (60000); the code
    // takes 10% (54000); the family maximum caps it (50000); the event takes 5% (47500).
    expect(priced).toMatchObject({ subtotal: 60000, siblingOff: 0, codeOff: 6000, familyMaxOff: 4000, discount: 2500, net: 47500 });
    // Without the code the cap takes it to 50000 anyway: the code took off nothing but its share of the event discount.
    expect(priced.codeDiscount).toBe(0);
    expect(priced.lines).toEqual([{ label: 'Registration (code TEN)', amount: 47500, kind: 'registration' }]);
  });

  it('whatever the rules, the lines sum to the total, the parts add up, and each rule only ever lowers the price', () => {
    const caseArb = fc.record({
      from: fc.integer({ min: 2, max: 5 }),
      rule: fc.oneof(fc.record({ price: fc.integer({ min: 0, max: 30_000 }) }), fc.record({ amountOff: fc.integer({ min: 0, max: 30_000 }) })),
      max: fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
      tiers: fc.array(fc.constantFrom('adult', 'child'), { minLength: 1, maxLength: 8 }),
      family: fc.boolean(),
      percent: fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(caseArb, ({ from, rule, max, tiers, family, percent }) => {
        const base = camp(percent ? { discount: { percent } } : {});
        const pricing: EventPricing = { ...base, siblingDiscounts: [{ tier: 'child', from, ...rule }], ...(max !== undefined ? { familyMaximum: max } : {}) };
        const priced = priceRegistration(pricing, { attendees: people(...tiers), family });
        const plain = priceRegistration(base, { attendees: people(...tiers), family });
        expect(priced.lines.reduce((sum, line) => sum + line.amount, 0)).toBe(priced.total);
        expect(priced.net).toBe(priced.subtotal - (priced.codeOff ?? 0) - (priced.familyMaxOff ?? 0) - priced.discount);
        expect(priced.net).toBeLessThanOrEqual(plain.net);
        if (family && max !== undefined) expect(priced.net).toBeLessThanOrEqual(max);
      }),
      { numRuns: 400 },
    );
  });
});

describe('the event file: siblingDiscounts and familyMaximum', () => {
  const file = (pricing: Record<string, unknown>) => ({
    slug: 'camp',
    title: 'Camp',
    startsAt: '2030-03-12T18:00:00+11:00',
    capacity: 50,
    pricing: { tiers: [{ id: 'child', label: 'Child', price: 10000 }], ...pricing },
  });
  const problems = (pricing: Record<string, unknown>) => {
    try {
      parseEventFile(file(pricing));
      return [];
    } catch (error) {
      if (error instanceof EventFileError) return error.problems;
      throw error;
    }
  };

  it('takes a rule per tier and a maximum, and names each problem by its key', () => {
    expect(parseEventFile(file({ siblingDiscounts: [{ tier: 'child', from: 3, price: 5000 }], familyMaximum: 40000 })).pricing).toMatchObject({ familyMaximum: 40000 });
    expect(problems({ siblingDiscounts: [{ tier: 'teen', from: 1, price: 5000, amountOff: 100 }] })).toEqual([
      'pricing.siblingDiscounts.0.from: at least 2 (the first attendee pays the full price)',
      'pricing.siblingDiscounts.0: exactly one of "price" or "amountOff"',
      'pricing.siblingDiscounts.0.tier: no tier "teen" in pricing.tiers',
    ]);
    expect(problems({ siblingDiscounts: [{ tier: 'teen', from: 2, price: 5000 }] })).toEqual(['pricing.siblingDiscounts.0.tier: no tier "teen" in pricing.tiers']);
    expect(problems({ siblingDiscounts: [{ tier: 'child', from: 2, price: 5000 }, { tier: 'child', from: 3, price: 1 }] })).toEqual([
      'pricing.siblingDiscounts.1.tier: one rule per tier ("child" has one before this)',
    ]);
    expect(problems({ familyMaximum: -1 })).toEqual(['pricing.familyMaximum: at least 0']);
  });
});
