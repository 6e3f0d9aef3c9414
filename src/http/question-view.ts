import { DATE_OF_BIRTH_QUESTION_ID, type Question } from '../registrations/answers.js';
import type { EventRecord } from '../registrations/event-record.js';
import type { FieldProblem } from './templates/event-page.js';
import { questionFieldViews, type QuestionFieldView } from './templates/question-fields.js';

/** What a post typed into the question fields, by field name (`q.<id>`, `q.<row>.<id>`), for the form given back. */
export type AnswerFields = Record<string, string[]>;

const MAX_ANSWER_FIELDS = 2000;

/** The question fields of a form post, as typed (only strings: a form body has nothing else). */
export function typedAnswerFields(body: unknown): AnswerFields {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return {};
  const fields: AnswerFields = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>).slice(0, MAX_ANSWER_FIELDS)) {
    if (!name.startsWith('q.')) continue;
    const values = (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
    if (values.length > 0) fields[name] = values.slice(0, 50);
  }
  return fields;
}

/** The questions an event's form asks: the event's own, and a date of birth for each attendee of an age-limited tier. */
export function askedQuestions(event: Pick<EventRecord, 'questions' | 'pricing'>): Question[] {
  const limited = event.pricing.tiers.filter((tier) => tier.minAge !== undefined || tier.maxAge !== undefined).map((tier) => tier.id);
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

export interface FormQuestionViews {
  registration: QuestionFieldView[];
  /** One list per attendee row: every attendee question (the script hides those of other tiers). */
  rows: QuestionFieldView[][];
}

/** The public form's questions: registration-wide once, attendee ones in each of `rowCount` rows. */
export function formQuestionViews(
  event: Pick<EventRecord, 'pricing'>,
  questions: readonly Question[],
  options: { rowCount: number; answerFields?: AnswerFields; errors?: readonly FieldProblem[] },
): FormQuestionViews {
  const tiers = new Map(event.pricing.tiers.map((tier) => [tier.id, tier.label]));
  const errorOf = (field: string) => options.errors?.find((problem) => problem.field === field)?.message;
  const valuesOf = (field: string) => options.answerFields?.[field] ?? [];
  const tierLabel = (tier: string) => tiers.get(tier);
  const attendeeQuestions = questions.filter((q) => q.appliesTo === 'attendee');
  return {
    registration: questionFieldViews({ questions: questions.filter((q) => q.appliesTo === 'registration'), valuesOf, errorOf }),
    rows: Array.from({ length: options.rowCount }, (_, row) => questionFieldViews({ questions: attendeeQuestions, row, valuesOf, errorOf, tierLabel })),
  };
}

/** The control a question's problem links to: `q.<id>` → #q-<id>, `q.<row>.<id>` → #q-<row + 1>-<id>. */
export function questionFieldHref(field: string): string | undefined {
  const inRow = /^q\.(\d+)\.(.+)$/.exec(field);
  if (inRow) return `#q-${Number(inRow[1]) + 1}-${inRow[2]}`;
  const wide = /^q\.(.+)$/.exec(field);
  return wide ? `#q-${wide[1]}` : undefined;
}
