import type { ReadCorrection } from '../family/change-answers.js';
import type { ManagedRegistration } from '../family/managed-registration.js';
import type { AppContext } from '../context.js';
import { questionsAsked, readAnswers, type AnswerFields } from '../registrations/questions.js';

/**
 * The manage page's correction form read as the public form's answers are (registrations/questions.ts): each
 * attendee is the row of its position.
 */
export function readCorrection(ctx: Pick<AppContext, 'clock' | 'config'>, managed: ManagedRegistration, fields: AnswerFields): ReadCorrection {
  const { event, registration } = managed;
  const { answers, problems } = readAnswers(event, registration.attendees, fields, {
    contactName: registration.contact_name,
    now: ctx.clock.now(),
    timeZone: ctx.config.regional.timeZone,
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, questions: questionsAsked(event), answers };
}
