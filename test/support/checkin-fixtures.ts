import type { FieldCipher } from '../../src/crypto/field-cipher.js';
import type { Db } from '../../src/db/connect.js';
import type { Question, RegistrationAnswers } from '../../src/registrations/answers.js';
import { insertRegistration } from '../../src/registrations/registrations.js';
import { insertEvent } from './factories.js';
import { fromReferenceNow } from './test-now.js';

/** A camp's questions as an event file gives them: an allergy shown at the door, a medication kept from it, a plain one. */
export const CAMP_QUESTIONS: Question[] = [
  { id: 'allergies', label: 'Allergies', type: 'text', appliesTo: 'attendee', sensitive: true, showAtCheckin: true },
  { id: 'medication', label: 'Medication', type: 'text', appliesTo: 'attendee', sensitive: true },
  { id: 'tshirt', label: 'T-shirt size', type: 'choice', appliesTo: 'attendee', options: ['S', 'M', 'L'] },
];

export async function insertCamp(db: Db, overrides: Record<string, unknown> = {}) {
  return insertEvent(db, {
    title: 'Kids Camp',
    pricing: JSON.stringify({
      tiers: [
        { id: 'adult', label: 'Adult', price: 12000 },
        { id: 'child', label: 'Child', price: 6000, maxAge: 12 },
      ],
    }),
    questions: JSON.stringify(CAMP_QUESTIONS),
    ...overrides,
  });
}

interface Attendee {
  name: string;
  tier: 'adult' | 'child';
  answers?: RegistrationAnswers['attendees'][number];
}

/** A registration written as the form writes one: answers split into plain and encrypted by each question's `sensitive`. */
export async function registerFamily(
  db: Db,
  cipher: FieldCipher,
  event: { id: string },
  input: { contact: string; email?: string; status?: 'PENDING' | 'PAID'; attendees: Attendee[]; now?: Date },
): Promise<string> {
  const lines = input.attendees.map((a) => ({ label: `${a.tier === 'adult' ? 'Adult' : 'Child'} — ${a.name}`, amount: a.tier === 'adult' ? 12000 : 6000, kind: 'ticket' as const }));
  const total = lines.reduce((sum, line) => sum + line.amount, 0);
  const status = input.status ?? 'PENDING';
  const now = input.now ?? fromReferenceNow({ days: -2 });
  return db.transaction(async (trx) => {
    const { id } = await insertRegistration(trx, cipher, {
      eventId: event.id,
      status,
      method: 'bank',
      contact: { name: input.contact, email: input.email ?? `${input.contact.split(' ')[0]?.toLowerCase()}@example.org` },
      attendees: input.attendees.map((a) => ({ name: a.name, tier: a.tier })),
      family: input.attendees.length > 1,
      priced: { lines, subtotal: total, discount: 0, net: total, surcharge: 0, total, attendeeCount: lines.length, free: false },
      answers: { questions: CAMP_QUESTIONS, values: { registration: {}, attendees: input.attendees.map((a) => a.answers ?? {}) } },
      now,
    });
    return id;
  });
}
