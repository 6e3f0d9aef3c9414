import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import { priceRegistration } from '../../src/registrations/pricing.js';
import { axeViolations } from '../support/axe.js';
import { cspViolations, inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertEvent } from '../support/factories.js';
import { keepScreenshot } from '../support/screenshots.js';
import { smallTapTargets } from '../support/tap-targets.js';

const pages = useBrowserStack();

const CAMP: EventPricing = {
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000 },
  ],
  discount: { percent: 10 },
  addons: [
    { id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee', stock: 40 },
    { id: 'tshirt', label: 'T-shirt', price: 1500, per: 'attendee', options: ['S', 'M', 'L'] },
    { id: 'lodge', label: 'Lodge room', price: 9000, per: 'registration' },
  ],
};

const totalMinor = async (page: Page) => Number(await page.locator('#live-total-amount').getAttribute('data-total-minor'));

describe('add-ons on the registration form', () => {
  it('are chosen per attendee and per registration on a phone; the live total prices them as the server does, and the card checkout charges exactly it', async () => {
    const event = await insertEvent(pages.db, { online_payment: true, capacity: 40, starts_at: inAMonth(), pricing: JSON.stringify(CAMP) });
    await withPhonePage(pages.browser, true, async (page) => {
      const violations = cspViolations(page);
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Ana Lee');
      await page.getByLabel('Email').fill('ana-addons@example.org');
      await page.locator('#payment-card').check();
      expect(await totalMinor(page)).toBe(10800);

      await page.getByLabel('Bus seat').first().check();
      await page.getByRole('button', { name: 'Add another person' }).click();
      await page.getByLabel('Attendee 2 name', { exact: true }).fill('Ben Lee');
      await page.getByLabel('Attendee 2 ticket', { exact: true }).selectOption('child');
      // The second row's controls were renamed with it: its T-shirt is attendee 2's.
      await page.locator('#addon-2-tshirt').selectOption('M');
      await page.locator('#addon-lodge').check();
      const expected = priceRegistration(
        CAMP,
        { attendees: [{ name: 'Ana Lee', tier: 'adult', addons: [{ addon: 'bus' }] }, { name: 'Ben Lee', tier: 'child', addons: [{ addon: 'tshirt', option: 'M' }] }], family: false, addons: [{ addon: 'lodge' }] },
        {},
      );
      // 10% off the tickets only: 16200 + 2000 + 1500 + 9000.
      expect(expected.total).toBe(28700);
      expect(await totalMinor(page)).toBe(expected.total);
      await keepScreenshot(page, 'addons-form-chosen');
      expect(await axeViolations(page)).toEqual([]);
      expect(await smallTapTargets(page)).toEqual([]);
      expect(violations).toEqual([]);

      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForURL(`${pages.stack.provider.apiBase}/pay/**`);
      const checkout = await pages.db('checkout_sessions').where({ event_id: event.id }).first();
      expect(checkout.net_minor + checkout.surcharge_minor).toBe(expected.total);
      expect(checkout.addon_units).toEqual({ bus: 1 });
    });
  });
});
