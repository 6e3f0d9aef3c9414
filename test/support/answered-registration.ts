import type { FieldCipher } from '../../src/crypto/field-cipher.js';
import type { Db } from '../../src/db/connect.js';
import type { Question, RegistrationAnswers } from '../../src/registrations/answers.js';
import { insertRegistration } from '../../src/registrations/registrations.js';
import { fromReferenceNow } from './test-now.js';

/** A camp's questions: plain and sensitive, per attendee and once per registration, with a consent. */
export const CAMP_QUESTIONS: Question[] = [
  { id: 'diet', label: 'Dietary needs', type: 'text', appliesTo: 'attendee' },
  { id: 'allergies', label: 'Allergies', type: 'longtext', appliesTo: 'attendee', sensitive: true, showAtCheckin: true },
  { id: 'photos', label: 'Photo consent', type: 'consent', appliesTo: 'attendee', tiers: ['child'] },
  { id: 'emergency', label: 'Emergency contact', type: 'text', appliesTo: 'registration' },
  { id: 'medical', label: 'Medical conditions', type: 'text', appliesTo: 'registration', sensitive: true },
  { id: 'bus', label: 'Takes the bus', type: 'yesno', appliesTo: 'registration' },
];

export const CAMP_PRICING = JSON.stringify({
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000, maxAge: 17 },
  ],
});

/** Writes an event's questions (and retention) onto its row, as the event file will. */
export async function setEventQuestions(db: Db, eventId: string, questions: readonly Question[], retentionDays?: number): Promise<void> {
  await db('events')
    .where({ id: eventId })
    .update({ questions: JSON.stringify(questions), ...(retentionDays === undefined ? {} : { sensitive_retention_days: retentionDays }) });
}

/** A PAID bank registration with answers, stored the way the form stores them (insertRegistration → answerColumns). */
export async function insertAnsweredRegistration(
  db: Db,
  cipher: FieldCipher,
  input: {
    eventId: string;
    questions: readonly Question[];
    answers: RegistrationAnswers;
    attendees: Array<{ name: string; tier: string }>;
    contact?: { name: string; email: string };
    now?: Date;
  },
): Promise<{ id: string }> {
  const contact = input.contact ?? { name: 'Ruth Camper', email: `ruth-${Math.random().toString(16).slice(2, 8)}@example.org` };
  const total = input.attendees.length * 10000;
  return db.transaction((trx) =>
    insertRegistration(trx, cipher, {
      eventId: input.eventId,
      status: 'PAID',
      method: 'bank',
      contact,
      attendees: input.attendees,
      family: false,
      priced: {
        lines: input.attendees.map((a) => ({ label: `${a.tier} — ${a.name}`, amount: 10000, kind: 'ticket' as const })),
        subtotal: total,
        discount: 0,
        net: total,
        surcharge: 0,
        total,
        attendeeCount: input.attendees.length,
        free: false,
      },
      answers: { questions: input.questions, values: input.answers },
      now: input.now ?? new Date(),
    }),
  );
}

/** A family of two, Ruth and her child Kim, answering every camp question; Kim's consent given by Ruth as guardian. */
export function campAnswers(at = fromReferenceNow({ days: -1, minutes: -30 }).toISOString()): { attendees: Array<{ name: string; tier: string }>; answers: RegistrationAnswers } {
  return {
    attendees: [
      { name: 'Ruth Camper', tier: 'adult' },
      { name: 'Kim Camper', tier: 'child' },
    ],
    answers: {
      registration: { emergency: 'Joe Camper 0400 111 222', medical: 'Ruth: asthma, inhaler in bag', bus: true },
      attendees: [
        { diet: 'vegetarian', dateOfBirth: '1988-04-02' },
        {
          diet: 'no pork',
          allergies: 'peanuts (anaphylaxis), EpiPen',
          dateOfBirth: '2016-09-14',
          photos: { agreed: true, statement: 'Photos of my child may appear in the church newsletter.', at, by: 'Ruth Camper', asGuardianOf: 'Kim Camper' },
        },
      ],
    },
  };
}
