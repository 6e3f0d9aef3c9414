import type { Knex } from 'knex';
import type { Db } from './connect.js';

export interface DirectEmail {
  registrationId: string;
  /** e.g. "event-reminder", "payment-reminder". */
  kind: string;
  sentAt: Date;
  /** An event or payment reminder's round: its event's reminder_at when it was sent. */
  reminderAt?: Date;
}

/** Records emails sent straight to registrants (one statement for a whole chunk). */
export async function recordDirectEmails(db: Db, emails: DirectEmail[]): Promise<void> {
  if (emails.length === 0) return;
  await db('registration_emails').insert(
    emails.map((e) => ({ registration_id: e.registrationId, kind: e.kind, sent_at: e.sentAt, reminder_at: e.reminderAt ?? null })),
  );
}

/** SQL true while the registration in `registrationIdColumn` has no reminder recorded for the round `reminderAt`. */
export function notRemindedInRound(db: Db, registrationIdColumn: string, reminderAt: Date): Knex.Raw {
  return db.raw('NOT EXISTS (SELECT 1 FROM registration_emails e WHERE e.registration_id = ?? AND e.reminder_at = ?)', [registrationIdColumn, reminderAt]);
}

/** How many live (not cancelled) registrations of the event the round `reminderAt` has already reached. */
export async function countRemindedInRound(db: Db, eventId: string, reminderAt: Date): Promise<number> {
  const row = await db('registrations')
    .where({ event_id: eventId })
    .whereNot('status', 'CANCELLED')
    .whereExists((q) => q.select(db.raw('1')).from('registration_emails as e').whereRaw('e.registration_id = registrations.id').where('e.reminder_at', reminderAt))
    .count<{ n: string | number }>({ n: '*' })
    .first();
  return Number(row?.n ?? 0);
}

export async function listDirectEmails(db: Db, registrationId: string): Promise<Array<{ id: number; kind: string; sentAt: Date }>> {
  const rows = await db('registration_emails')
    .where({ registration_id: registrationId })
    .orderBy('id')
    .select<Array<{ id: number; kind: string; sent_at: Date }>>('id', 'kind', 'sent_at');
  return rows.map((row) => ({ id: Number(row.id), kind: row.kind, sentAt: row.sent_at }));
}
