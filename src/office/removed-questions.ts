import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { AppError, EXIT } from '../errors.js';
import { decryptSensitiveAnswers, type Question, type RegistrationAnswers } from '../registrations/answers.js';
import type { EventRow } from '../registrations/event-record.js';

/** A question an update removes while registrations of the event have answered it. */
export interface AnsweredQuestion {
  id: string;
  label: string;
  /** Registrations (of any status) holding an answer to it, plain or sensitive. */
  registrations: number;
}

/** `events update` without --force: removing a question would hide answers families gave. */
export class QuestionHasAnswersError extends AppError {
  constructor(
    readonly slug: string,
    readonly answered: AnsweredQuestion[],
  ) {
    const described = answered.map((q) => `"${q.id}" (${q.label}): answered in ${q.registrations} registration${q.registrations === 1 ? '' : 's'}`);
    super('question_has_answers', `the file removes ${answered.length === 1 ? 'a question' : 'questions'} of event "${slug}" that families have answered: ${described.join('; ')}; nothing was changed`, {
      exitCode: EXIT.failure,
      httpStatus: 409,
      suggestion:
        'put the question back in the file, or remove it anyway with `eventops events update FILE.json --force`: ' +
        'the answers are kept in the database, hidden from the pages, emails and export',
    });
    this.name = 'QuestionHasAnswersError';
  }
}

/**
 * Refuses an update that removes (by id) a question some registration of the event answered, unless `force`.
 * Sensitive answers are decrypted to be checked. Run under the event's lock, so no answer slips in meanwhile.
 */
export async function refuseRemovingAnswered(
  trx: Db,
  ctx: Pick<AppContext, 'cipher'>,
  current: Pick<EventRow, 'id' | 'slug' | 'questions'>,
  next: readonly Question[],
  force: boolean,
): Promise<void> {
  if (force) return;
  const kept = new Set(next.map((q) => q.id));
  const removed = (current.questions ?? []).filter((q) => !kept.has(q.id));
  if (removed.length === 0) return;
  const counts = await answeredCounts(trx, ctx, current.id, removed.map((q) => q.id));
  const answered = removed.filter((q) => (counts.get(q.id) ?? 0) > 0).map((q) => ({ id: q.id, label: q.label, registrations: counts.get(q.id) ?? 0 }));
  if (answered.length > 0) throw new QuestionHasAnswersError(current.slug, answered);
}

/** For each question id, how many registrations of the event hold an answer to it. */
async function answeredCounts(trx: Db, ctx: Pick<AppContext, 'cipher'>, eventId: string, ids: string[]): Promise<Map<string, number>> {
  const rows = await trx('registrations')
    .where({ event_id: eventId })
    .select<Array<{ answers: RegistrationAnswers | null; sensitive_answers_enc: string | null }>>('answers', 'sensitive_answers_enc');
  const counts = new Map<string, number>();
  for (const row of rows) {
    const sensitive = decryptSensitiveAnswers(ctx.cipher, row.sensitive_answers_enc);
    for (const id of ids) {
      if (answers(row.answers, id) || answers(sensitive, id)) counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  return counts;
}

function answers(stored: RegistrationAnswers | null, id: string): boolean {
  if (!stored) return false;
  return id in (stored.registration ?? {}) || (stored.attendees ?? []).some((attendee) => id in attendee);
}
