import type { AnswerValue, ConsentAnswer, Question, RegistrationAnswers } from '../registrations/answers.js';
import type { AnswerFields } from './question-view.js';
import type { PageFormat } from './templates/format.js';
import { questionFieldName, questionFieldViews, type QuestionFieldView } from './templates/question-fields.js';

/**
 * The family's answers on its manage page: shown (sensitive ones too: the page is theirs, behind its secret
 * link; no email ever carries them) and, while changes are open, given again as a form to correct. Attendee
 * questions use the field names of the public form, the row being the attendee's position in the registration.
 */

export interface AnswerLineView {
  label: string;
  value: string;
}

export interface AnswersView {
  registration: AnswerLineView[];
  attendees: Array<{ name: string; answers: AnswerLineView[] }>;
}

export interface AnswersFormView {
  registration: QuestionFieldView[];
  attendees: Array<{ name: string; tier: string; questions: QuestionFieldView[] }>;
}

type Attendee = { name: string; tier: string };

/** The questions put to one attendee: those for every ticket, and those naming theirs. */
export function questionsForTier(questions: readonly Question[], tier: string): Question[] {
  return questions.filter((q) => q.appliesTo === 'attendee' && (!q.tiers || q.tiers.includes(tier)));
}

export function registrationQuestions(questions: readonly Question[]): Question[] {
  return questions.filter((q) => q.appliesTo === 'registration');
}

function isConsent(value: AnswerValue): value is ConsentAnswer {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'agreed' in value;
}

/** An answer as a sentence for the page: "Yes", "Peanuts, Gluten", "Given by Jo Citizen on …". */
export function answerText(value: AnswerValue, format: PageFormat, shortDate: (date: string) => string): string {
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (Array.isArray(value)) return value.join(', ');
  if (isConsent(value)) {
    const guardian = value.asGuardianOf ? ` as guardian of ${value.asGuardianOf}` : '';
    return `Given by ${value.by}${guardian}, ${format.dateTime(new Date(value.at))}`;
  }
  if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return shortDate(value);
  return String(value);
}

/** A calendar date (YYYY-MM-DD, no time zone) as the church's locale writes it. */
export function calendarDate(locale: string): (date: string) => string {
  const formatter = new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' });
  return (date) => formatter.format(new Date(`${date}T00:00:00Z`));
}

export function answersView(
  questions: readonly Question[],
  attendees: readonly Attendee[],
  answers: RegistrationAnswers,
  text: (value: AnswerValue) => string,
): AnswersView {
  const lines = (asked: readonly Question[], given: Record<string, AnswerValue> | undefined) =>
    asked.flatMap((q) => (given && given[q.id] !== undefined ? [{ label: q.label, value: text(given[q.id] as AnswerValue) }] : []));
  return {
    registration: lines(registrationQuestions(questions), answers.registration),
    attendees: attendees.map((attendee, index) => ({ name: attendee.name, answers: lines(questionsForTier(questions, attendee.tier), answers.attendees[index]) })),
  };
}

/** Stored answers as the form's fields hold them (QUESTIONS-CONTRACT "Form fields"). */
export function answerFieldsOf(answers: RegistrationAnswers): AnswerFields {
  const fields: AnswerFields = {};
  const put = (record: Record<string, AnswerValue> | undefined, row?: number) => {
    for (const [id, value] of Object.entries(record ?? {})) fields[questionFieldName(id, row)] = fieldValues(value);
  };
  put(answers.registration);
  answers.attendees.forEach((record, row) => put(record, row));
  return fields;
}

function fieldValues(value: AnswerValue): string[] {
  if (typeof value === 'boolean') return [value ? 'yes' : 'no'];
  if (Array.isArray(value)) return value;
  if (isConsent(value)) return ['yes'];
  return [String(value)];
}

export function answersFormView(
  questions: readonly Question[],
  attendees: readonly Attendee[],
  fields: AnswerFields,
  errors: ReadonlyArray<{ field: string; message: string }>,
  tierLabel: (tier: string) => string,
): AnswersFormView {
  const valuesOf = (field: string) => fields[field] ?? [];
  const errorOf = (field: string) => errors.find((problem) => problem.field === field)?.message;
  return {
    registration: questionFieldViews({ questions: registrationQuestions(questions), valuesOf, errorOf }),
    attendees: attendees.map((attendee, row) => ({
      name: attendee.name,
      tier: tierLabel(attendee.tier),
      // Each attendee's own questions only: the tier is known, so nothing is left for a script to hide.
      questions: questionFieldViews({ questions: questionsForTier(questions, attendee.tier), row, valuesOf, errorOf }).map((view) => ({
        ...view,
        rowLabel: `${attendee.name}: `,
        tiers: undefined,
        tiersNote: undefined,
      })),
    })),
  };
}
