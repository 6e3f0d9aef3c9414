import { describe, expect, it } from 'vitest';
import { extrasLines, extrasProblem, extrasRoom, type ExtrasHolder } from '../../src/registrations/addon-extras.js';
import type { EventAddon, EventPricing } from '../../src/registrations/event-pricing.js';

const ADDONS: EventAddon[] = [
  { id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee', group: 'transport', required: true, tiers: ['adult', 'child'] },
  { id: 'own', label: 'Own transport', price: 0, per: 'attendee', group: 'transport', required: true, tiers: ['adult', 'child'] },
  { id: 'tshirt', label: 'T-shirt', price: 1500, per: 'attendee', options: ['S', 'M'], maxPerAttendee: 2 },
  { id: 'lodge', label: 'Lodge room', price: 9000, per: 'registration' },
];
const PRICING: Pick<EventPricing, 'addons'> = { addons: ADDONS };
const addon = (id: string) => ADDONS.find((a) => a.id === id) as EventAddon;
const nobody: ExtrasHolder = { name: 'Extras for the registration', has: [], adding: [] };

describe('extras added to a registration made already', () => {
  it('count what an attendee has against maxPerAttendee, and a group alternative it holds rules out the others', () => {
    expect(extrasRoom(ADDONS, addon('tshirt'), [{ addon: 'tshirt', option: 'S' }])).toBe(1);
    expect(extrasRoom(ADDONS, addon('tshirt'), [])).toBe(2);
    expect(extrasRoom(ADDONS, addon('bus'), [{ addon: 'own' }])).toBe(0);
    expect(extrasRoom(ADDONS, addon('bus'), [])).toBe(1);

    const ruth = (adding: ExtrasHolder['adding']): ExtrasHolder => ({ name: 'Ruth', tier: 'adult', has: [{ addon: 'own' }, { addon: 'tshirt', option: 'M' }], adding });
    expect(extrasProblem(PRICING, [ruth([{ addon: 'bus' }])], nobody)?.message).toBe('Ruth: already has Own transport: choose one of Bus seat or Own transport, not both');
    expect(extrasProblem(PRICING, [ruth([{ addon: 'tshirt', option: 'S' }, { addon: 'tshirt', option: 'M' }])], nobody)?.message).toBe('Ruth: already has 1 T-shirt; at most 2 in all');
    expect(extrasProblem(PRICING, [ruth([{ addon: 'tshirt', option: 'S' }])], nobody)).toBeUndefined();
  });

  it('never ask again for a required add-on, and judge the registration\'s own extras with what it has', () => {
    const kim: ExtrasHolder = { name: 'Kim', tier: 'adult', has: [], adding: [{ addon: 'tshirt', option: 'M' }] };
    expect(extrasProblem(PRICING, [kim], nobody)).toBeUndefined();
    const lodged: ExtrasHolder = { ...nobody, has: [{ addon: 'lodge' }], adding: [{ addon: 'lodge' }] };
    expect(extrasProblem(PRICING, [], lodged)).toMatchObject({ field: 'addons', message: 'Extras for the registration: already has 1 Lodge room; at most 1 in all' });
    expect(extrasProblem(PRICING, [{ ...kim, tier: 'infant', adding: [{ addon: 'bus' }] }], nobody)?.message).toBe('Kim: choose one of the extras offered with this ticket');
  });

  it('price only what is added, at the add-on\'s price, named for whom', () => {
    const lines = extrasLines(PRICING, [{ name: 'Kim', tier: 'adult', has: [{ addon: 'tshirt', option: 'S' }], adding: [{ addon: 'tshirt', option: 'M' }] }], { ...nobody, adding: [{ addon: 'lodge' }] });
    expect(lines).toEqual([
      { label: 'T-shirt (M) — Kim', amount: 1500, addon: 'tshirt', option: 'M', attendee: 0 },
      { label: 'Lodge room', amount: 9000, addon: 'lodge' },
    ]);
  });
});
