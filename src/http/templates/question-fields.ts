import type { Question } from '../../registrations/answers.js';

/**
 * The inputs for an event's questions, as the public form and the manage page ask them (field names of
 * QUESTIONS-CONTRACT: `q.<id>` once per registration, `q.<row>.<id>` per attendee row). The view is built here and
 * rendered by QUESTION_FIELDS, a template fragment each page embeds where its questions go: Handlebars escapes
 * every label, help text and value typed by the office or the family.
 *
 * The browser script (assets/question-visibility.ts) reads `data-show-if`/`data-show-if-equals` and `data-tiers` to
 * show a question only when it applies; without script every question is there and the server drops the answers
 * whose showIf is not met. So no input carries `required` (a hidden row or an unmet showIf would block the post):
 * the mark says it, aria-required tells assistive technology, and the server checks.
 */

export interface QuestionOptionView {
  id: string;
  value: string;
  label: string;
  checked: boolean;
}

export interface QuestionFieldView {
  /** The question's id (data-question). */
  questionId: string;
  /** The posted field name. */
  name: string;
  /** The input's id (the first option's for a group). */
  inputId: string;
  label: string;
  /** "Attendee 2: " before the label, for screen readers; the row script renumbers it. */
  rowLabel?: string;
  help?: string;
  helpId?: string;
  required: boolean;
  error?: string;
  errorId?: string;
  describedBy?: string;
  showIfQuestion?: string;
  showIfEquals?: string;
  /** Space-separated tier ids this attendee question applies to; absent: every tier. */
  tiers?: string;
  /** Said under the label when the question is for some tickets only: script or no script, the reader knows. */
  tiersNote?: string;
  /** One of these is set. */
  input?: { type: string; value: string; inputmode?: string; autocomplete?: string; maxlength?: number };
  textarea?: { value: string };
  /** Radios or checkboxes; `many`: more than COMPACT_OPTIONS, laid out in columns. */
  group?: { type: 'radio' | 'checkbox'; options: QuestionOptionView[]; many?: boolean };
  /** A choice of more than COMPACT_OPTIONS options: one select, not a long column of radios. */
  select?: { options: QuestionOptionView[] };
  consent?: { checked: boolean };
}

/**
 * A choice question with more options than this is a select (one line on a phone, whatever the count); a
 * multiple choice with more is laid out in columns of option rows. Six radios of 44 px are already a screenful's third.
 */
export const COMPACT_OPTIONS = 6;

export interface QuestionFieldSource {
  questions: readonly Question[];
  /** Attendee row (0-based position among the form's rows); absent: the registration-wide questions. */
  row?: number;
  /** What the field holds now: typed in a refused post, or stored. */
  valuesOf: (field: string) => string[];
  errorOf: (field: string) => string | undefined;
  tierLabel?: (tier: string) => string | undefined;
}

/** The posted name of a question's field (QUESTIONS-CONTRACT). */
export function questionFieldName(questionId: string, row?: number): string {
  return row === undefined ? `q.${questionId}` : `q.${row}.${questionId}`;
}

/** The element id of a question's field: `q-<id>`, or `q-<row number>-<id>` in an attendee row (numbered from 1 as its labels are). */
export function questionInputId(questionId: string, row?: number): string {
  return row === undefined ? `q-${questionId}` : `q-${row + 1}-${questionId}`;
}

const INPUT_TYPES: Partial<Record<Question['type'], { type: string; inputmode?: string; autocomplete?: string; maxlength?: number }>> = {
  text: { type: 'text', maxlength: 500 },
  date: { type: 'date' },
  number: { type: 'text', inputmode: 'decimal', maxlength: 40 },
  phone: { type: 'tel', maxlength: 40 },
  email: { type: 'email', maxlength: 254 },
};

export function questionFieldViews(source: QuestionFieldSource): QuestionFieldView[] {
  return source.questions.map((question) => questionFieldView(question, source));
}

function questionFieldView(question: Question, source: QuestionFieldSource): QuestionFieldView {
  const { row } = source;
  const name = questionFieldName(question.id, row);
  const base = questionInputId(question.id, row);
  const values = source.valuesOf(name);
  const value = values[0] ?? '';
  const error = source.errorOf(name);
  const helpId = question.help ? `${base}-help` : undefined;
  const errorId = error ? `${base}-error` : undefined;
  const tierLabels = row !== undefined && question.tiers ? question.tiers.map((tier) => source.tierLabel?.(tier) ?? tier) : [];
  const view: QuestionFieldView = {
    questionId: question.id,
    name,
    inputId: base,
    label: question.label,
    rowLabel: row === undefined ? undefined : `Attendee ${row + 1}: `,
    help: question.help,
    helpId,
    required: question.required === true,
    error,
    errorId,
    describedBy: [helpId, errorId].filter(Boolean).join(' ') || undefined,
    showIfQuestion: question.showIf?.question,
    showIfEquals: question.showIf?.equals,
    tiers: row !== undefined && question.tiers ? question.tiers.join(' ') : undefined,
    tiersNote: tierLabels.length > 0 ? `For ${listed(tierLabels)} tickets.` : undefined,
  };
  const option = (optionValue: string, label: string, index: number): QuestionOptionView => ({
    id: index === 0 ? base : `${base}-${index}`,
    value: optionValue,
    label,
    checked: values.includes(optionValue),
  });
  switch (question.type) {
    case 'longtext':
      return { ...view, textarea: { value } };
    case 'yesno':
      return { ...view, group: { type: 'radio', options: [option('yes', 'Yes', 0), option('no', 'No', 1)] } };
    case 'choice': {
      const options = (question.options ?? []).map((o, i) => option(o, o, i));
      if (options.length > COMPACT_OPTIONS) return { ...view, select: { options } };
      return { ...view, group: { type: 'radio', options } };
    }
    case 'multichoice': {
      const options = (question.options ?? []).map((o, i) => option(o, o, i));
      return { ...view, group: { type: 'checkbox', options, many: options.length > COMPACT_OPTIONS } };
    }
    case 'consent':
      return { ...view, consent: { checked: value === 'yes' } };
    default: {
      const input = INPUT_TYPES[question.type] ?? { type: 'text', maxlength: 500 };
      return { ...view, input: { ...input, value } };
    }
  }
}

