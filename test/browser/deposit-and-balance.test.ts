import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registrationPath } from '../../src/http/registration-view.js';
import { setSetting } from '../../src/settings.js';
import { axeViolations } from '../support/axe.js';
import { inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertEvent } from '../support/factories.js';
import { keepScreenshot } from '../support/screenshots.js';

const pages = useBrowserStack();
beforeAll(async () => {
  await setSetting(pages.db, 'bank.accountName', 'Grace Community Church', new Date());
  await setSetting(pages.db, 'bank.bsb', '062-000', new Date());
  await setSetting(pages.db, 'bank.accountNumber', '1234 5678', new Date());
});
afterAll(() => {
  expect(pages.stack.provider.refundCalls).toEqual([]);
});

describe('a deposit, then part of the balance, in a browser', () => {
  it('chooses the deposit by card (the total box says what is due now), pays it, sees the balance, pays a part, and sees the balance lower', async () => {
    const startsAt = inAMonth();
    const balanceDueAt = new Date(startsAt.getTime() - 10 * 86_400_000).toISOString().slice(0, 10);
    const event = await insertEvent(pages.db, {
      online_payment: true,
      capacity: 20,
      starts_at: startsAt,
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] }),
      balance_terms: JSON.stringify({ deposit: { perAttendee: 5000 }, balanceDueAt, minimumPayment: 2000, instalments: null, overdue: 'alert' }),
    });
    await withPhonePage(pages.browser, true, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo@example.org');
      await page.getByLabel('Attendee 1 name').fill('Jo Citizen');
      await page.locator('#payment-card').check();
      await page.locator('#pay-plan-deposit').check();
      await expect.poll(() => page.locator('#live-total-detail').textContent()).toContain('Due now: $50.00 (the deposit)');
      expect(await page.locator('#live-total-detail').textContent()).toContain('Then $70.00 by');
      expect(await axeViolations(page)).toEqual([]);
      await keepScreenshot(page, 'deposit-choice-on-the-form');
      await page.getByRole('button', { name: 'Register' }).click();

      await page.waitForURL(`${pages.stack.provider.apiBase}/pay/**`);
      expect(await page.locator('body').textContent()).toContain('50.00');
      await page.locator('#pay').click();
      await page.waitForURL(`${pages.stack.url}/events/${event.slug}/success?session_id=cs_*`);

      const registration = await pages.db('registrations').where({ event_id: event.id }).first<{ id: string; status: string }>('id', 'status');
      expect(registration?.status).toBe('PENDING');
      const id = registration?.id as string;
      await page.goto(`${pages.stack.url}${registrationPath(pages.stack.ctx.config.authSecret, id, 1)}`);
      expect(await page.locator('#status').textContent()).toBe('Deposit paid');
      expect(await page.locator('#paid').textContent()).toBe('$50.00');
      expect(await page.locator('#balance-left').textContent()).toBe('$70.00');
      expect(await page.locator('#next-due').textContent()).toContain('$70.00');
      expect(await page.locator('#pay-amount').inputValue()).toBe('70.00');
      expect(await axeViolations(page)).toEqual([]);
      await keepScreenshot(page, 'deposit-paid-balance-owing');

      await page.locator('#pay-amount').fill('30');
      await page.locator('#pay-part').click();
      await page.waitForURL(`${pages.stack.provider.apiBase}/pay/**`);
      await page.locator('#pay').click();
      await page.waitForURL(`${pages.stack.url}/**`);
      await expect.poll(async () => (await pages.db('registration_payments').where({ registration_id: id, method: 'card' }).pluck('amount_minor')).sort()).toEqual([3000, 5000]);

      await page.goto(`${pages.stack.url}${registrationPath(pages.stack.ctx.config.authSecret, id, 1)}`);
      expect(await page.locator('#paid').textContent()).toBe('$80.00');
      expect(await page.locator('#balance-left').textContent()).toBe('$40.00');
      expect(await axeViolations(page)).toEqual([]);
      await keepScreenshot(page, 'part-paid-balance-lower');
    });
  });
});
