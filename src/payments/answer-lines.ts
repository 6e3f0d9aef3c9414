import type { Knex } from 'knex';
import { splitSensitive, type AnswerValue, type Question, type RegistrationAnswers } from '../registrations/answers.js';
import type { EventRecord } from '../registrations/event-record.js';
import { questionsAsked } from '../registrations/questions.js';

/** One heading of answers in an email: "Your answers" for the registration-wide ones, else the attendee's name. */
export interface AnswerGroup {
  heading: string;
  answers: Array<{ label: string; value: string }>;
}

/**
 * The registration's NON-sensitive answers for its confirmation email, labelled, per attendee where they apply.
 * Read from `registrations.answers` (sensitive ones are never there) and kept only for questions the event still
 * asks and does not mark sensitive: a removed question's answers stay hidden, a newly sensitive one is left out.
 */
export async function plainAnswerGroups(
  trx: Knex.Transaction,
  registrationId: string,
  event: Pick<EventRecord, 'questions' | 'pricing'>,
  regional: { locale: string; timeZone: string },
): Promise<AnswerGroup[]> {
  if (event.questions.length === 0) return [];
  const row = await trx('registrations')
    .where({ id: registrationId })
    .first<{ answers: RegistrationAnswers | null; attendees: Array<{ name: string }> } | undefined>('answers', 'attendees');
  if (!row?.answers) return [];
  return answerGroupsOf(event, row.answers, row.attendees.map((attendee) => attendee.name), regional);
}

/** The non-sensitive answers of `answers` (plain ones, or all as given: sensitive ones are left out here) as email groups. */
export function answerGroupsOf(
  event: Pick<EventRecord, 'questions' | 'pricing'>,
  answers: RegistrationAnswers,
  attendeeNames: readonly string[],
  regional: { locale: string; timeZone: string },
): AnswerGroup[] {
  if (event.questions.length === 0) return [];
  const asked = questionsAsked(event);
  const { plain } = splitSensitive(asked, { registration: answers.registration ?? {}, attendees: answers.attendees ?? [] });
  const text = answerText(regional);
  const lines = (appliesTo: Question['appliesTo'], given: Record<string, AnswerValue> | undefined) =>
    asked
      .filter((q) => q.appliesTo === appliesTo && !q.sensitive && given?.[q.id] !== undefined)
      .map((q) => ({ label: q.label, value: text(given?.[q.id] as AnswerValue) }));
  const groups: AnswerGroup[] = [{ heading: 'Your answers', answers: lines('registration', plain.registration) }];
  attendeeNames.forEach((name, index) => groups.push({ heading: name, answers: lines('attendee', plain.attendees[index]) }));
  return groups.filter((group) => group.answers.length > 0);
}

function answerText(regional: { locale: string; timeZone: string }): (value: AnswerValue) => string {
  const calendarDate = new Intl.DateTimeFormat(regional.locale, { dateStyle: 'long', timeZone: 'UTC' });
  const dateTime = new Intl.DateTimeFormat(regional.locale, { dateStyle: 'long', timeStyle: 'short', timeZone: regional.timeZone });
  return (value) => {
    if (typeof value === 'boolean') return value ? 'Yes' : 'No';
    if (Array.isArray(value)) return value.join(', ');
    if (typeof value === 'object') {
      const guardian = value.asGuardianOf ? ` as guardian of ${value.asGuardianOf}` : '';
      return `Given by ${value.by}${guardian}, ${dateTime.format(new Date(value.at))}`;
    }
    if (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value)) return calendarDate.format(new Date(`${value}T00:00:00Z`));
    return String(value);
  };
}
