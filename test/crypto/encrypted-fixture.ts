import type { FieldCipher } from '../../src/crypto/field-cipher.js';
import { ENCRYPTED_COLUMNS } from '../../src/crypto/rotate.js';
import type { Db } from '../../src/db/connect.js';
import { TEST_KEYS } from '../support/env.js';

/** Keyring env before rotation (writes v1) and after step 2 of the rotation order (writes v2). */
export const V1_ENV = { ENCRYPTION_KEY: TEST_KEYS.v1, ENCRYPTION_KEY_V1: TEST_KEYS.v1 };
export const V2_ENV = { ...V1_ENV, ENCRYPTION_KEY_V2: TEST_KEYS.v2, ENCRYPTION_KEY_ID: 'v2' };

export interface EncryptedValue {
  table: string;
  column: string;
  key: string;
  plaintext: string;
}

export interface StoredValue {
  table: string;
  column: string;
  key: string;
  stored: string;
}

/**
 * Rows in every table with an encrypted column, written directly with the
 * given cipher; some optional encrypted columns left NULL. Returns the
 * plaintext of every value written.
 */
export async function seedEncryptedRows(db: Db, cipher: FieldCipher, tag = 'a'): Promise<EncryptedValue[]> {
  const values: EncryptedValue[] = [];
  const enc = (table: string, column: string, plaintext: string | null) => {
    if (plaintext === null) return null;
    return { table, column, plaintext, stored: cipher.encrypt(plaintext) };
  };
  const insert = async (table: string, row: Record<string, unknown>, encrypted: ReturnType<typeof enc>[]) => {
    const data: Record<string, unknown> = { ...row };
    for (const e of encrypted) if (e) data[e.column] = e.stored;
    const [inserted] = (await db(table).insert(data).returning('id')) as { id: string | number }[];
    const key = String(inserted?.id);
    for (const e of encrypted) if (e) values.push({ table: e.table, column: e.column, key, plaintext: e.plaintext });
    return key;
  };

  for (let i = 0; i < 3; i++) {
    const email = `staff${i}-${tag}@example.org`;
    await insert('users', { name: `Staff ${i}`, email_hash: cipher.lookupHash('email', email), role: 'STAFF' }, [
      enc('users', 'email_enc', email),
    ]);
  }
  const people: string[] = [];
  for (let i = 0; i < 5; i++) {
    const email = `member${i}-${tag}@example.org`;
    const mobile = i % 2 === 0 ? `0412 345 ${String(600 + i)}` : null;
    people.push(
      await insert(
        'people',
        {
          first_name: `Member${i}`,
          last_name: 'Tester',
          email_hash: cipher.lookupHash('email', email),
          mobile_hash: mobile ? cipher.lookupHash('mobile', mobile) : null,
        },
        [enc('people', 'email_enc', email), enc('people', 'mobile_enc', mobile)],
      ),
    );
  }
  for (let i = 0; i < 3; i++) {
    await insert('clearances', { person_id: people[i], kind: 'working-with-children' }, [
      enc('clearances', 'number_enc', i === 2 ? null : `WWC${tag}${1000 + i}`),
    ]);
  }
  const eventId = await insert('events', { slug: `camp-${tag}`, title: 'Family Camp', starts_at: new Date('2027-03-12T07:00:00Z') }, []);
  const registrations: string[] = [];
  for (let i = 0; i < 3; i++) {
    const email = `family${i}-${tag}@example.org`;
    const registration = await insert(
      'registrations',
      {
        event_id: eventId,
        status: 'PENDING',
        contact_name: `Family ${i}`,
        contact_email_hash: cipher.lookupHash('email', email),
        attendees: JSON.stringify([{ name: `Family ${i}`, tier: 'adult' }]),
        attendee_count: 1,
        payment_method: 'bank',
        line_items: JSON.stringify([{ tier: 'adult', quantity: 1, unitMinor: 12000 }]),
        total_minor: 12000,
      },
      [
        enc('registrations', 'contact_email_enc', email),
        enc('registrations', 'contact_mobile_enc', i === 1 ? null : `+61 400 000 00${i}`),
        // Sensitive answers (RegistrationAnswers); the last registration's were purged.
        enc('registrations', 'sensitive_answers_enc', i === 2 ? null : JSON.stringify({ registration: {}, attendees: [{ allergies: `peanuts ${tag}${i}`, dateOfBirth: '2015-06-0' + (i + 1) }] })),
      ],
    );
    registrations.push(registration);
  }
  for (let i = 0; i < 2; i++) {
    const at = new Date('2026-11-22T00:00:00Z');
    await insert('contact_email_changes', { registration_id: registrations[i], requested_at: at, confirm_by: new Date(at.getTime() + 48 * 3_600_000) }, [
      enc('contact_email_changes', 'old_email_enc', `family${i}-${tag}@example.org`),
      enc('contact_email_changes', 'new_email_enc', `moved${i}-${tag}@example.org`),
    ]);
  }
  for (let i = 0; i < 2; i++) {
    const email = `waiting${i}-${tag}@example.org`;
    const now = new Date('2026-11-22T00:00:00Z');
    await insert('waitlist_entries', { event_id: eventId, email_hash: cipher.lookupHash('email', email), places: 2, created_at: now, updated_at: now }, [
      enc('waitlist_entries', 'name_enc', `Waiting ${i}`),
      enc('waitlist_entries', 'email_enc', email),
      enc('waitlist_entries', 'mobile_enc', i === 0 ? null : '+61 400 000 111'),
    ]);
  }
  for (let i = 0; i < 2; i++) {
    await insert('checkout_sessions', { event_id: eventId, expires_at: new Date('2027-03-01T00:00:00Z'), net_minor: 12000 }, [
      enc('checkout_sessions', 'payload_enc', i === 0 ? JSON.stringify({ name: `Checkout ${tag}`, email: `pay-${tag}@example.org` }) : null),
    ]);
  }
  for (let i = 0; i < 4; i++) {
    await insert('queued_mail', { kind: 'reminder' }, [
      enc('queued_mail', 'message_enc', JSON.stringify({ to: `member${i}-${tag}@example.org`, subject: 'Reminder', text: `Hello ${i}` })),
    ]);
  }
  return values;
}

/** Every non-NULL value of every encrypted column, as stored. */
export async function readStoredValues(db: Db): Promise<StoredValue[]> {
  const all: StoredValue[] = [];
  for (const { table, column, key } of ENCRYPTED_COLUMNS) {
    const rows = (await db(table).select({ key, stored: column }).whereNotNull(column)) as { key: string | number; stored: string }[];
    for (const row of rows) all.push({ table, column, key: String(row.key), stored: row.stored });
  }
  return all;
}

export const valueId = (v: { table: string; column: string; key: string }): string => `${v.table}.${v.column}#${v.key}`;
