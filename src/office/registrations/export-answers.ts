import type { Knex } from 'knex';
import {
  DATE_OF_BIRTH_QUESTION_ID,
  decryptSensitiveAnswers,
  emptyAnswers,
  type AnswerValue,
  type Question,
  type RegistrationAnswers,
} from '../../registrations/answers.js';
import { recordHistoryEntries } from '../../registrations/history.js';
import { DATE_OF_BIRTH_QUESTION, answerInWords } from './answers-view.js';
import type { FieldCipher } from '../../crypto/field-cipher.js';

/**
 * The answer columns of `registrations export`: one per question, headed `q.<question id>` (stable while the
 * office edits labels), in the event file's order. Sensitive questions (and the date of birth) only with
 * `--include-sensitive`; answers to questions no longer in the event file are never exported.
 */

export interface AnswerColumn {
  header: string;
  question: Question;
}

/** A registration's stored answers as the export reads them: the sensitive ones only when they are exported. */
export interface StoredAnswers {
  plain: RegistrationAnswers;
  sensitive: RegistrationAnswers;
}

export function readStoredAnswers(
  cipher: FieldCipher,
  row: { answers: RegistrationAnswers | null; sensitive_answers_enc: string | null },
  includeSensitive: boolean,
): StoredAnswers {
  return {
    plain: row.answers ?? emptyAnswers(),
    // Without --include-sensitive nothing is decrypted at all.
    sensitive: includeSensitive ? decryptSensitiveAnswers(cipher, row.sensitive_answers_enc) : emptyAnswers(),
  };
}

/**
 * The columns for these questions. The date of birth comes first among the sensitive ones, when a tier has an
 * age limit or an exported registration gave one.
 */
export function answerColumnsFor(
  questions: readonly Question[],
  options: { includeSensitive: boolean; dateOfBirthAsked: boolean },
): AnswerColumn[] {
  const asked = questions.filter((q) => q.id !== DATE_OF_BIRTH_QUESTION_ID && (options.includeSensitive || !q.sensitive));
  const withBirth = options.includeSensitive && options.dateOfBirthAsked ? [DATE_OF_BIRTH_QUESTION, ...asked] : asked;
  return withBirth.map((question) => ({ header: `q.${question.id}`, question }));
}

export function asksDateOfBirth(tiers: ReadonlyArray<{ minAge?: number; maxAge?: number }>, stored: readonly StoredAnswers[]): boolean {
  return (
    tiers.some((tier) => tier.minAge !== undefined || tier.maxAge !== undefined) ||
    stored.some((s) => s.sensitive.attendees.some((a) => DATE_OF_BIRTH_QUESTION_ID in a))
  );
}

/**
 * One attendee row's answers, by column header (null: not answered). A registration-wide answer is on every
 * row of the registration, as its reference and contact are; an attendee answer on that attendee's row only.
 * An answer is read from where it is stored, plain or encrypted, so a question whose `sensitive` changed after
 * it was answered still shows it in its column when the sensitive ones are exported.
 */
export function answerCells(columns: readonly AnswerColumn[], stored: StoredAnswers, attendeeIndex: number): Record<string, AnswerValue | null> {
  const source = (q: Question, from: RegistrationAnswers) => (q.appliesTo === 'registration' ? from.registration : (from.attendees[attendeeIndex] ?? {}));
  return Object.fromEntries(
    columns.map(({ header, question }) => {
      const plain = source(question, stored.plain)[question.id];
      const sensitive = source(question, stored.sensitive)[question.id];
      // A non-sensitive column never shows what was stored encrypted unless the sensitive answers are exported.
      return [header, sensitive ?? plain ?? null];
    }),
  );
}

/** A cell as a spreadsheet shows it: yes/no, a list joined with commas, a consent as "agreed by … at …". */
export function answerCell(value: AnswerValue | null, minute: (date: Date) => string): string {
  return value === null ? '' : answerInWords(value, minute, { statement: false });
}

/**
 * One history entry per exported registration: who (the office user), when, why, and which sensitive columns
 * went out in how many of its rows. Written in the transaction that read the rows, before anything is written
 * out: an export of sensitive answers is never without its record.
 */
export async function recordSensitiveExport(
  trx: Knex.Transaction,
  input: { rowsByRegistration: ReadonlyMap<string, number>; columns: readonly AnswerColumn[]; reason: string; actor: string; to: string; now: Date },
): Promise<void> {
  const sensitiveColumns = input.columns.filter((c) => c.question.sensitive).map((c) => c.question.label);
  await recordHistoryEntries(
    trx,
    [...input.rowsByRegistration].map(([registrationId, rows]) => ({
      registrationId,
      action: 'sensitive_exported' as const,
      changes: { reason: input.reason, columns: sensitiveColumns, rows, to: input.to },
      actor: input.actor,
      now: input.now,
    })),
  );
}
