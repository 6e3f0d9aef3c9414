import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { createTestContext } from '../support/context.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

const pages = useBrowserStack();
const withPage = (javaScriptEnabled: boolean, run: Parameters<typeof withPhonePage>[2]) => withPhonePage(pages.browser, javaScriptEnabled, run);

const PRICING = JSON.stringify({
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000 },
  ],
});

describe('a member without script', () => {
  it('registers fewer people than the rows shown: the blank rows are ignored, whatever ticket they show', async () => {
    const event = await insertEvent(pages.db, { capacity: 20, starts_at: inAMonth(), pricing: PRICING });
    await withPage(false, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      expect(await page.locator('.attendee').count()).toBe(10);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo@example.org');
      await page.getByLabel('Attendee 1 name').fill('Jo Citizen');
      await page.getByLabel('Attendee 2 name').fill('Sam Citizen');
      await page.getByLabel('Attendee 2 ticket').selectOption('child');
      // A row left blank between, and one whose ticket was changed but no name typed.
      await page.getByLabel('Attendee 4 name').fill('   ');
      await page.getByLabel('Attendee 5 ticket').selectOption('child');
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();

      expect(new URL(page.url()).pathname).toMatch(/^\/registrations\/[0-9a-f-]{36}$/);
      expect(await page.locator('#status').textContent()).toBe('Awaiting payment');
      const lines = await page.locator('.lines li').allTextContents();
      expect(lines).toHaveLength(3);
      expect(lines[0]).toContain('Jo Citizen');
      expect(lines[1]).toContain('Sam Citizen');
      expect(lines[2]).toMatch(/Total\s*\$180\.00/);
    });
    const registrations = await pages.db('registrations').where({ event_id: event.id }).select('attendee_count', 'attendees');
    expect(registrations).toEqual([
      {
        attendee_count: 2,
        attendees: [
          { name: 'Jo Citizen', tier: 'adult' },
          { name: 'Sam Citizen', tier: 'child' },
        ],
      },
    ]);
  });
});

describe("without script the form offers every row the event's maxAttendeesPerRegistration allows", () => {
  it('registers a group of 12 on an event allowing 12 per registration, past the rows the script shows at first', async () => {
    const event = await insertEvent(pages.db, { capacity: 40, starts_at: inAMonth(), pricing: PRICING, max_attendees_per_registration: 12 });
    const names = Array.from({ length: 12 }, (_, index) => `Youth ${String.fromCharCode(65 + index)}`);
    await withPage(false, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      expect(await page.locator('.attendee').count()).toBe(12);
      expect(await page.getByText('At most 12 people. Empty rows are ignored.').isVisible()).toBe(true);
      await page.getByLabel('Your name').fill('Pat Leader');
      await page.getByLabel('Email').fill('pat@example.org');
      for (const [index, name] of names.entries()) {
        await page.getByLabel(`Attendee ${index + 1} name`, { exact: true }).fill(name);
        await page.getByLabel(`Attendee ${index + 1} ticket`, { exact: true }).selectOption('child');
      }
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#status').textContent()).toBe('Awaiting payment');
    });
    const [registration] = await pages.db('registrations').where({ event_id: event.id }).select('attendee_count', 'attendees', 'total_minor');
    expect(registration).toEqual({ attendee_count: 12, attendees: names.map((name) => ({ name, tier: 'child' })), total_minor: 12 * 6000 });
  });

  it('offers as many rows as places left when fewer than that are left', async () => {
    const event = await eventWithPlacesLeft(8);
    await withPage(false, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      expect(await page.locator('.attendee').count()).toBe(8);
      expect(await page.getByText('Only 8 places are left, so this registration can name at most 8 people.').isVisible()).toBe(true);
    });
  });
});

/** A capacity-limited event with this many places left, the rest taken by one registration. */
async function eventWithPlacesLeft(left: number, capacity = 20) {
  const event = await insertEvent(pages.db, { capacity, starts_at: inAMonth(), pricing: PRICING });
  await insertRegistration(pages.db, createTestContext({ db: pages.db }).cipher, event.id, { status: 'PENDING', attendee_count: capacity - left });
  return event;
}

