import { describe, expect, it } from 'vitest';
import { EventFileError, parseEventFile } from '../../src/office/event-file.js';

const base = {
  slug: 'kids-camp',
  title: 'Kids Camp',
  startsAt: '2027-02-05T19:00:00+11:00',
  capacity: null,
  pricing: {
    tiers: [
      { id: 'adult', label: 'Adult', price: 0 },
      { id: 'child', label: 'Child', price: 0, minAge: 5, maxAge: 12 },
    ],
  },
};

/** Every problem parseEventFile names for the file, or [] when it is valid. */
function problemsOf(overrides: Record<string, unknown>): string[] {
  try {
    parseEventFile({ ...base, ...overrides });
    return [];
  } catch (error) {
    if (error instanceof EventFileError) return error.problems;
    throw error;
  }
}

const allergy = { id: 'allergy', label: 'Any allergy?', type: 'yesno', appliesTo: 'attendee' };

describe('the event file\'s questions are validated by name', () => {
  it('accepts a valid set, kept as written, with the retention and age limits', () => {
    const questions = [
      allergy,
      { id: 'allergyDetails', label: 'Allergy details', type: 'longtext', appliesTo: 'attendee', showIf: { question: 'allergy', equals: 'yes' }, sensitive: true, showAtCheckin: true },
      { id: 'shirt', label: 'Shirt', type: 'choice', appliesTo: 'attendee', tiers: ['child'], options: ['S', 'M'], required: true, help: 'Kids sizes' },
      { id: 'photos', label: 'Photos may be taken.', type: 'consent', appliesTo: 'registration' },
    ];
    const file = parseEventFile({ ...base, questions, sensitiveRetentionDays: 0 });
    expect(file.questions).toEqual(questions);
    expect(file.sensitiveRetentionDays).toBe(0);
    expect(file.pricing.tiers[1]).toMatchObject({ minAge: 5, maxAge: 12 });
  });

  it('names each problem by its key', () => {
    const problems = problemsOf({
      questions: [
        allergy,
        { id: 'allergy', label: 'Again', type: 'text', appliesTo: 'attendee' },
        { id: 'meal', label: 'Meal', type: 'choice', appliesTo: 'attendee' },
        { id: 'size', label: 'Size', type: 'multichoice', appliesTo: 'attendee', options: ['S', 'S'] },
        { id: 'note', label: 'Note', type: 'text', appliesTo: 'registration', options: ['x'], tiers: ['child'] },
        { id: 'who', label: 'Who', type: 'text', appliesTo: 'attendee', tiers: ['teen'] },
        { id: 'later', label: 'Later', type: 'text', appliesTo: 'attendee', showIf: { question: 'notYet', equals: 'yes' } },
        { id: 'onText', label: 'On text', type: 'text', appliesTo: 'attendee', showIf: { question: 'who', equals: 'x' } },
        { id: 'badValue', label: 'Bad value', type: 'text', appliesTo: 'attendee', showIf: { question: 'allergy', equals: 'true' } },
        { id: 'wide', label: 'Wide', type: 'text', appliesTo: 'registration', showIf: { question: 'allergy', equals: 'yes' } },
        { id: 'notYet', label: 'Not yet', type: 'yesno', appliesTo: 'attendee' },
      ],
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'questions.1.id: duplicate question id "allergy"',
        'questions.2.options: a choice question needs a non-empty list of options',
        'questions.3.options: each option once',
        'questions.4.options: only choice and multichoice questions have options (this one is text)',
        'questions.4.tiers: only attendee questions are asked per tier',
        'questions.5.tiers: no tier "teen" in pricing.tiers',
        'questions.6.showIf: "notYet" is not a question before this one',
        'questions.7.showIf: "who" is a text question; showIf names a yesno, choice or multichoice one',
        'questions.8.showIf: equals must be one of "yes", "no" (the answers of "allergy")',
        'questions.9.showIf: "allergy" is asked per attendee, so it cannot decide a question asked once',
      ]),
    );
    expect(problems).toHaveLength(10);
  });

  it('names a malformed question\'s keys (the rules between questions are checked once each is well formed)', () => {
    const problems = problemsOf({
      questions: [
        { id: 'dateOfBirth', label: 'Born', type: 'date', appliesTo: 'attendee' },
        { id: '9lives', label: ' ', type: 'colour', appliesTo: 'everyone' },
      ],
    });
    expect(problems[0]).toMatch(/^questions\.0\.id: "dateOfBirth" is reserved/);
    expect(problems.slice(1)).toEqual([
      'questions.1.id: a letter, then letters, digits or _, at most 40 in all, e.g. "allergies"',
      'questions.1.label: a non-empty label',
      'questions.1.type: one of text, longtext, yesno, choice, multichoice, date, number, phone, email, consent',
      'questions.1.appliesTo: "attendee" (asked for each attendee) or "registration" (asked once)',
    ]);
  });

  it('refuses an unknown key in a question, a retention out of range and an age range upside down', () => {
    expect(problemsOf({ questions: [{ ...allergy, colour: 'red' }] })).toEqual(['unknown key "questions.0.colour"']);
    expect(problemsOf({ sensitiveRetentionDays: 3651 })).toEqual(['sensitiveRetentionDays: at most 3650']);
    expect(problemsOf({ pricing: { tiers: [{ id: 'child', label: 'Child', price: 0, minAge: 13, maxAge: 12 }] } })).toEqual(['pricing.tiers.0.maxAge: at least minAge']);
    expect(problemsOf({ pricing: { tiers: [{ id: 'child', label: 'Child', price: 0, maxAge: 121 }] } })).toEqual(['pricing.tiers.0.maxAge: at most 120']);
  });
});
