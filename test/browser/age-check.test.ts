import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { axeViolations } from '../support/axe.js';
import { cspViolations, inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertEvent } from '../support/factories.js';

const pages = useBrowserStack();

const PRICING = JSON.stringify({
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000, minAge: 5, maxAge: 12 },
  ],
});

/** A date of birth making about `years` on the event's first day; the server's own count decides the exact age said. */
const bornYearsBefore = (start: Date, years: number) => `${start.getUTCFullYear() - years}-01-15`;
const dateOfBirth = (page: Page) => page.locator('#q-1-dateOfBirth');
const liveMessage = (page: Page) => page.locator('#q-1-dateOfBirth-error');
const TOO_YOUNG = /^Date of birth: Child tickets are for ages 5 to 12 on the first day of the event, and (.+) will be \d+$/;

describe('a date of birth is checked by the server\'s age rule as soon as it is typed, in the server\'s words', () => {
  it('says the problem under the field on typing, follows the name and ticket, goes when the date fits; the server then says the very same words', async () => {
    const starts = inAMonth();
    const event = await insertEvent(pages.db, { capacity: 20, starts_at: starts, pricing: PRICING });
    await withPhonePage(pages.browser, true, async (page) => {
      const csp = cspViolations(page);
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Young');
      await page.getByLabel('Email').fill('jo-young@example.org');
      await page.getByLabel('Attendee 1 ticket').selectOption('child');

      await dateOfBirth(page).fill(bornYearsBefore(starts, 3));
      expect(await liveMessage(page).isVisible()).toBe(true);
      expect(await liveMessage(page).textContent()).toMatch(TOO_YOUNG);
      expect(await liveMessage(page).textContent()).toContain('and Jo Young will be');
      expect(await dateOfBirth(page).getAttribute('aria-invalid')).toBe('true');
      expect(await dateOfBirth(page).getAttribute('aria-describedby')).toContain('q-1-dateOfBirth-error');
      expect(await axeViolations(page)).toEqual([]);

      // The message names the attendee: a name typed into the row is said at once.
      await page.getByLabel('Attendee 1 name').fill('Sam Young');
      expect(await liveMessage(page).textContent()).toContain('and Sam Young will be');

      await dateOfBirth(page).fill(bornYearsBefore(starts, 8));
      expect(await liveMessage(page).count()).toBe(0);
      expect(await dateOfBirth(page).getAttribute('aria-invalid')).toBeNull();

      // Born after the event starts.
      await dateOfBirth(page).fill(`${starts.getUTCFullYear() + 1}-06-01`);
      expect(await liveMessage(page).textContent()).toBe('Date of birth: enter a date before the event');

      await dateOfBirth(page).fill(bornYearsBefore(starts, 15));
      await dateOfBirth(page).blur();
      const live = await liveMessage(page).textContent();
      expect(live).toMatch(TOO_YOUNG);

      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      // The summary is the server's alone (the script writes only under the field).
      expect(await page.locator('.errors li[data-field="q.0.dateOfBirth"]').textContent()).toBe(live);
      expect(await liveMessage(page).textContent()).toBe(live);
      expect(csp).toEqual([]);
    });
    expect(await pages.db('registrations').where({ event_id: event.id }).first()).toBeUndefined();
  });

  it('an adult ticket asks no date of birth, and a blank row is not judged', async () => {
    const starts = inAMonth();
    const event = await insertEvent(pages.db, { capacity: 20, starts_at: starts, pricing: PRICING });
    await withPhonePage(pages.browser, true, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Attendee 1 ticket').selectOption('child');
      await dateOfBirth(page).fill(bornYearsBefore(starts, 3));
      // No name in the row yet: the server would skip the row, so nothing is said.
      expect(await liveMessage(page).count()).toBe(0);
      await page.getByLabel('Attendee 1 name').fill('Ari Young');
      expect(await liveMessage(page).textContent()).toMatch(TOO_YOUNG);
      await page.getByLabel('Attendee 1 ticket').selectOption('adult');
      expect(await dateOfBirth(page).isVisible()).toBe(false);
      expect(await liveMessage(page).count()).toBe(0);
    });
  });
});
