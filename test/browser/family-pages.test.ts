import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { managePath } from '../../src/payments/manage-link.js';
import { answerColumns, type Question, type RegistrationAnswers } from '../../src/registrations/answers.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { setSetting } from '../../src/settings.js';
import { axeViolations } from '../support/axe.js';
import { cspViolations, inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { keepScreenshot } from '../support/screenshots.js';

const pages = useBrowserStack();
beforeAll(async () => {
  await setSetting(pages.db, 'bank.accountName', 'Grace Community Church', new Date());
  await setSetting(pages.db, 'bank.bsb', '062-000', new Date());
  await setSetting(pages.db, 'bank.accountNumber', '1234 5678', new Date());
});

const QUESTIONS: Question[] = [
  { id: 'diet', label: 'Dietary needs', type: 'text', appliesTo: 'attendee' },
  { id: 'allergy', label: 'Any allergy?', type: 'yesno', appliesTo: 'attendee', required: true },
  { id: 'allergyDetails', label: 'Allergy details', type: 'longtext', appliesTo: 'attendee', showIf: { question: 'allergy', equals: 'yes' }, sensitive: true },
  { id: 'emergency', label: 'Emergency contact', type: 'text', appliesTo: 'registration' },
];
const PRICING = {
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000, minAge: 5, maxAge: 12 },
  ],
};
/** Each answer a family typed, distinct from every label and name, so the page's text can be searched for it. */
const TYPED = { diet: 'Strictly vegetarian meals', allergyDetails: 'Peanuts and tree nuts', emergency: 'Joe Citizen 0400 111 222' };
const ANSWERS: RegistrationAnswers = {
  registration: { emergency: TYPED.emergency },
  attendees: [
    { diet: TYPED.diet, allergy: true, allergyDetails: TYPED.allergyDetails },
    { allergy: false, dateOfBirth: '2018-03-14' },
  ],
};

/**
 * The bound on a typical manage page's height at 390×844 (two attendees, four answers, owing by bank transfer,
 * open for changes). It measured 4,025 px when every answer was shown twice (once to read, once in its open
 * form) and every form stood open. With each section read once and its form folded under "Change", it measures
 * about 1,900 px, the bank details included; 2,000 px leaves a few lines for a longer title or church name, and
 * fails at once if a form is shown open again (the answers form alone is some 900 px).
 */
const MANAGE_PAGE_MOST_HEIGHT = 2_000;

/** Two attendees and their answers, owing by bank transfer unless `overrides` say otherwise; the manage link. */
async function typicalRegistration(eventOverrides: Record<string, unknown> = {}, overrides: Record<string, unknown> = {}): Promise<{ id: string; link: string }> {
  const { cipher, config } = pages.stack.ctx;
  const event = await insertEvent(pages.db, { starts_at: inAMonth(), pricing: JSON.stringify(PRICING), questions: JSON.stringify(QUESTIONS), ...eventOverrides });
  const { id } = await insertRegistration(pages.db, cipher, event.id, {
    email: 'jo@example.org',
    contact_name: 'Jo Citizen',
    contact_mobile_enc: cipher.encrypt('0400 999 888'),
    status: 'PENDING',
    payment_method: 'bank',
    attendees: JSON.stringify([
      { name: 'Jo Citizen', tier: 'adult' },
      { name: 'Kim Citizen', tier: 'child' },
    ]),
    attendee_count: 2,
    line_items: JSON.stringify([
      { label: 'Adult — Jo Citizen', amount: 12000, kind: 'ticket' },
      { label: 'Child — Kim Citizen', amount: 6000, kind: 'ticket' },
    ]),
    total_minor: 18000,
    ...answerColumns(cipher, QUESTIONS, ANSWERS),
    ...overrides,
  });
  return { id, link: `${pages.stack.url}${managePath(config.authSecret, { registrationId: id, version: 1 })}` };
}

/**
 * Every control a finger can reach that is smaller than 44×44 CSS px: links, buttons, summaries and fields
 * (a checkbox or radio is reached through its label, so the label is measured).
 */
