import { formatInTimeZone } from 'date-fns-tz';
import { contactEmail, contactMobile } from '../contact-rules.js';
import { hasControlCharacters } from '../text-rules.js';
import { DATE_OF_BIRTH_QUESTION_ID, type AnswerValue, type ConsentAnswer, type Question, type RegistrationAnswers } from './answers.js';
import type { EventRecord } from './event-record.js';
import type { EventTier } from './event-pricing.js';
import { isChild } from './child.js';
import { ageLimitProblem, DATE_FORMAT_PROBLEM, isCalendarDate } from './age-limit.js';

export { isCalendarDate };

/**
 * The rules of an answer, one set for every place a family answers (the public form, JSON posts, the manage
 * page's corrections): see QUESTIONS-CONTRACT. Pure: no database, no HTTP.
 */

/** What a post typed into the question fields, by field name (`q.<id>`, `q.<row>.<id>`). */
export type AnswerFields = Record<string, string[]>;

export interface AnswerProblem {
  field: string;
  message: string;
}

type AskingEvent = Pick<EventRecord, 'questions' | 'pricing' | 'startsAt'>;

export const MAX_TEXT_ANSWER = 500;
export const MAX_LONGTEXT_ANSWER = 2000;

/** The field an answer is posted in: `q.<id>` for the registration, `q.<row>.<id>` for an attendee row. */
export function answerFieldName(questionId: string, row?: number): string {
  return row === undefined ? `q.${questionId}` : `q.${row}.${questionId}`;
}

/** The tiers with an age limit: their attendees are asked a date of birth. */
export function ageLimitedTiers(event: Pick<EventRecord, 'pricing'>): EventTier[] {
  return event.pricing.tiers.filter((tier) => tier.minAge !== undefined || tier.maxAge !== undefined);
}

/** The questions an event's form asks: the event's own, and a date of birth for each attendee of an age-limited tier. */
export function questionsAsked(event: Pick<EventRecord, 'questions' | 'pricing'>): Question[] {
  const limited = ageLimitedTiers(event).map((tier) => tier.id);
  if (limited.length === 0) return event.questions;
  const dateOfBirth: Question = {
    id: DATE_OF_BIRTH_QUESTION_ID,
    label: 'Date of birth',
    type: 'date',
    appliesTo: 'attendee',
    tiers: limited,
    required: true,
    sensitive: true,
    help: 'Some tickets have an age limit, checked on the first day of the event.',
  };
  return [...event.questions, dateOfBirth];
}

/** The questions an attendee of this tier is asked. */
export function attendeeQuestions(asked: readonly Question[], tier: string): Question[] {
  return asked.filter((q) => q.appliesTo === 'attendee' && (!q.tiers || q.tiers.includes(tier)));
}

/** The event's first day in the church's time zone (YYYY-MM-DD): ages are counted on it. */
export function eventFirstDay(event: Pick<EventRecord, 'startsAt'>, timeZone: string): string {
  return formatInTimeZone(event.startsAt, timeZone, 'yyyy-MM-dd');
}

export interface ReadAnswersOptions {
  /** Who consents: the registration's contact, by name. */
  contactName: string;
  now: Date;
  /** The church's time zone: the event's first day is counted in it. */
  timeZone: string;
}

/** An attendee as named; `row` is its form row (empty rows counted), its position when absent. */
export interface AnsweringAttendee {
  name: string;
  tier: string;
  row?: number;
}

/**
 * Reads a registration's answers from its question fields. An answer whose showIf is not met is dropped and its
 * question is then not required; an attendee is asked only the questions of its tier; each type is checked; a date
 * of birth must fall within its tier's age limit on the event's first day; a consent is recorded as given.
 */
export function readAnswers(
  event: AskingEvent,
  attendees: readonly AnsweringAttendee[],
  fields: AnswerFields,
  options: ReadAnswersOptions,
): { answers: RegistrationAnswers; problems: AnswerProblem[] } {
  const asked = questionsAsked(event);
  const firstDay = eventFirstDay(event, options.timeZone);
  const problems: AnswerProblem[] = [];
  const registrationQuestions = asked.filter((q) => q.appliesTo === 'registration');
  const consentBase = { at: options.now.toISOString(), by: options.contactName };

  const readRecord = (questions: Question[], row: number | undefined, attendee?: AnsweringAttendee): Record<string, AnswerValue> => {
    const record: Record<string, AnswerValue> = {};
    const typed = (q: Question) => typedValues(fields, answerFieldName(q.id, q.appliesTo === 'attendee' ? row : undefined));
    const shown = (q: Question, depth = 0): boolean => {
      if (!q.showIf) return true;
      const trigger = questions.find((other) => other.id === q.showIf?.question) ?? registrationQuestions.find((other) => other.id === q.showIf?.question);
      if (!trigger || depth > asked.length || !shown(trigger, depth + 1)) return false;
      return typed(trigger).includes(q.showIf.equals);
    };
    for (const q of questions) {
      if (!shown(q)) continue;
      const field = answerFieldName(q.id, row);
      const say = (message: string): undefined => {
        problems.push({ field, message: `${q.label}: ${message}` });
      };
      // A consent not given (a JSON post's false) is no answer.
      const values = q.type === 'consent' ? typed(q).filter((v) => v !== 'no') : typed(q);
      if (values.length === 0) {
        if (q.required) say(q.type === 'consent' ? 'this consent is needed to register' : 'please answer this question');
        continue;
      }
      const value = readValue(q, values, say);
      if (value === undefined) continue;
      if (q.id === DATE_OF_BIRTH_QUESTION_ID && attendee && typeof value === 'string') {
        const outside = ageLimitProblem(event.pricing.tiers.find((tier) => tier.id === attendee.tier), value, firstDay, attendee.name);
        if (outside) {
          say(outside);
          continue;
        }
      }
      if (q.type === 'consent') {
        const consent: ConsentAnswer = { agreed: true, statement: q.label, ...consentBase };
        const dateOfBirth = typedValues(fields, answerFieldName(DATE_OF_BIRTH_QUESTION_ID, row))[0];
        const tier = attendee ? event.pricing.tiers.find((t) => t.id === attendee.tier) : undefined;
        if (attendee && isChild({ tier, dateOfBirth: dateOfBirth && isCalendarDate(dateOfBirth) ? dateOfBirth : undefined, firstDay })) {
          consent.asGuardianOf = attendee.name;
        }
        record[q.id] = consent;
      } else {
        record[q.id] = value;
      }
    }
    return record;
  };

  const answers: RegistrationAnswers = {
    registration: readRecord(registrationQuestions, undefined),
    attendees: attendees.map((attendee, index) => readRecord(attendeeQuestions(asked, attendee.tier), attendee.row ?? index, attendee)),
  };
  return { answers, problems };
}

