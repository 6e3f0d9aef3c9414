import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { managePath } from '../../src/payments/manage-link.js';
import { answerColumns, decryptSensitiveAnswers, type Question, type RegistrationAnswers } from '../../src/registrations/answers.js';
import { axeViolations } from '../support/axe.js';
import { cspViolations, inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

const pages = useBrowserStack();

const QUESTIONS: Question[] = [
  { id: 'allergy', label: 'Any allergy?', type: 'yesno', appliesTo: 'attendee', required: true },
  { id: 'allergyDetails', label: 'Allergy details', type: 'longtext', appliesTo: 'attendee', showIf: { question: 'allergy', equals: 'yes' }, sensitive: true, required: true },
  { id: 'photos', label: 'We agree that photos of our family may appear in church publications.', type: 'consent', appliesTo: 'registration' },
];
const PRICING = JSON.stringify({
  tiers: [
    { id: 'adult', label: 'Adult', price: 0 },
    { id: 'child', label: 'Child', price: 0, minAge: 5, maxAge: 12 },
  ],
});

/** A date of birth making `years` on the event's first day (a month ahead). */
const bornYearsBefore = (start: Date, years: number) => `${start.getUTCFullYear() - years}-01-15`;

const questionEvent = (starts: Date) => insertEvent(pages.db, { capacity: 20, starts_at: starts, pricing: PRICING, questions: JSON.stringify(QUESTIONS) });
const details = (page: Page, n: number) => page.locator(`#q-${n}-allergyDetails`);
const dateOfBirth = (page: Page, n: number) => page.locator(`#q-${n}-dateOfBirth`);

describe('the form asks a conditional question only once its trigger is answered, and the date of birth only for the age-limited ticket', () => {
  it('shows, hides and disables as the family answers, numbers an added row\'s fields, and axe finds nothing wrong', async () => {
    const event = await questionEvent(inAMonth());
    await withPhonePage(pages.browser, true, async (page) => {
      const violations = cspViolations(page);
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      expect(await details(page, 1).isVisible()).toBe(false);
      expect(await details(page, 1).isDisabled()).toBe(true);
      expect(await dateOfBirth(page, 1).isVisible()).toBe(false);
      expect(await page.getByText('We agree that photos of our family may appear in church publications.').isVisible()).toBe(true);

      await page.locator('#q-1-allergy').check();
      expect(await details(page, 1).isVisible()).toBe(true);
      expect(await details(page, 1).isEnabled()).toBe(true);
      await page.locator('#q-1-allergy-1').check();
      expect(await details(page, 1).isVisible()).toBe(false);

      await page.getByLabel('Attendee 1 ticket', { exact: true }).selectOption('child');
      expect(await dateOfBirth(page, 1).isVisible()).toBe(true);
      await page.getByLabel('Attendee 1 ticket', { exact: true }).selectOption('adult');
      expect(await dateOfBirth(page, 1).isVisible()).toBe(false);

      await page.getByRole('button', { name: 'Add another person' }).click();
      expect(await page.locator('#q-2-allergy').getAttribute('name')).toBe('q.1.allergy');
      expect(await page.locator('#q-2-allergy').isChecked()).toBe(false);
      await page.getByLabel('Attendee 2 ticket', { exact: true }).selectOption('child');
      expect(await dateOfBirth(page, 2).isVisible()).toBe(true);
      expect(await dateOfBirth(page, 2).getAttribute('name')).toBe('q.1.dateOfBirth');
      await page.locator('#q-2-allergy').check();
      expect(await details(page, 2).isVisible()).toBe(true);

      expect(await axeViolations(page)).toEqual([]);
      expect(violations).toEqual([]);
    });
  });

  it('without script shows every question, the date of birth in every row', async () => {
    const event = await questionEvent(inAMonth());
    await withPhonePage(pages.browser, false, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      expect(await details(page, 1).isVisible()).toBe(true);
      expect(await dateOfBirth(page, 3).isVisible()).toBe(true);
      expect(await page.getByText('For Child tickets.').first().isVisible()).toBe(true);
    });
  });
});

