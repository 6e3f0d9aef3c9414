import { describe, expect, it } from 'vitest';
import type { Question } from '../../src/registrations/answers.js';
import { answerFieldsFromJson, questionsAsked, readAnswers, type AnswerFields, type AnsweringAttendee } from '../../src/registrations/questions.js';

const SYDNEY = 'Australia/Sydney';
const NOW = new Date('2026-11-01T09:30:00Z');

const QUESTIONS: Question[] = [
  { id: 'allergy', label: 'Any allergy?', type: 'yesno', appliesTo: 'attendee', required: true },
  { id: 'allergyDetails', label: 'Allergy details', type: 'longtext', appliesTo: 'attendee', showIf: { question: 'allergy', equals: 'yes' }, required: true, sensitive: true },
  { id: 'shirt', label: 'Shirt size', type: 'choice', appliesTo: 'attendee', tiers: ['child'], options: ['S', 'M'] },
  { id: 'photos', label: 'We agree that photos may be taken.', type: 'consent', appliesTo: 'attendee' },
  { id: 'meals', label: 'Meals', type: 'multichoice', appliesTo: 'registration', options: ['Lunch', 'Dinner'] },
  { id: 'arrival', label: 'Arrival day', type: 'date', appliesTo: 'registration' },
  { id: 'cars', label: 'Cars', type: 'number', appliesTo: 'registration' },
  { id: 'phone', label: 'Emergency phone', type: 'phone', appliesTo: 'registration' },
  { id: 'email', label: 'Second email', type: 'email', appliesTo: 'registration' },
  { id: 'note', label: 'Note', type: 'text', appliesTo: 'registration' },
];

// Starts at 8 am on 1 March 2027 in Sydney, which is still 28 February in UTC.
const event = {
  questions: QUESTIONS,
  startsAt: new Date('2027-02-28T21:00:00Z'),
  pricing: {
    tiers: [
      { id: 'adult', label: 'Adult', price: 0 },
      { id: 'child', label: 'Child', price: 0, minAge: 5, maxAge: 12 },
    ],
  },
};
const options = { contactName: 'Jo Citizen', now: NOW, timeZone: SYDNEY };
const adult = { name: 'Jo Citizen', tier: 'adult' };
const child = { name: 'Kim Citizen', tier: 'child' };

function read(fields: AnswerFields, attendees: AnsweringAttendee[] = [adult]) {
  return readAnswers(event, attendees, fields, options);
}
const messages = (fields: AnswerFields, attendees: AnsweringAttendee[] = [adult]) => read(fields, attendees).problems.map((p) => `${p.field} ${p.message}`);

describe('questionsAsked: the date of birth is asked only of age-limited tiers, as a required sensitive date', () => {
  it('adds dateOfBirth for the child tier only, and nothing without an age limit', () => {
    const asked = questionsAsked(event);
    expect(asked.at(-1)).toMatchObject({ id: 'dateOfBirth', type: 'date', tiers: ['child'], required: true, sensitive: true });
    expect(questionsAsked({ ...event, pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 0 }] } })).toEqual(QUESTIONS);
  });
});

describe('age limits are checked on the event\'s first day in the church\'s time zone, not today', () => {
  it('a child turning 13 after today but on the first day is refused; one turning 13 the day after is accepted', () => {
    // Born 1 March 2014: 12 today (November 2026), 13 on 1 March 2027, the first day in Sydney (28 Feb in UTC).
    const turning = messages({ 'q.0.allergy': ['no'], 'q.0.dateOfBirth': ['2014-03-01'] }, [child]);
    expect(turning).toEqual(['q.0.dateOfBirth Date of birth: Child tickets are for ages 5 to 12 on the first day of the event, and Kim Citizen will be 13']);
    expect(messages({ 'q.0.allergy': ['no'], 'q.0.dateOfBirth': ['2014-03-02'] }, [child])).toEqual([]);
  });

  it('a child 4 today but 5 on the first day is accepted', () => {
    expect(messages({ 'q.0.allergy': ['no'], 'q.0.dateOfBirth': ['2022-01-10'] }, [child])).toEqual([]);
  });

  it('requires the date of birth for an age-limited tier only, and refuses one after the event', () => {
    expect(messages({ 'q.0.allergy': ['no'] }, [child])).toEqual(['q.0.dateOfBirth Date of birth: please answer this question']);
    expect(messages({ 'q.0.allergy': ['no'], 'q.0.dateOfBirth': ['2027-06-01'] }, [child])).toEqual(['q.0.dateOfBirth Date of birth: enter a date before the event']);
    expect(read({ 'q.0.allergy': ['no'], 'q.0.dateOfBirth': ['2000-01-01'] }).answers.attendees).toEqual([{ allergy: false }]);
  });
});

