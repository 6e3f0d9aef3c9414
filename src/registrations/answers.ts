import type { FieldCipher } from '../crypto/field-cipher.js';

/**
 * The questions an event asks (its event file's `questions`) and the answers a registration stores.
 * Storage: a registration's non-sensitive answers are `registrations.answers` (jsonb), its sensitive
 * ones (date of birth included) one encrypted RegistrationAnswers in `registrations.sensitive_answers_enc`,
 * emptied by the purge (`sensitive_purged_at`).
 */

export const QUESTION_TYPES = ['text', 'longtext', 'yesno', 'choice', 'multichoice', 'date', 'number', 'phone', 'email', 'consent'] as const;
export type QuestionType = (typeof QUESTION_TYPES)[number];

export interface Question {
  /** Stable: export columns and stored answers are keyed by it. */
  id: string;
  label: string;
  type: QuestionType;
  appliesTo: 'attendee' | 'registration';
  /** For attendee questions: only attendees with one of these tiers are asked; absent = all. */
  tiers?: string[];
  required?: boolean;
  /** For choice and multichoice. */
  options?: string[];
  /** Asked only when the named question's answer equals this (yes/no as "yes"/"no"; a multichoice when it includes it). */
  showIf?: { question: string; equals: string };
  sensitive?: boolean;
  /** A sensitive answer shown to volunteers on the check-in page (e.g. allergies). */
  showAtCheckin?: boolean;
  help?: string;
}

/** The id of the date-of-birth question the form adds, per attendee, when a tier has an age limit. */
export const DATE_OF_BIRTH_QUESTION_ID = 'dateOfBirth';

/** A consent as given: the statement's text as shown, when, and by whom. */
export interface ConsentAnswer {
  agreed: true;
  statement: string;
  /** ISO 8601. */
  at: string;
  /** The registration's contact, by name. */
  by: string;
  /** For a child attendee: the attendee's name, the contact consenting as guardian. */
  asGuardianOf?: string;
}

/** yesno: boolean; number: number; multichoice: string[]; date: YYYY-MM-DD; consent: ConsentAnswer; else the text. */
export type AnswerValue = string | number | boolean | string[] | ConsentAnswer;

export interface RegistrationAnswers {
  /** Answers to registration-wide questions, by question id. */
  registration: Record<string, AnswerValue>;
  /** One entry per attendee, in the registration's attendee order, by question id. */
  attendees: Array<Record<string, AnswerValue>>;
}

export const NO_ANSWERS: RegistrationAnswers = Object.freeze({ registration: {}, attendees: [] }) as RegistrationAnswers;

export function emptyAnswers(): RegistrationAnswers {
  return { registration: {}, attendees: [] };
}

/** Splits answers by the question's `sensitive` flag (the date of birth is always sensitive; an unknown id counts as sensitive). */
export function splitSensitive(
  questions: readonly Question[],
  answers: RegistrationAnswers,
): { plain: RegistrationAnswers; sensitive: RegistrationAnswers } {
  const sensitiveIds = new Set(questions.filter((q) => q.sensitive).map((q) => q.id));
  const plainIds = new Set(questions.filter((q) => !q.sensitive).map((q) => q.id));
  plainIds.delete(DATE_OF_BIRTH_QUESTION_ID);
  sensitiveIds.add(DATE_OF_BIRTH_QUESTION_ID);
  const pick = (record: Record<string, AnswerValue>, plain: boolean): Record<string, AnswerValue> =>
    Object.fromEntries(Object.entries(record).filter(([id]) => (plain ? plainIds.has(id) : !plainIds.has(id))));
  return {
    plain: { registration: pick(answers.registration, true), attendees: answers.attendees.map((a) => pick(a, true)) },
    sensitive: { registration: pick(answers.registration, false), attendees: answers.attendees.map((a) => pick(a, false)) },
  };
}

export function hasAnyAnswer(answers: RegistrationAnswers): boolean {
  return Object.keys(answers.registration).length > 0 || answers.attendees.some((a) => Object.keys(a).length > 0);
}

/** The stored columns for a registration's answers: plain as jsonb, sensitive encrypted (null when there are none). */
export function answerColumns(
  cipher: FieldCipher,
  questions: readonly Question[],
  answers: RegistrationAnswers,
): { answers: string; sensitive_answers_enc: string | null } {
  const { plain, sensitive } = splitSensitive(questions, answers);
  return {
    answers: JSON.stringify(plain),
    sensitive_answers_enc: hasAnyAnswer(sensitive) ? cipher.encrypt(JSON.stringify(sensitive)) : null,
  };
}

/** A registration's sensitive answers, decrypted; empty when none were given or they were purged. */
export function decryptSensitiveAnswers(cipher: FieldCipher, sensitiveAnswersEnc: string | null): RegistrationAnswers {
  if (!sensitiveAnswersEnc) return emptyAnswers();
  return JSON.parse(cipher.decrypt(sensitiveAnswersEnc)) as RegistrationAnswers;
}

/** Plain and sensitive answers as one (sensitive ones win on a clash, which only a hand edit could make). */
export function mergeAnswers(plain: RegistrationAnswers, sensitive: RegistrationAnswers): RegistrationAnswers {
  const count = Math.max(plain.attendees.length, sensitive.attendees.length);
  return {
    registration: { ...plain.registration, ...sensitive.registration },
    attendees: Array.from({ length: count }, (_, i) => ({ ...(plain.attendees[i] ?? {}), ...(sensitive.attendees[i] ?? {}) })),
  };
}
