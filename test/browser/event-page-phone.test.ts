import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import type { Question } from '../../src/registrations/answers.js';
import { confirmPath } from '../../src/registrations/waitlist/links.js';
import { axeViolations } from '../support/axe.js';
import { cspViolations, inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { keepScreenshot } from '../support/screenshots.js';
import { smallTapTargets } from '../support/tap-targets.js';
import { entries, fullWaitlistEvent, openOffer } from '../registrations/waitlist-support.js';

const pages = useBrowserStack();
const onPhone = (javaScriptEnabled: boolean, run: (page: Page) => Promise<void>) => withPhonePage(pages.browser, javaScriptEnabled, run);
const open = (page: Page, path: string) => page.goto(`${pages.stack.url}${path}`);

const PRICING = {
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child (4-12)', price: 1000, minAge: 4, maxAge: 12 },
  ],
  familyWaiver: { maxChargedTickets: 2 },
};
const TWELVE = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday', 'Morning', 'Noon', 'Afternoon', 'Evening', 'Night'];
const QUESTIONS: Question[] = [
  { id: 'allergy', label: 'Any allergy?', type: 'yesno', appliesTo: 'attendee', required: true },
  { id: 'meals', label: 'Meals', type: 'multichoice', appliesTo: 'attendee', options: ['Breakfast', 'Lunch', 'Dinner'] },
  { id: 'arrival', label: 'Arrival day', type: 'choice', appliesTo: 'registration', options: TWELVE },
  { id: 'helping', label: 'We can help on', type: 'multichoice', appliesTo: 'registration', options: TWELVE },
  { id: 'photos', label: 'We agree that photos of our family may appear in church publications.', type: 'consent', appliesTo: 'registration' },
];

/** An event on the real clock's calendar (the browser's server runs on it) with `left` of `capacity` places left. */
async function eventWithPlacesLeft(left: number, capacity: number, overrides: Record<string, unknown> = {}) {
  const event = await insertEvent(pages.db, { capacity, starts_at: inAMonth(), pricing: JSON.stringify(PRICING), ...overrides });
  if (capacity > left) await insertRegistration(pages.db, pages.stack.ctx.cipher, event.id, { status: 'PENDING', attendee_count: capacity - left });
  return event;
}

const waitlistEvent = (capacity: number, taken = capacity) =>
  fullWaitlistEvent(pages.db, pages.stack.ctx.cipher, capacity, { starts_at: inAMonth(), pricing: JSON.stringify(PRICING) }, taken);

/** What a page must be on a phone: nothing axe finds, every control big enough, no script refused; and its picture kept. */
async function checkPhonePage(page: Page, screenshot: string): Promise<void> {
  expect(await axeViolations(page)).toEqual([]);
  expect(await smallTapTargets(page)).toEqual([]);
  await keepScreenshot(page, screenshot);
}

const box = async (page: Page, selector: string) => {
  const found = await page.locator(selector).boundingBox();
  if (!found) throw new Error(`${selector} is not on the page`);
  return found;
};

describe('the event page on a phone, as places run out', () => {
  it('plenty of places: the count said plainly, the form with questions, two attendees and their Remove buttons, every control at least 44 × 44 px', async () => {
    const event = await eventWithPlacesLeft(38, 40, { questions: JSON.stringify(QUESTIONS), online_payment: true });
    await onPhone(true, async (page) => {
      const csp = cspViolations(page);
      await open(page, `/events/${event.slug}`);
      expect(await page.getByText('38 places left', { exact: true }).isVisible()).toBe(true);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByRole('button', { name: 'Add another person' }).click();
      expect(await page.getByRole('button', { name: 'Remove attendee 2' }).isVisible()).toBe(true);
      await page.locator('#q-1-allergy').check();
      await checkPhonePage(page, 'event-page-places-plenty');
      expect(csp).toEqual([]);
    });
  });

  it('few places left: "Only 3 places left", and the limit said once above the rows', async () => {
    const event = await eventWithPlacesLeft(3, 20);
    await onPhone(true, async (page) => {
      await open(page, `/events/${event.slug}`);
      expect(await page.getByText('Only 3 places left', { exact: true }).isVisible()).toBe(true);
      expect(await page.getByText(/at most 3 people/i).count()).toBe(1);
      await checkPhonePage(page, 'event-page-few-left');
    });
  });

  it('full, with a waiting list: the join form at once', async () => {
    const { event } = await waitlistEvent(2);
    await onPhone(true, async (page) => {
      await open(page, `/events/${event.slug}`);
      expect(await page.getByRole('heading', { name: 'Join the waiting list' }).isVisible()).toBe(true);
      await checkPhonePage(page, 'event-page-full-waiting-list');
    });
  });
});

