import { isDeepStrictEqual } from 'node:util';
import {
  decryptSensitiveAnswers,
  emptyAnswers,
  hasAnyAnswer,
  splitSensitive,
  type AnswerValue,
  type Question,
  type RegistrationAnswers,
} from '../registrations/answers.js';
import { recordHistory } from '../registrations/history.js';
import type { OfficeContext } from '../office/registrations/mark-paid.js';
import { lockManagedRegistration, REGISTRANT_ACTOR, refuseUnlessChangeable, type ManagedRegistration } from './managed-registration.js';

/** The answers a correction gives, read and validated against the registration as it is under its lock. */
export type ReadCorrection =
  | { ok: true; questions: readonly Question[]; answers: RegistrationAnswers }
  | { ok: false; problems: Array<{ field: string; message: string }> };

export type AnswersOutcome =
  | { kind: 'not_found' }
  | { kind: 'invalid'; problems: Array<{ field: string; message: string }> }
  | { kind: 'unchanged' }
  /** `changed`: which questions changed, "registration.<id>" or "attendees[<i>].<id>"; never their values. */
  | { kind: 'changed'; changed: string[] };

type Record_ = Record<string, AnswerValue>;

interface StoredColumns {
  answers: RegistrationAnswers | null;
  sensitive_answers_enc: string | null;
}

/**
 * The registrant's corrections to their answers on the manage page, until changesCloseAt (as for their details):
 * read by `read` under the registration's row lock, stored as a registration's answers are (plain in `answers`,
 * sensitive encrypted again), and recorded in the history naming the questions changed, never a value. Answers to
 * questions the event no longer asks are kept as they were (hidden, as the office's removal of a question keeps
 * them). A consent still given keeps its first record: its statement, time and who.
 */
export async function changeAnswersByRegistrant(
  ctx: OfficeContext,
  token: string,
  read: (managed: ManagedRegistration) => ReadCorrection,
  client: string,
): Promise<AnswersOutcome> {
  return ctx.db.transaction(async (trx) => {
    const managed = await lockManagedRegistration(trx, ctx.config.authSecret, token);
    if (!managed) return { kind: 'not_found' } as const;
    const now = ctx.clock.now();
    refuseUnlessChangeable(managed, now);
    const correction = read(managed);
    if (!correction.ok) return { kind: 'invalid', problems: correction.problems } as const;

    const stored = managed.registration as unknown as StoredColumns;
    const oldPlain = normalised(stored.answers);
    const oldSensitive = decryptSensitiveAnswers(ctx.cipher, stored.sensitive_answers_enc);
    const attendees = managed.registration.attendees;
    const count = attendees.length;
    // What each record is asked: an answer to anything else is kept as it is (a question removed, a ticket changed).
    const askedOfRegistration = new Set(correction.questions.filter((q) => q.appliesTo === 'registration').map((q) => q.id));
    const askedOfAttendee = attendees.map(
      (attendee) => new Set(correction.questions.filter((q) => q.appliesTo === 'attendee' && (!q.tiers || q.tiers.includes(attendee.tier))).map((q) => q.id)),
    );
    const asked: Asked = { registration: askedOfRegistration, attendees: askedOfAttendee };

    const merge = (old: Record_ | undefined, given: Record_ | undefined, askedHere: Set<string>): Record_ => {
      const kept = Object.fromEntries(Object.entries(old ?? {}).filter(([id]) => !askedHere.has(id)));
      const next: Record_ = { ...kept };
      for (const [id, value] of Object.entries(given ?? {}).filter(([id]) => askedHere.has(id))) {
        const before = old?.[id];
        next[id] = isConsent(value) && before !== undefined && isConsent(before) ? before : value;
      }
      return next;
    };
    const oldAll = combined(oldPlain, oldSensitive, count);
    const next: RegistrationAnswers = {
      registration: merge(oldAll.registration, correction.answers.registration, askedOfRegistration),
      attendees: Array.from({ length: count }, (_, i) => merge(oldAll.attendees[i], correction.answers.attendees[i], askedOfAttendee[i] as Set<string>)),
    };

    const changed = [
      ...changedIds(oldAll.registration, next.registration).map((id) => `registration.${id}`),
      ...next.attendees.flatMap((record, i) => changedIds(oldAll.attendees[i] ?? {}, record).map((id) => `attendees[${i}].${id}`)),
    ];
    if (changed.length === 0) return { kind: 'unchanged' } as const;

    // The questions asked split by their own flag; answers kept for questions no longer asked stay where they were.
    const split = splitSensitive(correction.questions, onlyAsked(next, asked));
    const plain = withKept(split.plain, oldPlain, asked, count);
    const sensitive = withKept(split.sensitive, oldSensitive, asked, count);
    await trx('registrations')
      .where({ id: managed.registration.id })
      .update({
        answers: JSON.stringify(plain),
        sensitive_answers_enc: hasAnyAnswer(sensitive) ? ctx.cipher.encrypt(JSON.stringify(sensitive)) : null,
        updated_at: now,
      });
    await recordHistory(trx, {
      registrationId: managed.registration.id,
      action: 'answers_updated',
      changes: { questions: changed, client },
      actor: REGISTRANT_ACTOR,
      now,
    });
    return { kind: 'changed', changed } as const;
  });
}

function isConsent(value: AnswerValue): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && 'agreed' in value;
}

function normalised(answers: RegistrationAnswers | null): RegistrationAnswers {
  return answers ? { registration: answers.registration ?? {}, attendees: answers.attendees ?? [] } : emptyAnswers();
}

function combined(plain: RegistrationAnswers, sensitive: RegistrationAnswers, count: number): RegistrationAnswers {
  return {
    registration: { ...plain.registration, ...sensitive.registration },
    attendees: Array.from({ length: count }, (_, i) => ({ ...(plain.attendees[i] ?? {}), ...(sensitive.attendees[i] ?? {}) })),
  };
}

interface Asked {
  registration: Set<string>;
  attendees: Array<Set<string>>;
}

function changedIds(before: Record_, after: Record_): string[] {
  const ids = new Set([...Object.keys(before), ...Object.keys(after)]);
  return [...ids].filter((id) => !isDeepStrictEqual(before[id], after[id]));
}

const pick = (record: Record_ | undefined, keep: (id: string) => boolean): Record_ =>
  Object.fromEntries(Object.entries(record ?? {}).filter(([id]) => keep(id)));

function onlyAsked(answers: RegistrationAnswers, asked: Asked): RegistrationAnswers {
  return {
    registration: pick(answers.registration, (id) => asked.registration.has(id)),
    attendees: answers.attendees.map((record, i) => pick(record, (id) => asked.attendees[i]?.has(id) ?? false)),
  };
}

function withKept(current: RegistrationAnswers, old: RegistrationAnswers, asked: Asked, count: number): RegistrationAnswers {
  return {
    registration: { ...pick(old.registration, (id) => !asked.registration.has(id)), ...current.registration },
    attendees: Array.from({ length: count }, (_, i) => ({ ...pick(old.attendees[i], (id) => !(asked.attendees[i]?.has(id) ?? false)), ...(current.attendees[i] ?? {}) })),
  };
}