function listed(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

const MARK = `{{#if required}} <span class="required">(required)</span>{{else}} <span class="optional">(optional)</span>{{/if}}`;
const ROW_LABEL = `{{#if rowLabel}}<span class="visually-hidden row-label">{{rowLabel}}</span>{{/if}}`;
const NOTES = `{{#if tiersNote}}<p class="muted question-tiers">{{tiersNote}}</p>{{/if}}{{#if help}}<p class="muted question-help" id="{{helpId}}">{{help}}</p>{{/if}}`;
const ERROR = `{{#if error}}<p class="error field-error" id="{{errorId}}">{{error}}</p>{{/if}}`;
const DESCRIBED = `{{#if describedBy}} aria-describedby="{{describedBy}}"{{/if}}{{#if error}} aria-invalid="true"{{/if}}`;

/**
 * One question's markup, rendered with a QuestionFieldView as its context (`{{#each questions}}…{{/each}}`).
 * A group (yes/no, choice, multichoice) is a fieldset whose legend is the question, except a choice of many options:
 * a select under a label. A consent is one checkbox whose label is the statement, recorded as shown.
 */
export const QUESTION_FIELD = `<div class="question" data-question="{{questionId}}"{{#if showIfQuestion}} data-show-if="{{showIfQuestion}}" data-show-if-equals="{{showIfEquals}}"{{/if}}{{#if tiers}} data-tiers="{{tiers}}"{{/if}}>
{{#if group}}<fieldset class="question-group{{#if group.many}} many-options{{/if}}"{{#if describedBy}} aria-describedby="{{describedBy}}"{{/if}}>
<legend>${ROW_LABEL}{{label}}${MARK}</legend>
${NOTES}${ERROR}
{{#each group.options}}<label class="choice" for="{{id}}"><input id="{{id}}" name="{{../name}}" type="{{../group.type}}" value="{{value}}"{{#if checked}} checked{{/if}}{{#if ../error}} aria-invalid="true"{{/if}}> <span>{{label}}</span></label>{{/each}}
</fieldset>
{{else if consent}}<label class="choice consent" for="{{inputId}}"><input id="{{inputId}}" name="{{name}}" type="checkbox" value="yes"{{#if consent.checked}} checked{{/if}}{{#if required}} aria-required="true"{{/if}}${DESCRIBED}> <span>${ROW_LABEL}<span class="consent-statement">{{label}}</span>${MARK}</span></label>
${NOTES}${ERROR}
{{else}}<label for="{{inputId}}">${ROW_LABEL}{{label}}${MARK}</label>
${NOTES}
{{#if select}}<select id="{{inputId}}" name="{{name}}"{{#if required}} aria-required="true"{{/if}}${DESCRIBED}><option value="">Choose one</option>{{#each select.options}}<option value="{{value}}"{{#if checked}} selected{{/if}}>{{label}}</option>{{/each}}</select>
{{else if textarea}}<textarea id="{{inputId}}" name="{{name}}" rows="3" maxlength="2000"{{#if required}} aria-required="true"{{/if}}${DESCRIBED}>{{textarea.value}}</textarea>
{{else}}<input id="{{inputId}}" name="{{name}}" type="{{input.type}}" value="{{input.value}}"{{#if input.inputmode}} inputmode="{{input.inputmode}}"{{/if}}{{#if input.autocomplete}} autocomplete="{{input.autocomplete}}"{{/if}}{{#if input.maxlength}} maxlength="{{input.maxlength}}"{{/if}}{{#if required}} aria-required="true"{{/if}}${DESCRIBED}>{{/if}}
${ERROR}{{/if}}
</div>`;

/** Styles for the question fields: every option row is its label, at least 44 px tall (the layout's .choice). */
export const QUESTION_STYLES = `
  .question { margin-top: 6px; }
  .question .choice { margin: 0; }
  .question-group legend { margin-top: 10px; }
  /* A multiple choice of many options stays compact: its rows flow into two columns where they fit. */
  .many-options { display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); column-gap: 12px; }
  .many-options legend, .many-options > p { grid-column: 1 / -1; }
  .question-help, .question-tiers { margin: 2px 0 4px; }
  .consent { margin-top: 10px; }
  .required { font-weight: 400; color: #52525b; }
`;
