import crypto from 'node:crypto';
import type { Db } from '../../src/db/connect.js';
import type { FieldCipher } from '../../src/crypto/field-cipher.js';
import { defaultEventStart, fromReferenceNow } from './test-now.js';

/** Rows for tests, inserted directly: only what a test overrides differs from a plausible default. */

export async function insertEvent(db: Db, overrides: Record<string, unknown> = {}): Promise<{ id: string; slug: string }> {
  const slug = (overrides.slug as string | undefined) ?? `event-${crypto.randomBytes(4).toString('hex')}`;
  const [row] = await db('events')
    .insert({
      slug,
      title: 'Family Camp',
      location: 'Church Hall, 1 Main St',
      starts_at: defaultEventStart(),
      capacity: 100,
      published: true,
      online_payment: false,
      pass_card_fee: false,
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 12000 }] }),
      ...overrides,
    })
    .returning<Array<{ id: string; slug: string }>>(['id', 'slug']);
  return row as { id: string; slug: string };
}

export async function insertRegistration(
  db: Db,
  cipher: FieldCipher,
  eventId: string,
  overrides: Record<string, unknown> & { email?: string } = {},
): Promise<{ id: string }> {
  const { email = `member-${crypto.randomBytes(3).toString('hex')}@example.org`, ...rest } = overrides;
  const [row] = await db('registrations')
    .insert({
      event_id: eventId,
      status: 'PAID',
      contact_name: 'Sam Member',
      contact_email_enc: cipher.encrypt(email),
      contact_email_hash: cipher.lookupHash('email', email),
      attendees: JSON.stringify([{ name: 'Sam Member', tier: 'adult' }]),
      attendee_count: 1,
      payment_method: 'bank',
      line_items: JSON.stringify([{ label: 'Adult', amount: 12000 }]),
      total_minor: 12000,
      ...rest,
    })
    .returning<Array<{ id: string }>>('id');
  return row as { id: string };
}

export async function insertCheckoutSession(
  db: Db,
  cipher: FieldCipher,
  eventId: string,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string }> {
  const [row] = await db('checkout_sessions')
    .insert({
      event_id: eventId,
      status: 'OPEN',
      expires_at: fromReferenceNow({ minutes: 31 }),
      payload_enc: cipher.encrypt(JSON.stringify({ contact: { name: 'Sam', email: 'sam@example.org' } })),
      net_minor: 12000,
      surcharge_minor: 0,
      provider_session_id: `cs_test_${crypto.randomBytes(8).toString('hex')}`,
      ...overrides,
    })
    .returning<Array<{ id: string }>>('id');
  return row as { id: string };
}

export async function insertPerson(
  db: Db,
  cipher: FieldCipher,
  overrides: Record<string, unknown> & { email?: string } = {},
): Promise<{ id: string }> {
  const { email, ...rest } = overrides;
  const [row] = await db('people')
    .insert({
      first_name: 'Alex',
      last_name: 'Member',
      email_enc: email ? cipher.encrypt(email) : null,
      email_hash: email ? cipher.lookupHash('email', email) : null,
      ...rest,
    })
    .returning<Array<{ id: string }>>('id');
  return row as { id: string };
}

export async function insertUser(
  db: Db,
  cipher: FieldCipher,
  overrides: { email: string; name?: string; role?: 'ADMIN' | 'PASTOR' | 'STAFF' },
): Promise<{ id: string }> {
  const [row] = await db('users')
    .insert({
      name: overrides.name ?? 'Pat Admin',
      email_enc: cipher.encrypt(overrides.email),
      email_hash: cipher.lookupHash('email', overrides.email),
      role: overrides.role ?? 'ADMIN',
    })
    .returning<Array<{ id: string }>>('id');
  return row as { id: string };
}
