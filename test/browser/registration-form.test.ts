import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser, PHONE_VIEWPORT, startPaymentStack, type PaymentStack } from '../support/browser.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { createTestContext } from '../support/context.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

let tdb: TestDatabase;
let stack: PaymentStack;
let browser: Browser;
beforeAll(async () => {
  tdb = await createTestDatabase();
  stack = await startPaymentStack(tdb.db);
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await stack?.close();
  await tdb?.drop();
});

/** The pages run on the real clock, and the form closes when the event starts. */
const inAMonth = () => new Date(Date.now() + 30 * 86_400_000);

const PRICING = JSON.stringify({
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000 },
  ],
});

/** A phone-sized page with or without script, closed with its context. */
async function withPage(javaScriptEnabled: boolean, run: (page: Page) => Promise<void>): Promise<void> {
  const context = await browser.newContext({ javaScriptEnabled, viewport: PHONE_VIEWPORT });
  try {
    await run(await context.newPage());
  } finally {
    await context.close();
  }
}

describe('a member without script', () => {
  it('registers fewer people than the rows shown: the blank rows are ignored, whatever ticket they show', async () => {
    const event = await insertEvent(tdb.db, { capacity: 20, starts_at: inAMonth(), pricing: PRICING });
    await withPage(false, async (page) => {
      await page.goto(`${stack.url}/events/${event.slug}`);
      expect(await page.locator('.attendee').count()).toBe(6);
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
    const registrations = await tdb.db('registrations').where({ event_id: event.id }).select('attendee_count', 'attendees');
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

/** A capacity-limited event with this many places left, the rest taken by one registration. */
async function eventWithPlacesLeft(left: number, capacity = 20) {
  const event = await insertEvent(tdb.db, { capacity, starts_at: inAMonth(), pricing: PRICING });
  await insertRegistration(tdb.db, createTestContext({ db: tdb.db }).cipher, event.id, { status: 'PENDING', attendee_count: capacity - left });
  return event;
}

describe('a form for an event with fewer places left than one registration may name', () => {
  it('without script shows only as many rows as places left, and says so beside them', async () => {
    const event = await eventWithPlacesLeft(3);
    await withPage(false, async (page) => {
      await page.goto(`${stack.url}/events/${event.slug}`);
      expect(await page.locator('.attendee').count()).toBe(3);
      expect(await page.getByLabel('Attendee 3 name').isVisible()).toBe(true);
      expect(await page.getByRole('group', { name: 'Who is coming' }).getByText('Only 3 places are left').isVisible()).toBe(true);
      expect(await page.getByRole('button', { name: 'Add another attendee' }).isVisible()).toBe(false);
    });
  });

  it('with script adds rows only up to the places left', async () => {
    const three = await eventWithPlacesLeft(3);
    await withPage(true, async (page) => {
      await page.goto(`${stack.url}/events/${three.slug}`);
      expect(await page.locator('.attendee').count()).toBe(3);
      expect(await page.getByText('Only 3 places are left, so this registration can name at most 3 people.').isVisible()).toBe(true);
      expect(await page.getByRole('button', { name: 'Add another attendee' }).isVisible()).toBe(false);
    });
    const eight = await eventWithPlacesLeft(8);
    await withPage(true, async (page) => {
      await page.goto(`${stack.url}/events/${eight.slug}`);
      expect(await page.locator('.attendee').count()).toBe(6);
      const add = page.getByRole('button', { name: 'Add another attendee' });
      await add.click();
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
      await page.goto(`${stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo-two@example.org');
      await page.getByLabel('Attendee 1 name').fill('Jo Citizen');
      await page.getByLabel('Attendee 2 name').fill('Sam Citizen');
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#status').textContent()).toBe('Awaiting payment');
    });
    expect(await tdb.db('registrations').where({ event_id: event.id }).sum({ seats: 'attendee_count' }).first()).toEqual({ seats: 20 });
  });
});