describe('a form for an event with fewer places left than one registration may name', () => {
  it('without script shows only as many rows as places left, and says so beside them', async () => {
    const event = await eventWithPlacesLeft(3);
    await withPage(false, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      expect(await page.locator('.attendee').count()).toBe(3);
      expect(await page.getByLabel('Attendee 3 name').isVisible()).toBe(true);
      expect(await page.getByRole('group', { name: 'Who is coming' }).getByText('Only 3 places are left').isVisible()).toBe(true);
      expect(await page.getByRole('button', { name: 'Add another person' }).isVisible()).toBe(false);
    });
  });

  it('with script adds rows only up to the places left', async () => {
    const three = await eventWithPlacesLeft(3);
    await withPage(true, async (page) => {
      await page.goto(`${pages.stack.url}/events/${three.slug}`);
      expect(await page.locator('.attendee').count()).toBe(1);
      expect(await page.getByText('Only 3 places are left, so this registration can name at most 3 people.').isVisible()).toBe(true);
      const add = page.getByRole('button', { name: 'Add another person' });
      await add.click();
      await add.click();
      expect(await page.locator('.attendee').count()).toBe(3);
      expect(await add.isVisible()).toBe(false);
    });
    const eight = await eventWithPlacesLeft(8);
    await withPage(true, async (page) => {
      await page.goto(`${pages.stack.url}/events/${eight.slug}`);
      expect(await page.locator('.attendee').count()).toBe(1);
      const add = page.getByRole('button', { name: 'Add another person' });
      for (let rows = 1; rows < 7; rows++) await add.click();
      expect(await add.isVisible()).toBe(true);
      await add.click();
      expect(await page.locator('.attendee').count()).toBe(8);
      expect(await page.getByLabel('Attendee 8 name').isVisible()).toBe(true);
      expect(await add.isVisible()).toBe(false);
    });
  });

  it('registers a family that fits the places left', async () => {
    const event = await eventWithPlacesLeft(2);
    await withPage(true, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo-two@example.org');
      await page.getByLabel('Attendee 1 name').fill('Jo Citizen');
      await page.getByRole('button', { name: 'Add another person' }).click();
      await page.getByLabel('Attendee 2 name').fill('Sam Citizen');
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#status').textContent()).toBe('Awaiting payment');
    });
    expect(await pages.db('registrations').where({ event_id: event.id }).sum({ seats: 'attendee_count' }).first()).toEqual({ seats: 20 });
  });
});