describe('the waiting list is offered once the family names more people than there are places left', () => {
  it('with script: hidden with three rows for three places, shown and filled in at the fourth, hidden again when a row goes', async () => {
    const { event } = await waitlistEvent(10, 7);
    await onPhone(true, async (page) => {
      await open(page, `/events/${event.slug}`);
      const waitlist = page.locator('#waitlist');
      const add = page.getByRole('button', { name: 'Add another person' });
      expect(await waitlist.isVisible()).toBe(false);
      // The join form's fields have the same labels, hidden: the registration form's by id.
      await page.locator('#name').fill('Jo Lee');
      await page.locator('#email').fill('jo-lee@example.org');
      await add.click();
      await add.click();
      expect(await page.locator('.attendee').count()).toBe(3);
      expect(await waitlist.isVisible()).toBe(false);
      expect(await page.locator('#over-places').textContent()).toBe('');

      await add.click();
      expect(await waitlist.isVisible()).toBe(true);
      expect(await page.locator('#over-places').textContent()).toBe(
        'You are adding 4 people, but only 3 places are left. Register up to 3, or join the waiting list below for all 4.',
      );
      expect(await page.locator('#waitlist-name').inputValue()).toBe('Jo Lee');
      expect(await page.locator('#waitlist-email').inputValue()).toBe('jo-lee@example.org');
      expect(await page.locator('#waitlist-places').inputValue()).toBe('4');
      await checkPhonePage(page, 'event-page-waiting-list-offered');

      await page.getByRole('button', { name: 'Remove attendee 4' }).click();
      expect(await waitlist.isVisible()).toBe(false);
      expect(await page.locator('#over-places').textContent()).toBe('');
    });
  });

  it('without script: the post naming five for three places comes back with the waiting list filled in, and joining it asks to check the mailbox', async () => {
    const { event } = await waitlistEvent(10, 7);
    await onPhone(false, async (page) => {
      await open(page, `/events/${event.slug}`);
      expect(await page.locator('#waitlist').isVisible()).toBe(false);
      await page.locator('#name').fill('Kim Park');
      await page.locator('#email').fill('kim-park@example.org');
      for (const [index, name] of ['Kim Park', 'Lou Park', 'Mo Park', 'Noa Park', 'Oli Park'].entries()) {
        await page.getByLabel(`Attendee ${index + 1} name`, { exact: true }).fill(name);
      }
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#form-error').textContent()).toBe('Sorry, only 3 places are left for this event.');
      expect(await page.locator('#waitlist').isVisible()).toBe(true);
      expect(await page.locator('#waitlist-places').inputValue()).toBe('5');
      await page.getByRole('link', { name: 'Join the waiting list instead' }).click();
      await page.getByRole('button', { name: 'Join the waiting list' }).click();
      await page.waitForLoadState();
      expect(await page.getByRole('heading', { name: 'Check your email' }).isVisible()).toBe(true);
    });
    expect(await entries(pages.db, event.id)).toMatchObject([{ state: 'UNCONFIRMED', places: 5 }]);
  });
});

