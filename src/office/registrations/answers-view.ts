import type { AppContext } from '../../context.js';
import {
  DATE_OF_BIRTH_QUESTION_ID,
  decryptSensitiveAnswers,
  type AnswerValue,
  type ConsentAnswer,
  type Question,
  type RegistrationAnswers,
} from '../../registrations/answers.js';
import { SENSITIVE_PURGE_AT } from '../../registrations/answers-retention.js';

/**
 * A registration's answers as the office reads them (`registrations show`): labelled by the event's questions,
 * the registration-wide ones first and then each attendee's. Sensitive answers are left out unless asked for,
 * and counted; answers to questions no longer in the event file are never shown.
 */

export interface AnswerShown {
  questionId: string;
  label: string;
  sensitive: boolean;
  value: AnswerValue;
}

export interface AnswersView {
  registration: AnswerShown[];
  attendees: Array<{ name: string; tierLabel: string; answers: AnswerShown[] }>;
  /** Sensitive answers left out because they were not asked for (`--sensitive` shows them). */
  sensitiveHidden: number;
  /** When the purge emptied the sensitive answers; null while they are kept. */
  sensitivePurgedAt: Date | null;
  /** When the weekly purge empties them: sensitiveRetentionDays after the event ends (or starts, without an end). */
  sensitivePurgeDueAt: Date;
}

/** The date of birth the form asks when a tier has an age limit: not among the event's questions, always sensitive. */
export const DATE_OF_BIRTH_QUESTION: Question = { id: DATE_OF_BIRTH_QUESTION_ID, label: 'Date of birth', type: 'date', appliesTo: 'attendee', sensitive: true };

/** The event's questions the office sees answers to, with the date of birth first among the attendee ones. */
export function questionsShown(questions: readonly Question[]): Question[] {
  return [DATE_OF_BIRTH_QUESTION, ...questions.filter((q) => q.id !== DATE_OF_BIRTH_QUESTION_ID)];
}

/**
 * The answers of one record (the registration's, or one attendee's) to the questions that apply to it, in the
 * event's order. An answer is sensitive when its question is, or when it was stored encrypted (a question made
 * non-sensitive after it was answered keeps its answers protected).
 */
export function answersOf(
  questions: readonly Question[],
  appliesTo: Question['appliesTo'],
  plain: Record<string, AnswerValue>,
  sensitive: Record<string, AnswerValue>,
): AnswerShown[] {
  return questionsShown(questions)
    .filter((q) => q.appliesTo === appliesTo)
    .flatMap((q) => {
      const value = sensitive[q.id] ?? plain[q.id];
      if (value === undefined) return [];
      return [{ questionId: q.id, label: q.label, sensitive: Boolean(q.sensitive) || q.id in sensitive, value }];
    });
}

export function buildAnswersView(input: {
  questions: readonly Question[];
  plain: RegistrationAnswers;
  sensitive: RegistrationAnswers;
  attendees: Array<{ name: string; tierLabel: string }>;
  showSensitive: boolean;
  sensitivePurgedAt: Date | null;
  sensitivePurgeDueAt: Date;
}): AnswersView {
  let hidden = 0;
  const keep = (answers: AnswerShown[]) => {
    const shown = answers.filter((a) => input.showSensitive || !a.sensitive);
    hidden += answers.length - shown.length;
    return shown;
  };
  return {
    registration: keep(answersOf(input.questions, 'registration', input.plain.registration, input.sensitive.registration)),
    attendees: input.attendees.map((attendee, i) => ({
      ...attendee,
      answers: keep(answersOf(input.questions, 'attendee', input.plain.attendees[i] ?? {}, input.sensitive.attendees[i] ?? {})),
    })),
    sensitiveHidden: hidden,
    sensitivePurgedAt: input.sensitivePurgedAt,
    sensitivePurgeDueAt: input.sensitivePurgeDueAt,
  };
}

interface AnswersSourceRow {
  answers: RegistrationAnswers | null;
  sensitive_answers_enc: string | null;
  sensitive_purged_at: Date | null;
  attendees: Array<{ name: string; tier: string }>;
  questions: Question[] | null;
  pricing: { tiers: Array<{ id: string; label: string }> };
  purge_due_at: Date;
}

