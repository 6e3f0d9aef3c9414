import type { AppContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import { DATE_OF_BIRTH_QUESTION_ID, decryptSensitiveAnswers, mergeAnswers, type AnswerValue, type Question, type RegistrationAnswers } from '../registrations/answers.js';
import { eventFromRow, type EventRecord, type EventRow } from '../registrations/event-record.js';
import { BALANCE_MINOR_SQL } from '../registrations/ledger.js';
import { paymentReference } from '../registrations/reference.js';
import { foldForSearch } from '../search-fold.js';
import { isChild } from '../registrations/child.js';
import { eventFirstDay } from '../registrations/questions.js';
import { compareFamilies } from './family-order.js';

/**
 * The event's roll: every attendee of its PENDING and PAID registrations, with what the door must know (what the
 * registration still owes, the answers of questions marked showAtCheckin, a child's guardian) and whether they
 * are here. The check-in page, the printed roll and the attendance report all read it.
 */
export interface RollAttendee {
  /** `<registration id>:<attendee index>`: what the page's buttons name. */
  key: string;
  registrationId: string;
  reference: string;
  attendeeIndex: number;
  name: string;
  tierLabel: string;
  contactName: string;
  /** The contact, named as guardian, when the attendee is a child. */
  guardian: string | null;
  /** What the registration still owes (0 when paid or free), minor units. */
  owesMinor: number;
  /** Answers of the questions marked showAtCheckin, as text. */
  flags: Array<{ label: string; value: string }>;
  state: 'away' | 'here' | 'left';
  checkedInAt: Date | null;
  checkedInBy: string | null;
  checkedOutAt: Date | null;
  checkedOutBy: string | null;
  walkIn: boolean;
  registeredAt: Date;
  /** foldForSearch of the attendee's and the contact's names. */
  search: string;
}

export interface Roll {
  event: EventRecord;
  attendees: RollAttendee[];
  total: number;
  here: number;
  left: number;
}

interface RollSourceRow {
  id: string;
  status: 'PENDING' | 'PAID';
  contact_name: string;
  attendees: Array<{ name: string; tier: string }>;
  total_minor: number;
  balance_minor: string | number;
  answers: RegistrationAnswers | null;
  sensitive_answers_enc: string | null;
  created_at: Date;
}

interface CheckinRow {
  registration_id: string;
  attendee_index: number;
  checked_in_at: Date | null;
  checked_in_by: string | null;
  checked_out_at: Date | null;
  checked_out_by: string | null;
  walk_in: boolean;
}

/** An answer as a volunteer reads it; nothing for a "no" or an empty answer, which needs no flag. */
export function answerText(value: AnswerValue | undefined): string | undefined {
  if (value === undefined || value === false || value === '') return undefined;
  if (value === true) return 'Yes';
  if (Array.isArray(value)) return value.length > 0 ? value.join(', ') : undefined;
  if (typeof value === 'object') return `Agreed (${value.by})`;
  return String(value);
}

function flagsOf(questions: readonly Question[], answers: RegistrationAnswers, index: number): Array<{ label: string; value: string }> {
  const flags: Array<{ label: string; value: string }> = [];
  for (const question of questions) {
    if (!question.showAtCheckin) continue;
    const value = question.appliesTo === 'registration' ? answers.registration[question.id] : answers.attendees[index]?.[question.id];
    const text = answerText(value);
    if (text !== undefined) flags.push({ label: question.label, value: text });
  }
  return flags;
}

export async function loadEventForRoll(ctx: Pick<AppContext, 'db'>, where: { slug: string } | { id: string }): Promise<EventRecord> {
  const row = await ctx.db('events').where(where).whereNull('deleted_at').first<EventRow | undefined>();
  if (!row) throw new NotFoundError(`event "${'slug' in where ? where.slug : where.id}"`, 'run `eventops events list` to see the slugs');
  return eventFromRow(row);
}

/**
 * The roll, families together (family-order.ts: by the contact's surname, each family's attendees in the order it
 * gave them); sensitive answers are decrypted for it only when a showAtCheckin question asks for them.
 */
export async function loadRoll(ctx: Pick<AppContext, 'db' | 'cipher' | 'config'>, event: EventRecord): Promise<Roll> {
  const rows = await ctx.db('registrations as r')
    .where('r.event_id', event.id)
    .whereIn('r.status', ['PENDING', 'PAID'])
    .orderBy([{ column: 'r.created_at' }, { column: 'r.id' }])
    .select<RollSourceRow[]>('r.id', 'r.status', 'r.contact_name', 'r.attendees', 'r.total_minor', ctx.db.raw(`${BALANCE_MINOR_SQL} AS balance_minor`), 'r.answers', 'r.sensitive_answers_enc', 'r.created_at');
  const checkins = await ctx.db('attendee_checkins').where({ event_id: event.id }).select<CheckinRow[]>('*');
  const stateOf = new Map(checkins.map((row) => [`${row.registration_id}:${row.attendee_index}`, row]));
  const tiers = new Map(event.pricing.tiers.map((tier) => [tier.id, tier]));
  const firstDay = eventFirstDay(event, ctx.config.regional.timeZone);
  const wantsSensitive = event.questions.some((q) => q.showAtCheckin) || event.pricing.tiers.some((tier) => tier.minAge !== undefined || tier.maxAge !== undefined);
  rows.sort((a, b) => compareFamilies({ id: a.id, contactName: a.contact_name, registeredAt: a.created_at }, { id: b.id, contactName: b.contact_name, registeredAt: b.created_at }));
  const attendees = rows.flatMap((row) => {
    const sensitive = wantsSensitive ? decryptSensitiveAnswers(ctx.cipher, row.sensitive_answers_enc) : { registration: {}, attendees: [] };
    const answers = mergeAnswers(row.answers ?? { registration: {}, attendees: [] }, sensitive);
    // What is still owed after payments and help with the cost (registration_money).
    const owesMinor = Math.max(0, Number(row.balance_minor));
    return row.attendees.map((attendee, index): RollAttendee => {
      const key = `${row.id}:${index}`;
      const checkin = stateOf.get(key);
      const tier = tiers.get(attendee.tier);
      const child = isChild({ tier, dateOfBirth: answers.attendees[index]?.[DATE_OF_BIRTH_QUESTION_ID], firstDay });
      const state = checkin?.checked_out_at ? 'left' : checkin?.checked_in_at ? 'here' : 'away';
      return {
        key,
        registrationId: row.id,
        reference: paymentReference(row.id),
        attendeeIndex: index,
        name: attendee.name,
        tierLabel: tier?.label ?? attendee.tier,
        contactName: row.contact_name,
        guardian: child ? row.contact_name : null,
        owesMinor,
        flags: flagsOf(event.questions, answers, index),
        state,
        checkedInAt: checkin?.checked_in_at ?? null,
        checkedInBy: checkin?.checked_in_by ?? null,
        checkedOutAt: checkin?.checked_out_at ?? null,
        checkedOutBy: checkin?.checked_out_by ?? null,
        walkIn: checkin?.walk_in ?? false,
        registeredAt: row.created_at,
        search: foldForSearch(`${attendee.name} ${row.contact_name}`),
      };
    });
  });
  return {
    event,
    attendees,
    total: attendees.length,
    here: attendees.filter((a) => a.state === 'here').length,
    left: attendees.filter((a) => a.state === 'left').length,
  };
}
