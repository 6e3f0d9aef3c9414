import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setSetting } from '../../src/settings.js';
import { inAMonth, PHONE_VIEWPORT, useBrowserStack } from '../support/browser.js';
import { insertEvent } from '../support/factories.js';

const pages = useBrowserStack();
beforeAll(async () => {
  await setSetting(pages.db, 'bank.accountName', 'Grace Community Church', new Date());
  await setSetting(pages.db, 'bank.bsb', '062-000', new Date());
  await setSetting(pages.db, 'bank.accountNumber', '1234 5678', new Date());
});
// Runs before the stack closes (after-hooks run last registered first).
afterAll(() => {
  expect(pages.stack.provider.refundCalls).toEqual([]);
});

async function cardEvent(): Promise<{ id: string; slug: string }> {
  return insertEvent(pages.db, {
    online_payment: true,
    capacity: 20,
    starts_at: inAMonth(),
    pricing: JSON.stringify({
      tiers: [
        { id: 'adult', label: 'Adult', price: 12000 },
        { id: 'child', label: 'Child', price: 6000 },
      ],
    }),
  });
}

async function fillRegistration(page: Page, payment: 'card' | 'bank'): Promise<void> {
  await page.getByLabel('Your name').fill('Jo Citizen');
  await page.getByLabel('Email').fill('jo@example.org');
  await page.getByLabel('Attendee 1 name').fill('Jo Citizen');
  await page.getByLabel('Attendee 1 ticket').selectOption('adult');
  await page.getByRole('button', { name: 'Add another person' }).click();
  await page.getByLabel('Attendee 2 name').fill('Kim Citizen');
  await page.getByLabel('Attendee 2 ticket').selectOption('child');
  await page.locator(`#payment-${payment}`).check();
}

describe('paying by card in a browser', () => {
  it('registers on the event page with card, pays on the provider page and sees the paid confirmation', async () => {
    const event = await cardEvent();
    const page = await pages.browser.newPage({ viewport: PHONE_VIEWPORT });
    try {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      // Usable on a phone: nothing wider than the screen.
      expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
      await fillRegistration(page, 'card');
      await page.getByRole('button', { name: 'Register' }).click();

      await page.waitForURL(`${pages.stack.provider.apiBase}/pay/**`);
      await page.locator('#pay').click();

      await page.waitForURL(`${pages.stack.url}/events/${event.slug}/success?session_id=cs_*`);
      await expect.poll(() => page.locator('#outcome h1').textContent(), { timeout: 15_000 }).toBe('Payment received, you are registered');
      expect(await page.locator('#outcome').textContent()).toContain('$180.00');
    } finally {
      await page.close();
    }
    const registrations = await pages.db('registrations').where({ event_id: event.id }).select('status', 'payment_method', 'total_minor');
    expect(registrations).toEqual([{ status: 'PAID', payment_method: 'card', total_minor: 18000 }]);
    expect(await pages.db('checkout_sessions').where({ event_id: event.id }).pluck('status')).toEqual(['COMPLETED']);
  });

  it('during a webhook outage the success page says processing (never "nothing was charged"), then turns to paid by itself once the completion arrives', async () => {
    const event = await cardEvent();
    const page = await pages.browser.newPage({ viewport: PHONE_VIEWPORT });
    pages.stack.provider.setWebhookOutage(true);
    try {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await fillRegistration(page, 'card');
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForURL(`${pages.stack.provider.apiBase}/pay/**`);
      await page.locator('#pay').click();

      await page.waitForURL(`${pages.stack.url}/events/${event.slug}/success?session_id=cs_*`);
      expect(await page.locator('#outcome h1').textContent()).toBe('Processing your payment…');
      const processing = (await page.locator('#outcome').textContent()) ?? '';
      expect(processing).toContain('We will email you as soon as your card payment is confirmed; if you were charged you do not need to pay again.');
      expect(processing).not.toContain('nothing was charged');
      expect(pages.stack.provider.withheld).toHaveLength(1);

      const [delivery] = await pages.stack.provider.deliverWithheld();
      expect(delivery?.status).toBe(200);
      await expect.poll(() => page.locator('#outcome h1').textContent(), { timeout: 15_000 }).toBe('Payment received, you are registered');
    } finally {
      pages.stack.provider.setWebhookOutage(false);
      await page.close();
    }
    expect(await pages.db('registrations').where({ event_id: event.id }).pluck('status')).toEqual(['PAID']);
  });

  it('once Register is pressed the form posts no second time (a double-click, or a second press while the network is slow)', async () => {
    const event = await cardEvent();
    const page = await pages.browser.newPage({ viewport: PHONE_VIEWPORT });
    try {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await fillRegistration(page, 'bank');
      // Two presses before the page is gone, counting the submissions that go ahead (a listener after the page's own).
      const pressed = await page.evaluate(`(() => {
        const form = document.querySelector('form[method="post"]');
        const button = form.querySelector('button[type="submit"]');
        let submitted = 0;
        form.addEventListener('submit', (event) => { if (!event.defaultPrevented) submitted++; });
        button.click();
        button.click();
        return { submitted, disabled: button.disabled };
      })()`);
      expect(pressed).toEqual({ submitted: 1, disabled: true });
      await page.waitForURL(`${pages.stack.url}/registrations/**`);
      expect(await page.locator('#status').textContent()).toBe('Awaiting payment');
    } finally {
      await page.close();
    }
    expect(await pages.db('registrations').where({ event_id: event.id }).count({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it('registers by bank transfer, then pays now by card from the registration page and ends PAID', async () => {
    const event = await cardEvent();
    const page = await pages.browser.newPage({ viewport: PHONE_VIEWPORT });
    try {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await fillRegistration(page, 'bank');
      await page.getByRole('button', { name: 'Register' }).click();

      await page.waitForURL(`${pages.stack.url}/registrations/**`);
      expect(await page.locator('#status').textContent()).toBe('Awaiting payment');
      expect(await page.locator('#bank-instructions').textContent()).toContain('062-000');

      await page.locator('#pay-now').click();
      await page.waitForURL(`${pages.stack.url}/registrations/*/pay?token=*`);
      expect(await page.locator('#amount').textContent()).toBe('$180.00');
      await page.locator('#pay').click();

      await page.waitForURL(`${pages.stack.provider.apiBase}/pay/**`);
      await page.locator('#pay').click();

      await page.waitForURL(`${pages.stack.url}/events/${event.slug}/success?session_id=cs_*`);
      await expect.poll(() => page.locator('#outcome h1').textContent(), { timeout: 15_000 }).toBe('Payment received, you are registered');
      await page.getByRole('link', { name: 'View your registration' }).click();
      expect(await page.locator('#status').textContent()).toBe('Paid');
    } finally {
      await page.close();
    }
    const registrations = await pages.db('registrations').where({ event_id: event.id }).select('status', 'payment_method', 'total_minor');
    expect(registrations).toHaveLength(1);
    expect(registrations[0]).toMatchObject({ status: 'PAID', total_minor: 18000 });
  });
});