/** One registration's answers for the office; the sensitive ones are decrypted only when shown or counted. */
export async function loadAnswersView(
  ctx: Pick<AppContext, 'db' | 'cipher' | 'config'>,
  registrationId: string,
  options: { showSensitive: boolean },
): Promise<AnswersView> {
  const { rows } = await ctx.db.raw<{ rows: AnswersSourceRow[] }>(
    `SELECT r.answers, r.sensitive_answers_enc, r.sensitive_purged_at, r.attendees, e.questions, e.pricing,
            ${SENSITIVE_PURGE_AT} AS purge_due_at
       FROM registrations r JOIN events e ON e.id = r.event_id
      WHERE r.id = :id`,
    { id: registrationId, tz: ctx.config.regional.timeZone },
  );
  const row = rows[0];
  if (!row) throw new Error(`registration ${registrationId} vanished while it was shown`);
  const labels = new Map(row.pricing.tiers.map((tier) => [tier.id, tier.label]));
  return buildAnswersView({
    questions: row.questions ?? [],
    plain: row.answers ?? { registration: {}, attendees: [] },
    sensitive: decryptSensitiveAnswers(ctx.cipher, row.sensitive_answers_enc),
    attendees: row.attendees.map((a) => ({ name: a.name, tierLabel: labels.get(a.tier) ?? a.tier })),
    showSensitive: options.showSensitive,
    sensitivePurgedAt: row.sensitive_purged_at,
    sensitivePurgeDueAt: row.purge_due_at,
  });
}

// Shown as given, except characters that would act on the terminal or not show: those as \u{…}.
const printable = (text: string) => text.replace(/[\p{Cc}\p{Cf}]/gu, (c) => (c === '\n' ? '\n' : `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`));

function isConsent(value: AnswerValue): value is ConsentAnswer {
  return typeof value === 'object' && !Array.isArray(value) && value !== null && (value as ConsentAnswer).agreed === true;
}

/**
 * An answer in words: yes/no, a list joined with commas, a consent as "agreed by Sam Lee (as guardian of
 * Kim Lee) at 2026-11-01 10:00", followed by its statement `: “…”` when `statement` is set.
 */
export function answerInWords(value: AnswerValue, minute: (date: Date) => string, options: { statement: boolean }): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (Array.isArray(value)) return value.map((v) => printable(String(v))).join(', ');
  if (isConsent(value)) {
    const guardian = value.asGuardianOf ? ` (as guardian of ${printable(value.asGuardianOf)})` : '';
    const agreed = `agreed by ${printable(value.by)}${guardian} at ${minute(new Date(value.at))}`;
    return options.statement ? `${agreed}: “${printable(value.statement)}”` : agreed;
  }
  return printable(String(value));
}

/** The "Answers:" block of `registrations show`; nothing for a registration with no answers at all (an event without questions). */
export function answersLines(view: AnswersView, minute: (date: Date) => string, day: (date: Date) => string): string[] {
  const line = (indent: string) => (a: AnswerShown) => {
    const [first = '', ...more] = answerInWords(a.value, minute, { statement: true }).split('\n');
    return [`${indent}${a.label}${a.sensitive ? ' (sensitive)' : ''}: ${first}`, ...more.map((text) => `${indent}  ${text}`)];
  };
  const attendees = view.attendees.filter((a) => a.answers.length > 0);
  const lines = [
    ...view.registration.flatMap(line('  ')),
    ...attendees.flatMap((a) => [`  ${a.name} (${a.tierLabel}):`, ...a.answers.flatMap(line('    '))]),
  ];
  if (view.sensitivePurgedAt) lines.push(`  sensitive answers purged on ${day(view.sensitivePurgedAt)}`);
  else if (view.sensitiveHidden > 0) {
    const count = view.sensitiveHidden === 1 ? '1 sensitive answer' : `${view.sensitiveHidden} sensitive answers`;
    lines.push(`  ${count} hidden: show with --sensitive (purged on ${day(view.sensitivePurgeDueAt)})`);
  }
  return lines.length === 0 ? [] : ['Answers:', ...lines];
}