async function smallControls(page: Page): Promise<string[]> {
  return page.evaluate(`[...document.querySelectorAll('a[href], button, summary, input:not([type=hidden]), select, textarea')]
    .filter((el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden')
    .map((el) => {
      const target = (el.type === 'checkbox' || el.type === 'radio') && el.closest('label') ? el.closest('label') : el;
      const box = target.getBoundingClientRect();
      return { what: el.tagName.toLowerCase() + ' "' + (el.textContent || el.name || '').trim().slice(0, 40) + '"', width: box.width, height: box.height };
    })
    .filter((c) => c.width < 44 || c.height < 44)
    .map((c) => c.what + ' ' + Math.round(c.width) + 'x' + Math.round(c.height))`);
}

/** How often `text` appears in what the page shows (folded forms and hidden fields are not shown). */
async function timesShown(page: Page, text: string): Promise<number> {
  const shown = (await page.evaluate('document.body.innerText')) as string;
  return shown.split(text).length - 1;
}

/** The checks every family page passes on a phone: no axe violation, no control under 44×44 px, a screenshot kept. */
async function checkPage(page: Page, screenshot: string): Promise<void> {
  expect(await axeViolations(page)).toEqual([]);
  expect(await smallControls(page)).toEqual([]);
  expect(await page.evaluate('document.documentElement.scrollWidth <= window.innerWidth')).toBe(true);
  await keepScreenshot(page, screenshot);
}

