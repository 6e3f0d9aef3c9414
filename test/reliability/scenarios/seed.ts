import { formatInTimeZone } from 'date-fns-tz';
import type { FieldCipher } from '../../../src/crypto/field-cipher.js';
import type { Db } from '../../../src/db/connect.js';
import { setSetting } from '../../../src/settings.js';
import { insertEvent, insertPerson, insertRegistration, insertUser } from '../../support/factories.js';
import type { SinkMessage } from '../../support/smtp-sink.js';

/**
 * Rows for the job reliability scenarios. The built command runs on the real
 * clock, so "due" and "today" are relative to now in the default APP_TIMEZONE.
 */

export const TIME_ZONE = 'Australia/Sydney';

/** Events whose reminder is due now, each with `perEvent` registrations (every third one PENDING with an amount owing). */
export async function seedDueReminders(
  db: Db,
  cipher: FieldCipher,
  options: { events: number; perEvent: number; prefix?: string; now?: Date },
): Promise<string[]> {
  const now = options.now ?? new Date();
  const prefix = options.prefix ?? 'reminder';
  const addresses: string[] = [];
  for (let e = 0; e < options.events; e++) {
    const event = await insertEvent(db, {
      title: `Camp ${e + 1}`,
      reminder_at: new Date(now.getTime() - 60 * 60_000),
      starts_at: new Date(now.getTime() + 3 * 24 * 60 * 60_000),
    });
    for (let r = 0; r < options.perEvent; r++) {
      const email = `${prefix}-${e}-${r}@example.org`;
      addresses.push(email);
      await insertRegistration(db, cipher, event.id, { email, contact_name: `Member ${e}-${r}`, status: r % 3 === 2 ? 'PENDING' : 'PAID' });
    }
  }
  return addresses;
}

/** People whose birthday is today (local), with birthday emails switched on. */
export async function seedBirthdaysToday(
  db: Db,
  cipher: FieldCipher,
  options: { people: number; prefix?: string; now?: Date },
): Promise<string[]> {
  const monthDay = formatInTimeZone(options.now ?? new Date(), TIME_ZONE, 'MM-dd');
  await setSetting(db, 'celebrations.birthdays', true, new Date());
  const prefix = options.prefix ?? 'birthday';
  const addresses: string[] = [];
  for (let i = 0; i < options.people; i++) {
    const email = `${prefix}-${i}@example.org`;
    addresses.push(email);
    // 1992 had a 29 February, so today's month-day always exists.
    await insertPerson(db, cipher, { first_name: `Person${i}`, email, birth_date: `1992-${monthDay}` });
  }
  return addresses;
}

/** ADMIN and PASTOR recipients and one person with a ministry role and no clearance, so this month's digest has something to say. */
export async function seedClearanceDigest(
  db: Db,
  cipher: FieldCipher,
  options: { recipients: number; prefix?: string },
): Promise<string[]> {
  const prefix = options.prefix ?? 'digest';
  const addresses: string[] = [];
  for (let i = 0; i < options.recipients; i++) {
    const email = `${prefix}-${i}@example.org`;
    addresses.push(email);
    await insertUser(db, cipher, { email, name: `Leader ${i}`, role: i % 2 === 0 ? 'ADMIN' : 'PASTOR' });
  }
  const volunteer = await insertPerson(db, cipher, { first_name: 'Val', last_name: 'Volunteer' });
  await db('ministry_roles').insert({ person_id: volunteer.id, role: 'Youth leader' });
  return addresses;
}

export interface DeliveryCount {
  /** Expected recipients with no message. */
  lost: string[];
  /** Messages beyond the first, per recipient and subject. */
  duplicates: number;
  /** Recipient+subject pairs received more than once. */
  duplicated: string[];
  /** Messages to nobody expected. */
  unexpected: number;
  perRecipient: Map<string, number>;
}

/** Counts messages per recipient and subject against the recipients expected once each. */
export function countDeliveries(messages: SinkMessage[], expected: string[]): DeliveryCount {
  const perKey = new Map<string, number>();
  const perRecipient = new Map<string, number>();
  const wanted = new Set(expected.map((a) => a.toLowerCase()));
  let unexpected = 0;
  for (const message of messages) {
    for (const to of message.envelope.to) {
      const address = to.toLowerCase();
      if (!wanted.has(address)) unexpected++;
      const key = `${address} | ${message.subject}`;
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
      perRecipient.set(address, (perRecipient.get(address) ?? 0) + 1);
    }
  }
  const duplicated = [...perKey].filter(([, n]) => n > 1).map(([key]) => key);
  const duplicates = [...perKey.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  return { lost: [...wanted].filter((a) => !perRecipient.has(a)), duplicates, duplicated, unexpected, perRecipient };
}
