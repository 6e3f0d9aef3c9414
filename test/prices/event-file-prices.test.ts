import { describe, expect, it } from 'vitest';
import { EventFileError, parseEventFile } from '../../src/office/event-file.js';
import { tierPriceOn } from '../../src/registrations/event-pricing.js';

const file = (tiers: unknown[]) => ({
  slug: 'camp',
  title: 'Camp',
  startsAt: '2030-03-12T18:00:00+11:00',
  capacity: 50,
  pricing: { tiers },
});

function problems(tiers: unknown[]): string[] {
  try {
    parseEventFile(file(tiers));
  } catch (error) {
    if (error instanceof EventFileError) return error.problems;
    throw error;
  }
  return [];
}

describe('an event file with a price schedule', () => {
  it('takes steps in increasing date order with one open-ended last step, and prices each day by them', () => {
    const parsed = parseEventFile(file([{ id: 'adult', label: 'Adult', prices: [{ until: '2030-01-31', price: 25000 }, { until: '2030-03-01', price: 30000 }, { price: 35000 }] }]));
    const tier = parsed.pricing.tiers[0]!;
    expect(tierPriceOn(tier, '2029-12-01')).toBe(25000);
    expect(tierPriceOn(tier, '2030-01-31')).toBe(25000);
    expect(tierPriceOn(tier, '2030-02-01')).toBe(30000);
    expect(tierPriceOn(tier, '2030-03-01')).toBe(30000);
    expect(tierPriceOn(tier, '2030-03-02')).toBe(35000);
  });

  it('names each problem by its key: order, the open-ended last step, price or prices, dates and amounts', () => {
    expect(problems([{ id: 'a', label: 'A', prices: [{ until: '2030-03-01', price: 1 }, { until: '2030-02-01', price: 2 }, { price: 3 }] }])).toEqual([
      'pricing.tiers.0.prices.1.until: after 2030-03-01, the step before it: steps are in increasing date order',
    ]);
    expect(problems([{ id: 'a', label: 'A', prices: [{ until: '2030-03-01', price: 1 }, { until: '2030-04-01', price: 2 }] }])).toEqual([
      'pricing.tiers.0.prices.1.until: the last step has no "until": it is the price from the day after the step before it on',
    ]);
    expect(problems([{ id: 'a', label: 'A', prices: [{ price: 1 }, { price: 2 }] }])).toEqual([
      'pricing.tiers.0.prices.0.until: a date: only the last step is open-ended (step 1 of 2)',
    ]);
    expect(problems([{ id: 'a', label: 'A', price: 1, prices: [{ price: 2 }] }])).toEqual(['pricing.tiers.0.prices: give either "price" or "prices", not both']);
    expect(problems([{ id: 'a', label: 'A' }])).toEqual(['pricing.tiers.0.price: required: a price, or "prices" for one that changes by date']);
    expect(problems([{ id: 'a', label: 'A', prices: [{ until: '2030-02-30', price: 1 }, { price: 2 }] }])).toEqual([
      'pricing.tiers.0.prices.0.until: a date that exists on the calendar',
    ]);
    expect(problems([{ id: 'a', label: 'A', prices: [{ until: '1 March', price: 1 }, { price: 2 }] }])).toEqual([
      'pricing.tiers.0.prices.0.until: a date written yyyy-mm-dd, e.g. 2027-03-01',
    ]);
    expect(problems([{ id: 'a', label: 'A', prices: [{ until: '2030-02-01', price: -5 }, { price: 2.5 }] }])).toEqual([
      'pricing.tiers.0.prices.0.price: at least 0',
      'pricing.tiers.0.prices.1.price: an integer amount in minor units',
    ]);
    expect(problems([{ id: 'a', label: 'A', prices: [] }])).toEqual(['pricing.tiers.0.prices: at least one step, the last without "until"']);
    expect(problems([{ id: 'a', label: 'A', prices: [{ when: '2030-02-01', price: 1 }, { price: 2 }] }])).toContain('unknown key "pricing.tiers.0.prices.0.when"');
  });
});
