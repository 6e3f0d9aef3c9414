import { formatInTimeZone } from 'date-fns-tz';
import type { ReadCorrection } from '../admin/self-service/change-answers.js';
import type { ManagedRegistration } from '../admin/self-service/managed-registration.js';
import type { AppContext } from '../context.js';
import { DATE_OF_BIRTH_QUESTION_ID, type AnswerValue, type Question, type RegistrationAnswers } from '../registrations/answers.js';
import { hasControlCharacters } from './field-rules.js';
import { askedQuestions, type AnswerFields } from './question-view.js';
import { questionFieldName } from './templates/question-fields.js';

/**
 * The manage page's correction form read as the public form's answers are (QUESTIONS-CONTRACT): each attendee is
 * the row of its position, asked only its tier's questions; an answer whose showIf is not met is dropped and is
 * then not required; each type checked; a date of birth within its tier's age limit on the event's first day.
 */
export function readCorrection(ctx: Pick<AppContext, 'clock' | 'config'>, managed: ManagedRegistration, fields: AnswerFields): ReadCorrection {
  const { event, registration } = managed;
  const questions = askedQuestions(event);
  const problems: Array<{ field: string; message: string }> = [];
  const firstDay = formatInTimeZone(event.startsAt, ctx.config.regional.timeZone, 'yyyy-MM-dd');
  const consent = { at: ctx.clock.now().toISOString(), by: registration.contact_name };

  const readRecord = (asked: Question[], row: number | undefined, attendee?: { name: string; tier: string }) => {
    const record: Record<string, AnswerValue> = {};
    const raw = (q: Question) => (fields[questionFieldName(q.id, row)] ?? []).map((v) => v.trim()).filter((v) => v !== '');
    const shown = (q: Question): boolean => {
      if (!q.showIf) return true;
      const trigger = asked.find((other) => other.id === q.showIf?.question) ?? questions.find((other) => other.id === q.showIf?.question && other.appliesTo === 'registration');
      if (!trigger || !shown(trigger)) return false;
      const triggerRow = trigger.appliesTo === 'attendee' ? row : undefined;
      return (fields[questionFieldName(trigger.id, triggerRow)] ?? []).map((v) => v.trim()).includes(q.showIf.equals);
    };
    for (const q of asked) {
      if (!shown(q)) continue;
      const field = questionFieldName(q.id, row);
      const say = (message: string): undefined => {
        problems.push({ field, message: `${q.label}: ${message}` });
      };
      const values = raw(q);
      if (values.length === 0) {
        if (q.required) say(q.type === 'consent' ? 'this consent is needed to register' : 'please answer this question');
        continue;
      }
      const value = readValue(q, values, say);
      if (value === undefined) continue;
      if (q.id === DATE_OF_BIRTH_QUESTION_ID && attendee && typeof value === 'string') {
        const outside = ageProblem(event.pricing.tiers.find((tier) => tier.id === attendee.tier), value, firstDay, attendee.name);
        if (outside) {
          say(outside);
          continue;
        }
      }
      record[q.id] = q.type === 'consent' ? { agreed: true, statement: q.label, ...consent, ...guardian(attendee, fields[questionFieldName(DATE_OF_BIRTH_QUESTION_ID, row)]?.[0], firstDay, event) } : value;
    }
    return record;
  };

  const answers: RegistrationAnswers = {
    registration: readRecord(questions.filter((q) => q.appliesTo === 'registration'), undefined),
    attendees: registration.attendees.map((attendee, row) =>
      readRecord(questions.filter((q) => q.appliesTo === 'attendee' && (!q.tiers || q.tiers.includes(attendee.tier))), row, attendee),
    ),
  };
  return problems.length > 0 ? { ok: false, problems } : { ok: true, questions, answers };
}

function readValue(q: Question, values: string[], say: (message: string) => undefined): AnswerValue | undefined {
  const [first = ''] = values;
  // A longer text may have lines; nothing else typed has a control character.
  if (values.some((v) => hasControlCharacters(q.type === 'longtext' ? v.replace(/[\r\n\t]/g, '') : v))) {
    say('remove the control characters');
    return undefined;
  }
  switch (q.type) {
    case 'yesno':
      if (first === 'yes' || first === 'no') return first === 'yes';
      return say('choose yes or no');
    case 'choice':
      if (q.options?.includes(first)) return first;
      return say('choose one of the options');
    case 'multichoice':
      if (values.every((v) => q.options?.includes(v))) return [...new Set(values)];
      return say('choose from the options');
    case 'consent':
      return first === 'yes' ? true : say('tick the box or leave it empty');
    case 'number': {
      const number = Number(first.replace(',', '.'));
      return /^-?\d+([.,]\d+)?$/.test(first) && Number.isFinite(number) ? number : say('enter a number');
    }
    case 'date':
      return validDate(first) ? first : say('enter a date');
    case 'email':
      return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(first) && first.length <= 254 ? first : say('enter an email address');
    case 'phone':
      return /^\+?[\d\s().-]{6,40}$/.test(first) ? first : say('enter a phone number');
    default:
      return first.length <= (q.type === 'longtext' ? 2000 : 500) ? first : say('this answer is too long');
  }
}

function validDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(text);
}

/** Whole years from a date of birth to a day (both YYYY-MM-DD). */
export function ageOn(dateOfBirth: string, day: string): number {
  const [by, bm, bd] = dateOfBirth.split('-').map(Number) as [number, number, number];
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return y - by - (m < bm || (m === bm && d < bd) ? 1 : 0);
}

function ageProblem(tier: { label: string; minAge?: number; maxAge?: number } | undefined, dateOfBirth: string, firstDay: string, name: string): string | undefined {
  if (!tier || dateOfBirth > firstDay) return dateOfBirth > firstDay ? 'enter a date before the event' : undefined;
  const age = ageOn(dateOfBirth, firstDay);
  const { minAge, maxAge } = tier;
  if ((minAge === undefined || age >= minAge) && (maxAge === undefined || age <= maxAge)) return undefined;
  const range = minAge !== undefined && maxAge !== undefined ? `ages ${minAge} to ${maxAge}` : minAge !== undefined ? `ages ${minAge} and over` : `ages up to ${maxAge}`;
  return `${tier.label} tickets are for ${range} on the first day of the event, and ${name} will be ${age}`;
}

/** A consent given for a child attendee names the child: the contact consents as guardian. */
function guardian(
  attendee: { name: string; tier: string } | undefined,
  dob: string | undefined,
  firstDay: string,
  event: ManagedRegistration['event'],
): { asGuardianOf?: string } {
  if (!attendee) return {};
  const tier = event.pricing.tiers.find((t) => t.id === attendee.tier);
  const child = (dob !== undefined && validDate(dob) && ageOn(dob, firstDay) < 18) || (tier?.maxAge !== undefined && tier.maxAge < 18);
  return child ? { asGuardianOf: attendee.name } : {};
}
