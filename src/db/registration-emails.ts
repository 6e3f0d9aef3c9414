import type { Db } from './connect.js';

export interface DirectEmail {
  registrationId: string;
  /** e.g. "event-reminder", "payment-reminder". */
  kind: string;
  sentAt: Date;
}

/** Records emails sent straight to registrants (one statement for a whole chunk). */
export async function recordDirectEmails(db: Db, emails: DirectEmail[]): Promise<void> {
  if (emails.length === 0) return;
  await db('registration_emails').insert(emails.map((e) => ({ registration_id: e.registrationId, kind: e.kind, sent_at: e.sentAt })));
}

export async function listDirectEmails(db: Db, registrationId: string): Promise<Array<{ id: number; kind: string; sentAt: Date }>> {
  const rows = await db('registration_emails')
    .where({ registration_id: registrationId })
    .orderBy('id')
    .select<Array<{ id: number; kind: string; sent_at: Date }>>('id', 'kind', 'sent_at');
  return rows.map((row) => ({ id: Number(row.id), kind: row.kind, sentAt: row.sent_at }));
}
