import type { Question } from '../registrations/answers.js';
import type { EventRecord } from '../registrations/event-record.js';
import type { FieldProblem } from './templates/event-page.js';
import { questionFieldViews, type QuestionFieldView } from './templates/question-fields.js';
import type { AnswerFields } from '../registrations/questions.js';

export type { AnswerFields };

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

/** The questions an event's form asks (the rules live with the answers' other rules). */
export { questionsAsked as askedQuestions } from '../registrations/questions.js';

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
