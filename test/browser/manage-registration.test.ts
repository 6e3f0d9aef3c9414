import { describe, expect, it } from 'vitest';
import { managePath } from '../../src/payments/manage-link.js';
import { cspViolations, inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

const pages = useBrowserStack();

describe('a family on its phone, from the "Manage your registration" link', () => {
  it('corrects an attendee name, then cancels its unpaid registration after the confirmation step, with no CSP violation', async () => {
    const event = await insertEvent(pages.db, { capacity: 10, starts_at: inAMonth() });
    const { cipher, config } = pages.stack.ctx;
    const { id } = await insertRegistration(pages.db, cipher, event.id, {
      email: 'jo@example.org',
      contact_name: 'Jo Citizen',
      status: 'PENDING',
      attendees: JSON.stringify([
        { name: 'Jo Citizen', tier: 'adult' },
        { name: 'Sam Citizn', tier: 'adult' },
      ]),
      attendee_count: 2,
      line_items: JSON.stringify([
        { label: 'Adult — Jo Citizen', amount: 12000, kind: 'ticket' },
        { label: 'Adult — Sam Citizn', amount: 12000, kind: 'ticket' },
      ]),
      total_minor: 24000,
    });
    const link = `${pages.stack.url}${managePath(config.authSecret, { registrationId: id, version: 1 })}`;

    await withPhonePage(pages.browser, true, async (page) => {
      const violations = cspViolations(page);
      await page.goto(link);
      expect(await page.locator('h1').textContent()).toBe('Manage your registration');
      expect(await page.locator('#owing').textContent()).toBe('$240.00');
      await page.locator('summary', { hasText: 'attendee names' }).click();
      await page.getByLabel(/Attendee 2/).fill('Sam Citizen');
      await page.getByRole('button', { name: 'Save names' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#notice').textContent()).toBe('Your changes are saved.');
      expect(await page.locator('#attendees li').allTextContents()).toEqual(['Jo Citizen (Adult)', 'Sam Citizen (Adult)']);

      await page.getByRole('link', { name: 'Cancel this registration' }).click();
      await page.waitForLoadState();
      expect(await page.locator('h1').textContent()).toBe('Cancel your registration?');
      await page.getByRole('button', { name: 'Yes, cancel my registration' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#status').textContent()).toBe('Cancelled');
      expect(violations).toEqual([]);
    });

    const row = await pages.db('registrations').where({ id }).first();
    expect(row).toMatchObject({ status: 'CANCELLED', cancel_reason: 'registrant' });
    expect(row.attendees).toEqual([
      { name: 'Jo Citizen', tier: 'adult' },
      { name: 'Sam Citizen', tier: 'adult' },
    ]);
  });
});
