import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cspViolations, launchBrowser, PHONE_VIEWPORT, withPhonePage } from '../support/browser.js';
import { axeViolations } from '../support/axe.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { keepScreenshot } from '../support/screenshots.js';
import { fromReferenceNow } from '../support/test-now.js';

let tdb: TestDatabase;
let server: TestServer;
let browser: Browser;
beforeAll(async () => {
  tdb = await createTestDatabase();
  // The server's clock is the tests' fixed one: the events below are upcoming from it, whatever today is.
  server = await startTestServer(createTestContext({ db: tdb.db, env: { CHURCH_WEBSITE: 'https://grace.example.org' } }));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await tdb?.drop();
});

/** Every link and button on the page narrower or shorter than a 44 px tap target, by its text. */
async function smallTapTargets(page: Page): Promise<string[]> {
  return page.$$eval('a, button', (elements) =>
    elements
      .map((element) => ({ text: element.textContent?.trim() ?? '', box: element.getBoundingClientRect() }))
      .filter(({ box }) => box.width < 44 || box.height < 44)
      .map(({ text, box }) => `${text}: ${Math.round(box.width)}×${Math.round(box.height)}`),
  );
}

describe('the events page on a phone', () => {
  it('with nothing upcoming: a kind word and the church website, accessible, every link a 44 px target', async () => {
    await withPhonePage(browser, true, async (page) => {
      const csp = cspViolations(page);
      await page.goto(`${server.url}/`);
      await expect(page.getByRole('heading', { name: 'No upcoming events' }).isVisible()).resolves.toBe(true);
      await expect(page.getByRole('link', { name: 'Visit our website' }).isVisible()).resolves.toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      expect(await smallTapTargets(page)).toEqual([]);
      expect(csp).toEqual([]);
      await keepScreenshot(page, 'events-page-empty');
    });
  });

  it('with events: each one its title (a link to its page), time, place and places left, accessible, without sideways scrolling', async () => {
    const cipher = createTestContext({ db: tdb.db }).cipher;
    await insertEvent(tdb.db, { slug: 'working-bee', title: 'Working Bee', location: 'Church grounds', starts_at: fromReferenceNow({ days: 4, hours: 22 }), capacity: null });
    const camp = await insertEvent(tdb.db, {
      slug: 'family-camp',
      title: 'Family Camp at the Lake: three days of games, talks and campfires',
      location: 'Lake Macquarie Camp, 12 Shore Road, Lake Macquarie',
      starts_at: fromReferenceNow({ days: 13, hours: 8 }),
      ends_at: fromReferenceNow({ days: 15, hours: 4 }),
      capacity: 60,
    });
    await insertRegistration(tdb.db, cipher, camp.id, { status: 'PAID', attendee_count: 56 });
    const dinner = await insertEvent(tdb.db, { slug: 'dinner', title: 'Parish Dinner', location: 'Hall', starts_at: fromReferenceNow({ days: 20, hours: 7 }), capacity: 4, waitlist_enabled: true });
    await insertRegistration(tdb.db, cipher, dinner.id, { status: 'PAID', attendee_count: 4 });

    await withPhonePage(browser, true, async (page) => {
      const csp = cspViolations(page);
      await page.goto(`${server.url}/events`);
      const links = page.locator('a.event-link');
      expect(await links.allTextContents()).toEqual(['Working Bee', 'Family Camp at the Lake: three days of games, talks and campfires', 'Parish Dinner']);
      await expect(page.getByText('Only 4 places left').isVisible()).resolves.toBe(true);
      await expect(page.getByText('Full — join the waiting list').isVisible()).resolves.toBe(true);
      expect(await axeViolations(page)).toEqual([]);
      expect(await smallTapTargets(page)).toEqual([]);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBe(PHONE_VIEWPORT.width);
      expect(csp).toEqual([]);
      await keepScreenshot(page, 'events-page');

      await links.nth(1).click();
      await page.waitForURL(`${server.url}/events/family-camp`);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toContain('Family Camp at the Lake');
    });
  });
});