describe('the waiting-list pages on a phone', () => {
  it('join, "check your email", the confirm page and its answer: axe finds nothing, every control at least 44 × 44 px', async () => {
    const { event } = await waitlistEvent(2);
    await onPhone(true, async (page) => {
      await open(page, `/events/${event.slug}`);
      await page.locator('#waitlist-name').fill('Lee Family');
      await page.locator('#waitlist-email').fill('lee-family@example.org');
      await page.locator('#waitlist-places').fill('3');
      await page.getByRole('button', { name: 'Join the waiting list' }).click();
      await page.waitForLoadState();
      expect(await page.getByRole('heading', { name: 'Check your email' }).isVisible()).toBe(true);
      expect((await box(page, 'a.back-link')).height).toBeGreaterThanOrEqual(44);
      await checkPhonePage(page, 'waitlist-check-your-email');

      const [entry] = await entries(pages.db, event.id);
      await open(page, confirmPath(pages.stack.ctx.config, entry?.id as string));
      expect(await page.getByRole('button', { name: 'Confirm my place' }).isVisible()).toBe(true);
      await checkPhonePage(page, 'waitlist-confirm');
      await page.getByRole('button', { name: 'Confirm my place' }).click();
      await page.waitForLoadState();
      expect(await page.getByRole('heading', { name: 'You are on the waiting list' }).isVisible()).toBe(true);
      await checkPhonePage(page, 'waitlist-confirmed');
    });
  });

  it("an offer's link: attendee 1 named as the family joined, the total shown on load; the page without script shows the server's total for the places held", async () => {
    const { event, registrations } = await waitlistEvent(3);
    const token = await openOffer(pages.stack.ctx, event, registrations, { name: 'Claimer Family', email: 'claimer-phone@example.org' }, 2);
    await onPhone(true, async (page) => {
      await open(page, `/events/${event.slug}?offer=${token}`);
      expect(await page.getByLabel('Attendee 1 name').inputValue()).toBe('Claimer Family');
      expect(await page.locator('#live-total').isVisible()).toBe(true);
      // The script prices the rows as named: one so far, at the first ticket's price and the chosen payment.
      expect(await page.locator('#live-total-label').textContent()).toBe('Total for 1 person');
      expect(await page.locator('#live-total-amount').textContent()).toBe('$120.00');
      await checkPhonePage(page, 'waitlist-offer-page');
    });
    await onPhone(false, async (page) => {
      await open(page, `/events/${event.slug}?offer=${token}`);
      expect(await page.getByLabel('Attendee 1 name').inputValue()).toBe('Claimer Family');
      expect(await page.locator('#live-total').isVisible()).toBe(true);
      expect(await page.locator('#live-total-label').textContent()).toBe('Total for 2 people');
      expect(await page.locator('#live-total-amount').textContent()).toBe('$240.00');
      await keepScreenshot(page, 'waitlist-offer-page-without-script');
    });
  });
});

describe('the form given back with the server\'s messages', () => {
  it('after a bad post: the summary and each message beside its field, axe finds nothing, every link and control at least 44 × 44 px', async () => {
    const event = await eventWithPlacesLeft(30, 40, { questions: JSON.stringify(QUESTIONS) });
    await onPhone(true, async (page) => {
      await open(page, `/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo-citizen@example.org');
      await page.getByLabel('Attendee 1 name').fill('see www.example.com');
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      expect(await page.title()).toContain('Please check the form');
      expect(await page.locator('.errors li').allTextContents()).toEqual([
        'Attendee 1 name: a name cannot contain a web or email address',
      ]);
      expect(await page.locator('#attendee-name-1-error').isVisible()).toBe(true);
      await checkPhonePage(page, 'event-form-server-errors');
    });
  });
});

describe('the form fits a phone', () => {
  it('at 390 px a long ticket label stacks under the name, which keeps the width of the card', async () => {
    const event = await eventWithPlacesLeft(30, 40);
    await onPhone(true, async (page) => {
      await open(page, `/events/${event.slug}`);
      await page.getByLabel('Attendee 1 ticket').selectOption('child');
      const name = await box(page, '#attendee-name-1');
      const tier = await box(page, '#attendee-tier-1');
      expect(name.width).toBeGreaterThanOrEqual(300);
      expect(tier.y).toBeGreaterThan(name.y + name.height);
    });
  });

  it('a choice of twelve options is one select; a multiple choice of twelve flows into two columns of full-height rows', async () => {
    const event = await eventWithPlacesLeft(30, 40, { questions: JSON.stringify(QUESTIONS) });
    await onPhone(true, async (page) => {
      await open(page, `/events/${event.slug}`);
      expect(await page.getByLabel(/Arrival day/).evaluate((element) => element.tagName)).toBe('SELECT');
      const choice = await box(page, '.question[data-question="arrival"]');
      expect(choice.height).toBeLessThanOrEqual(120);
      const many = await box(page, '.question[data-question="helping"]');
      // Twelve rows of 44 px would be 528 px before the legend; six rows, the legend and margins stay under 380.
      expect(many.height).toBeLessThanOrEqual(380);
      const option = await box(page, 'label[for="q-helping-11"]');
      expect(option.height).toBeGreaterThanOrEqual(44);
      await page.getByLabel(/Arrival day/).selectOption('Friday');
      await page.getByLabel('Night').check();
    });
  });
});
