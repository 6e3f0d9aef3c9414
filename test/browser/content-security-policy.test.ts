import { describe, expect, it } from 'vitest';
import { cspViolations, inAMonth, PHONE_VIEWPORT, useBrowserStack } from '../support/browser.js';
import { insertEvent } from '../support/factories.js';

const pages = useBrowserStack();

/** A phone-sized page that collects what the browser reports as Content-Security-Policy violations. */
async function phonePage() {
  const page = await pages.browser.newPage({ viewport: PHONE_VIEWPORT });
  return { page, violations: cspViolations(page) };
}

describe('the event page under its Content-Security-Policy', () => {
  it('runs its own nonced script and styles with no violation, and the browser refuses an injected inline script', async () => {
    const event = await insertEvent(pages.db, { capacity: 20, starts_at: inAMonth() });
    const { page, violations } = await phonePage();
    try {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      // The page's script (same origin) shows the button and adds a second row; the inline styles apply (the header is themed).
      await page.getByRole('button', { name: 'Add another person' }).click();
      expect(await page.locator('#attendee-name-2').count()).toBe(1);
      expect(await page.evaluate("getComputedStyle(document.querySelector('header')).color")).toBe('rgb(255, 255, 255)');
      expect(violations).toEqual([]);

      // What an injection would add: an inline script without the nonce does not run.
      await page.evaluate(`(() => {
        const script = document.createElement('script');
        script.textContent = 'document.body.dataset.injected = "ran"';
        document.body.appendChild(script);
      })()`);
      expect(await page.evaluate("document.body.dataset.injected ?? 'blocked'")).toBe('blocked');
      expect(violations.length).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });

  it('cannot be shown in a frame on another site', async () => {
    const event = await insertEvent(pages.db, { starts_at: inAMonth() });
    const page = await pages.browser.newPage();
    try {
      await page.setContent(`<iframe id="framed" src="${pages.stack.url}/events/${event.slug}"></iframe>`);
      await page.waitForTimeout(1_000);
      const frame = page.frames().find((f) => f.url().includes(event.slug));
      const framedTitle = frame ? await frame.title().catch(() => '') : '';
      expect(framedTitle).not.toContain('Family Camp');
    } finally {
      await page.close();
    }
  });
});

describe('the registration form in a browser', () => {
  it('offers "Add another person" only while it can add a row: never without script, and no more once the last row is there', async () => {
    const event = await insertEvent(pages.db, { capacity: 20, starts_at: inAMonth(), max_attendees_per_registration: 7 });
    const noScript = await pages.browser.newContext({ javaScriptEnabled: false, viewport: PHONE_VIEWPORT });
    try {
      const page = await noScript.newPage();
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      expect(await page.locator('.attendee').count()).toBe(7);
      expect(await page.getByRole('button', { name: 'Add another person' }).isVisible()).toBe(false);
    } finally {
      await noScript.close();
    }
    const page = await pages.browser.newPage({ viewport: PHONE_VIEWPORT });
    try {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      const add = page.getByRole('button', { name: 'Add another person' });
      expect(await page.locator('.attendee').count()).toBe(1);
      expect(await add.isVisible()).toBe(true);
      for (let rows = 1; rows < 7; rows++) await add.click();
      expect(await page.locator('#attendee-name-7').count()).toBe(1);
      expect(await add.isVisible()).toBe(false);
    } finally {
      await page.close();
    }
  });
});

describe('a registration refused for a field', () => {
  it('keeps every entered value, shows each message under its field tied to it (aria-invalid, aria-describedby) and moves the focus to the first', async () => {
    const event = await insertEvent(pages.db, {
      online_payment: true,
      capacity: 20,
      starts_at: inAMonth(),
      pricing: JSON.stringify({
        tiers: [
          { id: 'adult', label: 'Adult', price: 12000 },
          { id: 'child', label: 'Child', price: 6000 },
        ],
        familyWaiver: { maxChargedTickets: 2 },
      }),
    });
    const { page, violations } = await phonePage();
    try {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo@example.org');
      await page.getByLabel('Mobile').fill('call me');
      await page.getByLabel('Attendee 1 name').fill('Jo Citizen');
      await page.getByLabel('Attendee 1 ticket').selectOption('child');
      const add = page.getByRole('button', { name: 'Add another person' });
      await add.click();
      await page.getByLabel('Attendee 2 name').fill('see www.example.com');
      await page.getByLabel('Attendee 2 ticket').selectOption('child');
      // A blank row between: the server ignores it, and gives the rows back as they were.
      await add.click();
      await add.click();
      await page.getByLabel('Attendee 4 name').fill('Sam Citizen');
      await page.getByLabel('Attendee 4 ticket').selectOption('child');
      await page.locator('#family').check();
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();

      expect(await page.locator('#name').inputValue()).toBe('Jo Citizen');
      expect(await page.locator('#email').inputValue()).toBe('jo@example.org');
      expect(await page.locator('#mobile').inputValue()).toBe('call me');
      expect(await page.locator('#attendee-name-1').inputValue()).toBe('Jo Citizen');
      expect(await page.locator('#attendee-tier-1').inputValue()).toBe('child');
      expect(await page.locator('#attendee-name-2').inputValue()).toBe('see www.example.com');
      expect(await page.locator('#attendee-tier-2').inputValue()).toBe('child');
      expect(await page.locator('#attendee-name-4').inputValue()).toBe('Sam Citizen');
      expect(await page.locator('#attendee-tier-4').inputValue()).toBe('child');
      expect(await page.locator('#family').isChecked()).toBe(true);
      expect(await page.locator('#payment-bank').isChecked()).toBe(true);

      const described = (id: string) =>
        page.evaluate(`(() => {
          const field = document.getElementById(${JSON.stringify(id)});
          const ids = (field.getAttribute('aria-describedby') || '').split(' ').filter(Boolean);
          return { invalid: field.getAttribute('aria-invalid'), description: ids.map((d) => document.getElementById(d)?.textContent).join(' '),
            next: field.nextElementSibling?.textContent ?? null };
        })()`);
      expect(await described('mobile')).toEqual({
        invalid: 'true',
        description: 'Mobile: use digits, spaces and an optional leading +',
        next: 'Mobile: use digits, spaces and an optional leading +',
      });
      expect(await described('attendee-name-2')).toMatchObject({ invalid: 'true', description: expect.stringContaining('Attendee 2 name:') });
      expect(await described('email')).toEqual({ invalid: null, description: '', next: 'Mobile (optional)' });
      expect(await page.evaluate('document.activeElement.id')).toBe('mobile');
      expect(await page.locator('[role="alert"]').count()).toBeGreaterThan(0);

      // A row added after the refusal starts clean.
      await add.click();
      expect(await described('attendee-name-5')).toEqual({ invalid: null, description: '', next: null });
      expect(violations).toEqual([]);
    } finally {
      await page.close();
    }
  });
});

describe('the event page on a phone', () => {
  it('wraps a long address or word in the description, the title and a ticket name instead of running off the screen', async () => {
    const long = 'https://example.org/camp/' + 'packing-list-and-directions'.repeat(4);
    const event = await insertEvent(pages.db, {
      capacity: 20,
      starts_at: inAMonth(),
      title: `Camp ${'Wochenendfreizeitanmeldung'.repeat(2)}`,
      description: `Bring your sleeping bag: ${long}`,
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Erwachsenenwochenendfreizeitteilnahme', price: 12000 }] }),
    });
    const page = await pages.browser.newPage({ viewport: { width: 375, height: 740 } });
    try {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      expect(await page.evaluate('[document.documentElement.scrollWidth, window.innerWidth]')).toEqual([375, 375]);
      const box = await page.getByRole('button', { name: 'Register' }).boundingBox();
      expect((box?.x ?? 0) + (box?.width ?? 0)).toBeLessThanOrEqual(375);
    } finally {
      await page.close();
    }
  });
});