function typedValues(fields: AnswerFields, name: string): string[] {
  return (fields[name] ?? []).map((v) => v.trim()).filter((v) => v !== '');
}

const emailRule = contactEmail('enter an email address');
const phoneRule = contactMobile('enter a phone number');

function readValue(q: Question, values: string[], say: (message: string) => undefined): AnswerValue | undefined {
  const [first = ''] = values;
  // A longer text may have lines and tabs; nothing else has a control character.
  if (values.some((v) => hasControlCharacters(q.type === 'longtext' ? v.replace(/[\r\n\t]/g, '') : v))) {
    return say('remove the control characters');
  }
  if (q.type !== 'multichoice' && values.length > 1) return say('give one answer');
  switch (q.type) {
    case 'yesno':
      if (first === 'yes' || first === 'no') return first === 'yes';
      return say('choose yes or no');
    case 'choice':
      return q.options?.includes(first) ? first : say('choose one of the options');
    case 'multichoice':
      return values.every((v) => q.options?.includes(v)) ? [...new Set(values)] : say('choose from the options');
    case 'consent':
      return first === 'yes' ? true : say('tick the box or leave it empty');
    case 'number': {
      const number = Number(first.replace(',', '.'));
      return /^-?\d{1,15}([.,]\d{1,15})?$/.test(first) && Number.isFinite(number) ? number : say('enter a number');
    }
    case 'date':
      return isCalendarDate(first) ? first : say(DATE_FORMAT_PROBLEM);
    case 'email': {
      const parsed = emailRule.safeParse(first);
      return parsed.success ? parsed.data : say(parsed.error.issues[0]?.message ?? 'enter an email address');
    }
    case 'phone': {
      const parsed = phoneRule.safeParse(first);
      return parsed.success ? parsed.data : say(parsed.error.issues[0]?.message ?? 'enter a phone number');
    }
    default: {
      const max = q.type === 'longtext' ? MAX_LONGTEXT_ANSWER : MAX_TEXT_ANSWER;
      return first.length <= max ? first : say(`at most ${max} characters`);
    }
  }
}

/**
 * A JSON post's answers as the form's fields: top-level `answers` and each `attendees[i].answers` (row i).
 * yesno true/false → "yes"/"no", consent true → "yes", a number as written, a multichoice array as repeated values.
 * A value of another shape is a problem of its field.
 */
export function answerFieldsFromJson(answers: unknown, attendeeAnswers: readonly unknown[]): { fields: AnswerFields; problems: AnswerProblem[] } {
  const fields: AnswerFields = {};
  const problems: AnswerProblem[] = [];
  const take = (record: unknown, row: number | undefined, where: string) => {
    if (record === undefined || record === null) return;
    if (typeof record !== 'object' || Array.isArray(record)) {
      problems.push({ field: where, message: `${where}: an object of answers by question id` });
      return;
    }
    for (const [id, value] of Object.entries(record as Record<string, unknown>).slice(0, 200)) {
      const field = answerFieldName(id, row);
      const values = asFieldValues(value);
      if (values === undefined) problems.push({ field, message: `${where}.${id}: a text, number, true/false or a list of texts` });
      else if (values.length > 0) fields[field] = values;
    }
  };
  take(answers, undefined, 'answers');
  attendeeAnswers.forEach((record, row) => take(record, row, `attendees[${row}].answers`));
  return { fields, problems };
}

function asFieldValues(value: unknown): string[] | undefined {
  if (value === null || value === undefined) return [];
  if (typeof value === 'boolean') return [value ? 'yes' : 'no'];
  if (typeof value === 'number') return Number.isFinite(value) ? [String(value)] : undefined;
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.length <= 50 && value.every((v) => typeof v === 'string')) return value as string[];
  return undefined;
}