describe('showIf: an answer whose condition is not met is dropped, and its question is then not required', () => {
  it('drops the details when the allergy is "no", and requires them when it is "yes"', () => {
    const no = read({ 'q.0.allergy': ['no'], 'q.0.allergyDetails': ['Peanuts'] });
    expect(no.problems).toEqual([]);
    expect(no.answers.attendees).toEqual([{ allergy: false }]);
    expect(messages({ 'q.0.allergy': ['yes'] })).toEqual(['q.0.allergyDetails Allergy details: please answer this question']);
    expect(read({ 'q.0.allergy': ['yes'], 'q.0.allergyDetails': ['Peanuts'] }).answers.attendees).toEqual([{ allergy: true, allergyDetails: 'Peanuts' }]);
  });

  it('asks an attendee only its tier\'s questions, reading each from its own form row', () => {
    const result = read({ 'q.0.allergy': ['no'], 'q.0.shirt': ['S'], 'q.2.allergy': ['yes'], 'q.2.allergyDetails': ['Eggs'], 'q.2.shirt': ['M'], 'q.2.dateOfBirth': ['2018-05-05'] }, [
      { ...adult, row: 0 },
      { ...child, row: 2 },
    ]);
    expect(result.problems).toEqual([]);
    expect(result.answers.attendees).toEqual([{ allergy: false }, { allergy: true, allergyDetails: 'Eggs', shirt: 'M', dateOfBirth: '2018-05-05' }]);
  });
});

describe('each type is checked on the server', () => {
  const refused: Array<[string, string, string]> = [
    ['q.0.allergy', 'maybe', 'Any allergy?: choose yes or no'],
    ['q.meals', 'Breakfast', 'Meals: choose from the options'],
    ['q.arrival', '2027-02-30', 'Arrival day: enter a date as YYYY-MM-DD'],
    ['q.cars', '1e400', 'Cars: enter a number'],
    ['q.cars', 'two', 'Cars: enter a number'],
    ['q.phone', 'call me', 'Emergency phone: use digits, spaces and an optional leading +'],
    ['q.email', 'jo@', 'Second email: enter a valid email address, like name@example.org'],
    ['q.note', 'a'.repeat(501), 'Note: at most 500 characters'],
    ['q.note', 'bell\u0007', 'Note: remove the control characters'],
    ['q.0.photos', 'sure', 'We agree that photos may be taken.: tick the box or leave it empty'],
  ];
  it.each(refused)('%s = %j is refused', (field, value, message) => {
    const fields: AnswerFields = { 'q.0.allergy': ['no'], [field]: [value] };
    expect(read(fields).problems).toEqual([{ field, message }]);
  });

  it('a choice question asked for other tiers refuses an option it does not have', () => {
    expect(messages({ 'q.0.allergy': ['no'], 'q.0.shirt': ['XL'], 'q.0.dateOfBirth': ['2018-01-01'] }, [child])).toEqual(['q.0.shirt Shirt size: choose one of the options']);
  });

  it('stores each type as the contract says', () => {
    const result = read({
      'q.0.allergy': ['no'],
      'q.meals': ['Lunch', 'Dinner', 'Lunch'],
      'q.arrival': ['2027-03-01'],
      'q.cars': ['2,5'],
      'q.phone': ['+61 400 000 000'],
      'q.email': ['jo@example.org'],
      'q.note': ['  Late  '],
    });
    expect(result.problems).toEqual([]);
    expect(result.answers.registration).toEqual({ meals: ['Lunch', 'Dinner'], arrival: '2027-03-01', cars: 2.5, phone: '+61 400 000 000', email: 'jo@example.org', note: 'Late' });
  });
});

describe('a consent records the statement as shown, when, and who; for a child the contact as guardian, named', () => {
  it('an adult\'s consent has no guardian; a child\'s names the child', () => {
    const result = read({ 'q.0.allergy': ['no'], 'q.0.photos': ['yes'], 'q.1.allergy': ['no'], 'q.1.photos': ['yes'], 'q.1.dateOfBirth': ['2018-04-04'] }, [adult, child]);
    expect(result.problems).toEqual([]);
    const statement = 'We agree that photos may be taken.';
    expect(result.answers.attendees[0]?.photos).toEqual({ agreed: true, statement, at: NOW.toISOString(), by: 'Jo Citizen' });
    expect(result.answers.attendees[1]?.photos).toEqual({ agreed: true, statement, at: NOW.toISOString(), by: 'Jo Citizen', asGuardianOf: 'Kim Citizen' });
  });

  it('an attendee under 18 on the first day by date of birth counts as a child whatever the tier', () => {
    const teen = { ...event, pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 0, minAge: 0 }] } };
    const result = readAnswers(teen, [{ name: 'Sam Citizen', tier: 'adult' }], { 'q.0.allergy': ['no'], 'q.0.photos': ['yes'], 'q.0.dateOfBirth': ['2010-01-01'] }, options);
    expect(result.answers.attendees[0]?.photos).toMatchObject({ asGuardianOf: 'Sam Citizen' });
  });
});

describe('a JSON post\'s answers read as the form\'s fields', () => {
  it('maps true/false, numbers and lists, and names a value of another shape', () => {
    const { fields, problems } = answerFieldsFromJson({ meals: ['Lunch'], cars: 2, odd: { a: 1 } }, [{ allergy: true, photos: true }, { allergy: false }]);
    expect(fields).toEqual({ 'q.meals': ['Lunch'], 'q.cars': ['2'], 'q.0.allergy': ['yes'], 'q.0.photos': ['yes'], 'q.1.allergy': ['no'] });
    expect(problems.map((p) => p.field)).toEqual(['q.odd']);
  });
});
