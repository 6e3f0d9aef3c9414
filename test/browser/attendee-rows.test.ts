import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { cspViolations, inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertEvent } from '../support/factories.js';

const pages = useBrowserStack();

const PRICING = JSON.stringify({
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000 },
  ],
});

/** A page with script that collects what the browser reports as Content-Security-Policy violations. */
async function withScriptedPage(run: (page: Page, violations: string[]) => Promise<void>): Promise<void> {
  await withPhonePage(pages.browser, true, (page) => run(page, cspViolations(page)));
}

const nameField = (page: Page, n: number) => page.getByLabel(`Attendee ${n} name`, { exact: true });
const tierField = (page: Page, n: number) => page.getByLabel(`Attendee ${n} ticket`, { exact: true });
const removeButton = (page: Page, n: number) => page.getByRole('button', { name: `Remove attendee ${n}`, exact: true });
const addButton = (page: Page) => page.getByRole('button', { name: 'Add another person' });

describe('with script each attendee row has a remove button that names its row', () => {
  it('removes the row, numbers the later rows again, offers "Add another person" again, and registers exactly the rows left', async () => {
    const event = await insertEvent(pages.db, { capacity: 20, starts_at: inAMonth(), pricing: PRICING, max_attendees_per_registration: 7 });
    await withScriptedPage(async (page, violations) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo-remove@example.org');
      // The first row took the contact's name.
      expect(await nameField(page, 1).inputValue()).toBe('Jo Citizen');
      const add = addButton(page);
      await add.click();
      await nameField(page, 2).fill('Sam Citizen');
      await tierField(page, 2).selectOption('child');
      await add.click();
      await nameField(page, 3).fill('Kim Citizen');
      await tierField(page, 3).selectOption('child');
      for (let rows = 3; rows < 7; rows++) await add.click();
      expect(await page.locator('.attendee').count()).toBe(7);
      expect(await add.isVisible()).toBe(false);
      expect(await removeButton(page, 7).isVisible()).toBe(true);

      await removeButton(page, 2).click();
      expect(await page.locator('.attendee').count()).toBe(6);
      expect(await nameField(page, 2).inputValue()).toBe('Kim Citizen');
      expect(await tierField(page, 2).inputValue()).toBe('child');
      expect(await page.evaluate('document.activeElement.id')).toBe('attendee-name-2');
      expect(await page.locator('#attendee-status').textContent()).toBe('Removed attendee 2 (Sam Citizen).');
      expect(await removeButton(page, 7).count()).toBe(0);
      expect(await removeButton(page, 6).isVisible()).toBe(true);
      expect(await page.locator('#attendee-name-7').count()).toBe(0);
      expect(await add.isVisible()).toBe(true);
      // A row added after a removal takes the next number.
      await add.click();
      expect(await nameField(page, 7).inputValue()).toBe('');
      expect(violations).toEqual([]);

      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      const lines = await page.locator('.lines li').allTextContents();
      expect(lines).toHaveLength(3);
      expect(lines[2]).toMatch(/Total\s*\$180\.00/);
    });
    const registrations = await pages.db('registrations').where({ event_id: event.id }).select('attendees', 'total_minor');
    expect(registrations).toEqual([
      {
        attendees: [
          { name: 'Jo Citizen', tier: 'adult' },
          { name: 'Kim Citizen', tier: 'child' },
        ],
        total_minor: 18000,
      },
    ]);
  });

  it('never removes the last row: its button goes once only one row is left', async () => {
    const event = await insertEvent(pages.db, { capacity: 20, starts_at: inAMonth(), pricing: PRICING, max_attendees_per_registration: 2 });
    await withScriptedPage(async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      expect(await removeButton(page, 1).isVisible()).toBe(false);
      await addButton(page).click();
      expect(await removeButton(page, 2).isVisible()).toBe(true);
      expect(await addButton(page).isVisible()).toBe(false);
      await removeButton(page, 1).click();
      expect(await page.locator('.attendee').count()).toBe(1);
      expect(await removeButton(page, 1).isVisible()).toBe(false);
      expect(await addButton(page).isVisible()).toBe(true);
    });
  });

  it('after a refusal, a removed row takes its messages with it and the later rows keep theirs under their new numbers', async () => {
    const event = await insertEvent(pages.db, { capacity: 20, starts_at: inAMonth(), pricing: PRICING });
    await withScriptedPage(async (page, violations) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo-refused@example.org');
      await nameField(page, 1).fill('Jo Citizen');
      for (const [n, name] of [[2, 'see www.example.com'], [3, 'Kim Citizen'], [4, 'visit www.example.org']] as const) {
        await addButton(page).click();
        await nameField(page, n).fill(name);
      }
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      const summaryLinks = () => page.locator('.errors a').evaluateAll((links) => links.map((link) => [link.getAttribute('href'), link.textContent?.split(':')[0]]));
      expect(await summaryLinks()).toEqual([
        ['#attendee-name-2', 'Attendee 2 name'],
        ['#attendee-name-4', 'Attendee 4 name'],
      ]);

      await removeButton(page, 2).click();
      expect(await summaryLinks()).toEqual([['#attendee-name-3', 'Attendee 3 name']]);
      expect(await page.locator('.errors li').getAttribute('data-field')).toBe('attendees[2].name');
      const described = await page.evaluate(`(() => {
        const field = document.getElementById('attendee-name-3');
        return { value: field.value, invalid: field.getAttribute('aria-invalid'),
          description: document.getElementById(field.getAttribute('aria-describedby')).textContent };
      })()`);
      expect(described).toEqual({ value: 'visit www.example.org', invalid: 'true', description: expect.stringMatching(/^Attendee 3 name: /) });
      expect(await nameField(page, 2).getAttribute('aria-invalid')).toBeNull();

      // The last row with a problem gone, the summary goes too.
      await removeButton(page, 3).click();
      expect(await page.locator('.errors').count()).toBe(0);
      expect(violations).toEqual([]);
    });
  });
});