describe('the manage page on a phone', () => {
  it('owing by bank transfer and open for changes: each section once, the bank details and reference in the payment section, each answer shown once, under the height bound', async () => {
    const { id, link } = await typicalRegistration();
    await withPhonePage(pages.browser, true, async (page) => {
      const csp = cspViolations(page);
      await page.goto(link);
      const height = (await page.evaluate('document.documentElement.scrollHeight')) as number;
      expect(height).toBeLessThanOrEqual(MANAGE_PAGE_MOST_HEIGHT);
      for (const answer of Object.values(TYPED)) expect(await timesShown(page, answer), answer).toBe(1);
      for (const heading of ['Payment', 'Attendees', 'Your contact details', 'Your answers', 'Cannot come?']) {
        expect(await page.getByRole('heading', { name: heading, exact: true }).count(), heading).toBe(1);
      }
      const bank = (await page.locator('#money #bank-instructions').textContent()) ?? '';
      for (const shown of ['Grace Community Church', '062-000', '1234 5678', '$180.00', paymentReference(id)]) expect(bank).toContain(shown);
      await checkPage(page, 'manage-page-owing');
      expect(csp).toEqual([]);
    });
  });

  it('open for changes: each "Change" opens its form in place of what it changes, every field of every form full-size', async () => {
    const { link } = await typicalRegistration();
    await withPhonePage(pages.browser, true, async (page) => {
      await page.goto(link);
      for (const form of ['#attendee-names', '#details', '#answers']) expect(await page.locator(form).isVisible(), form).toBe(false);
      for (const what of ['attendee names', 'your contact details', 'your answers']) await page.locator('summary', { hasText: what }).click();
      for (const form of ['#attendee-names', '#details', '#answers']) expect(await page.locator(form).isVisible(), form).toBe(true);
      expect(await page.locator('#answers-shown').isVisible()).toBe(false);
      expect(await page.getByLabel('Emergency contact').inputValue()).toBe(TYPED.emergency);
      await checkPage(page, 'manage-page-open-for-changes');
    });
  });

  it('without script, "Change" still opens the contact form, and the correction is saved', async () => {
    const { id, link } = await typicalRegistration();
    await withPhonePage(pages.browser, false, async (page) => {
      await page.goto(link);
      expect(await page.locator('#details').isVisible()).toBe(false);
      await page.locator('summary', { hasText: 'your contact details' }).click();
      await page.getByLabel('Mobile (optional)').fill('0400 123 456');
      await page.getByRole('button', { name: 'Save changes' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#notice').textContent()).toBe('Your changes are saved.');
      expect(await page.locator('#contact').textContent()).toContain('0400 123 456');
      expect(await page.locator('#details').isVisible()).toBe(false);
    });
    const row = await pages.db('registrations').where({ id }).first();
    expect(pages.stack.ctx.cipher.decrypt(row.contact_mobile_enc)).toBe('0400 123 456');
  });

  it('closed for changes: everything to read, no "Change", and the note to contact the office', async () => {
    const { link } = await typicalRegistration({ changes_close_at: new Date(Date.now() - 60_000) });
    await withPhonePage(pages.browser, true, async (page) => {
      await page.goto(link);
      expect(await page.locator('summary').count()).toBe(0);
      expect(await page.locator('#changes-closed').textContent()).toContain('Changes on this page have closed for this event.');
      for (const answer of Object.values(TYPED)) expect(await timesShown(page, answer), answer).toBe(1);
      await checkPage(page, 'manage-page-closed-for-changes');
    });
  });

  it('paid by card: the payment to read, nothing owed, no bank details; the office is asked to cancel', async () => {
    const { link } = await typicalRegistration({}, { status: 'PAID', payment_method: 'card', paid_at: new Date() });
    await withPhonePage(pages.browser, true, async (page) => {
      await page.goto(link);
      expect(await page.locator('#status').textContent()).toBe('Paid');
      expect(await page.locator('#payments').textContent()).toContain('Card payment: $180.00');
      expect(await page.locator('#bank-instructions').count()).toBe(0);
      expect(await page.locator('#owing').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Ask the office to cancel' }).isVisible()).toBe(true);
      await checkPage(page, 'manage-page-paid');
    });
  });

  it('cancelled: the page still reads, with nothing to change or pay', async () => {
    const { link } = await typicalRegistration({}, { status: 'CANCELLED', cancel_reason: 'registrant' });
    await withPhonePage(pages.browser, true, async (page) => {
      await page.goto(link);
      expect(await page.locator('#status').textContent()).toBe('Cancelled');
      expect(await page.locator('summary').count()).toBe(0);
      expect(await page.locator('#bank-instructions').count()).toBe(0);
      expect(await page.locator('#cancel-section').count()).toBe(0);
      await checkPage(page, 'manage-page-cancelled');
    });
  });

  it('the cancel confirmation: "No, keep it" is a full-size control that goes back and changes nothing', async () => {
    const { id, link } = await typicalRegistration();
    await withPhonePage(pages.browser, true, async (page) => {
      await page.goto(link);
      await page.getByRole('link', { name: 'Cancel this registration' }).click();
      await page.waitForLoadState();
      expect(await page.locator('h1').textContent()).toBe('Cancel your registration?');
      await checkPage(page, 'manage-cancel-confirmation');
      await page.getByRole('link', { name: 'No, keep it' }).click();
      await page.waitForLoadState();
      expect(await page.locator('h1').textContent()).toBe('Manage your registration');
    });
    expect((await pages.db('registrations').where({ id }).first()).status).toBe('PENDING');
  });
});

describe('the pages after the form, on a phone', () => {
  it('a bank-transfer registration\'s page, its pay-now page and the card success page', async () => {
    const event = await insertEvent(pages.db, { online_payment: true, capacity: 20, starts_at: inAMonth(), pricing: JSON.stringify(PRICING) });
    await withPhonePage(pages.browser, true, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo@example.org');
      await page.getByLabel('Attendee 1 name').fill('Jo Citizen');
      await page.getByLabel('Attendee 1 ticket').selectOption('adult');
      await page.locator('#payment-bank').check();
      await page.getByRole('button', { name: 'Register' }).click();

      await page.waitForURL(`${pages.stack.url}/registrations/**`);
      expect(await page.locator('#bank-instructions').textContent()).toContain('062-000');
      await checkPage(page, 'success-page-bank');

      await page.locator('#pay-now').click();
      await page.waitForURL(`${pages.stack.url}/registrations/*/pay?token=*`);
      expect(await page.locator('#amount').textContent()).toBe('$120.00');
      await checkPage(page, 'pay-now-page');
      await page.locator('#pay').click();

      await page.waitForURL(`${pages.stack.provider.apiBase}/pay/**`);
      await page.locator('#pay').click();
      await page.waitForURL(`${pages.stack.url}/events/${event.slug}/success?session_id=cs_*`);
      await expect.poll(() => page.locator('#outcome h1').textContent(), { timeout: 15_000 }).toBe('Payment received, you are registered');
      await checkPage(page, 'success-page-card');
    });
  });
});