describe('a family registers with answers: an age outside the limit is refused by the server, a valid one registers', () => {
  it('stores plain answers in answers and sensitive ones only encrypted, with the consent recorded', async () => {
    const starts = inAMonth();
    const event = await questionEvent(starts);
    await withPhonePage(pages.browser, true, async (page) => {
      await page.goto(`${pages.stack.url}/events/${event.slug}`);
      await page.getByLabel('Your name').fill('Jo Citizen');
      await page.getByLabel('Email').fill('jo-questions@example.org');
      await page.locator('#q-1-allergy').check();
      await details(page, 1).fill('Peanuts');
      await page.getByRole('button', { name: 'Add another person' }).click();
      await page.getByLabel('Attendee 2 name', { exact: true }).fill('Kim Citizen');
      await page.getByLabel('Attendee 2 ticket', { exact: true }).selectOption('child');
      await page.locator('#q-2-allergy-1').check();
      await dateOfBirth(page, 2).fill(bornYearsBefore(starts, 15));
      await page.getByText('We agree that photos').click();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();

      // Refused: the message beside the field, what was typed kept.
      expect(await page.locator('#q-2-dateOfBirth-error').textContent()).toMatch(/12/);
      expect(await dateOfBirth(page, 2).inputValue()).toBe(bornYearsBefore(starts, 15));
      expect(await details(page, 1).inputValue()).toBe('Peanuts');
      expect(await pages.db('registrations').where({ event_id: event.id }).first()).toBeUndefined();

      await dateOfBirth(page, 2).fill(bornYearsBefore(starts, 8));
      await page.getByRole('button', { name: 'Register' }).click();
      await page.waitForLoadState();
      expect(new URL(page.url()).pathname).toMatch(/^\/registrations\//);
    });

    const row = await pages.db('registrations').where({ event_id: event.id }).first();
    expect(row.answers.attendees).toEqual([{ allergy: true }, { allergy: false }]);
    expect(row.answers.registration.photos).toMatchObject({ agreed: true, statement: QUESTIONS[2]?.label, by: 'Jo Citizen' });
    expect(JSON.stringify(row.answers)).not.toContain('Peanuts');
    expect(row.sensitive_answers_enc).not.toContain('Peanuts');
    const sensitive = decryptSensitiveAnswers(pages.stack.ctx.cipher, row.sensitive_answers_enc);
    expect(sensitive.attendees).toEqual([{ allergyDetails: 'Peanuts' }, { dateOfBirth: bornYearsBefore(starts, 8) }]);
  });
});

describe('the manage page corrects an answer', () => {
  it('shows the family its answers and saves a correction, sensitive stored encrypted', async () => {
    const event = await questionEvent(inAMonth());
    const { cipher, config } = pages.stack.ctx;
    const answers: RegistrationAnswers = { registration: {}, attendees: [{ allergy: true, allergyDetails: 'Peanuts' }] };
    const { id } = await insertRegistration(pages.db, cipher, event.id, {
      contact_name: 'Jo Citizen',
      attendees: JSON.stringify([{ name: 'Jo Citizen', tier: 'adult' }]),
      line_items: JSON.stringify([{ label: 'Adult — Jo Citizen', amount: 0, kind: 'ticket' }]),
      total_minor: 0,
      ...answerColumns(cipher, QUESTIONS, answers),
    });
    await withPhonePage(pages.browser, true, async (page) => {
      const violations = cspViolations(page);
      await page.goto(`${pages.stack.url}${managePath(config.authSecret, { registrationId: id, version: 1 })}`);
      expect(await page.locator('#your-answers').textContent()).toContain('Peanuts');
      await page.locator('summary', { hasText: 'your answers' }).click();
      await page.getByLabel('Jo Citizen: Allergy details').fill('Peanuts and sesame');
      await page.getByRole('button', { name: 'Save answers' }).click();
      await page.waitForLoadState();
      expect(await page.locator('#notice').textContent()).toBe('Your answers are saved.');
      expect(await page.locator('#your-answers').textContent()).toContain('Peanuts and sesame');
      expect(await axeViolations(page)).toEqual([]);
      expect(violations).toEqual([]);
    });
    const row = await pages.db('registrations').where({ id }).first();
    expect(row.answers).toEqual({ registration: {}, attendees: [{ allergy: true }] });
    expect(decryptSensitiveAnswers(cipher, row.sensitive_answers_enc).attendees).toEqual([{ allergyDetails: 'Peanuts and sesame' }]);
  });
});