describe('a registration that no longer fits when it is posted', () => {
  /** The family of four fills in the form; meanwhile others take all but two of the places. */
  async function fillFamilyOfFourThenLoseThePlaces(page: Page, event: { id: string; slug: string }) {
    await page.goto(`${pages.stack.url}/events/${event.slug}`);
    await page.getByLabel('Your name').fill('Ana Lee');
    await page.getByLabel('Email').fill('ana@example.org');
    await page.getByLabel('Mobile').fill('0400 000 000');
    const add = page.getByRole('button', { name: 'Add another person' });
    for (const [index, [name, tier]] of ([['Ana Lee', 'adult'], ['Ben Lee', 'adult'], ['Cy Lee', 'child'], ['Di Lee', 'child']] as const).entries()) {
      // With script the form starts with one row; without it every row is there.
      if (index > 0 && (await add.isVisible())) await add.click();
      await page.getByLabel(`Attendee ${index + 1} name`, { exact: true }).fill(name);
      await page.getByLabel(`Attendee ${index + 1} ticket`, { exact: true }).selectOption(tier);
    }
    await page.locator('#payment-bank').check();
    await insertRegistration(pages.db, createTestContext({ db: pages.db }).cipher, event.id, { status: 'PENDING', attendee_count: 8 });
    await page.getByRole('button', { name: 'Register' }).click();
    await page.waitForLoadState();
  }

  async function expectEverythingTypedBack(page: Page) {
    expect(await page.locator('#form-error').textContent()).toBe('Sorry, only 2 places are left for this event.');
    expect(await page.getByLabel('Your name').inputValue()).toBe('Ana Lee');
    expect(await page.getByLabel('Email').inputValue()).toBe('ana@example.org');
    expect(await page.getByLabel('Mobile').inputValue()).toBe('0400 000 000');
    expect(await page.locator('#payment-bank').isChecked()).toBe(true);
    const rows = await page.locator('.attendee').evaluateAll((all) =>
      all.map((row) => [row.querySelector('input')?.value, row.querySelector('select')?.value]),
    );
    expect(rows).toEqual([['Ana Lee', 'adult'], ['Ben Lee', 'adult'], ['Cy Lee', 'child'], ['Di Lee', 'child']]);
    expect(await page.getByText('Only 2 places are left, so this registration can name at most 2 people.').isVisible()).toBe(true);
    expect(await page.getByText('Only 2 places left', { exact: true }).isVisible()).toBe(true);
  }

  it('gives the form back with everything typed, the reason at the top and the places left now; two rows removed, it registers', async () => {
    const event = await eventWithPlacesLeft(10);
    await withPage(true, async (page) => {
      await fillFamilyOfFourThenLoseThePlaces(page, event);
      expect(new URL(page.url()).pathname).toBe(`/events/${event.slug}/register`);
      await expectEverythingTypedBack(page);
      expect(await page.evaluate('document.activeElement.id')).toBe('form-error');
      expect(await page.getByRole('button', { name: 'Add another person' }).isVisible()).toBe(false);

      await page.getByRole('button', { name: 'Remove attendee 4', exact: true }).click();
      await page.getByRole('button', { name: 'Remove attendee 3', exact: true }).click();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#status').textContent()).toBe('Awaiting payment');
    });
    const mine = await pages.db('registrations').where({ event_id: event.id, attendee_count: 2 }).select('attendees');
    expect(mine).toEqual([
      {
        attendees: [
          { name: 'Ana Lee', tier: 'adult' },
          { name: 'Ben Lee', tier: 'adult' },
        ],
      },
    ]);
    expect(await pages.db('registrations').where({ event_id: event.id }).sum({ seats: 'attendee_count' }).first()).toEqual({ seats: 20 });
  });

  it('without script gives the form back with everything typed too', async () => {
    const event = await eventWithPlacesLeft(10);
    await withPage(false, async (page) => {
      await fillFamilyOfFourThenLoseThePlaces(page, event);
      await expectEverythingTypedBack(page);
    });
    expect(await pages.db('registrations').where({ event_id: event.id }).sum({ seats: 'attendee_count' }).first()).toEqual({ seats: 18 });
  });
});

describe('a name written right to left', () => {
  it('shows on the registration page in its own direction: the digit typed before "فاطمة" stays on its right, not pulled left by "Adult — "', async () => {
    const event = await insertEvent(pages.db, { capacity: 20, starts_at: inAMonth(), pricing: PRICING });
    const name = '2 فاطمة';
    await withPage(false, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('فاطمة الزهراء');
      await page.getByLabel('Email').fill('fatima@example.org');
      await page.getByLabel('Attendee 1 name').fill(name);
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#status').textContent()).toBe('Awaiting payment');

      // Where the browser draws the digit and the name's first letter (logical order: "2", " ", "ف").
      const [digit, letter] = (await page.evaluate(`(() => {
        const typed = ${JSON.stringify(name)};
        const walker = document.createTreeWalker(document.querySelector('.lines'), NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const at = node.textContent.indexOf(typed);
          if (at < 0) continue;
          const left = (offset) => {
            const range = document.createRange();
            range.setStart(node, offset);
            range.setEnd(node, offset + 1);
            return range.getBoundingClientRect().left;
          };
          return [left(at), left(at + 2)];
        }
        return [];
      })()`)) as number[];
      expect(digit).toBeDefined();
      expect(digit).toBeGreaterThan(letter as number);
    });
  });
});
