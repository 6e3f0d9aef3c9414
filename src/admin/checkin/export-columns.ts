import type { Db } from '../../db/connect.js';
import { localMinute } from '../../local-time.js';

/**
 * The check-in columns of `registrations export`, after the others (so a spreadsheet's references to the earlier
 * columns keep their places): when each attendee was checked in and out, in APP_TIMEZONE to the minute, and by
 * which check-in link's label; empty when not.
 */
export interface CheckinExportFields {
  checkedInAt: string;
  checkedInBy: string;
  checkedOutAt: string;
  checkedOutBy: string;
}

export const CHECKIN_EXPORT_COLUMNS: Array<{ key: keyof CheckinExportFields; header: string }> = [
  { key: 'checkedInAt', header: 'checked_in_at' },
  { key: 'checkedInBy', header: 'checked_in_by' },
  { key: 'checkedOutAt', header: 'checked_out_at' },
  { key: 'checkedOutBy', header: 'checked_out_by' },
];

const NOT_CHECKED_IN: CheckinExportFields = { checkedInAt: '', checkedInBy: '', checkedOutAt: '', checkedOutBy: '' };

/** The fields of one attendee, looked up by registration id and attendee index. */
export async function checkinExportFields(db: Db, eventId: string, timeZone: string): Promise<(registrationId: string, attendeeIndex: number) => CheckinExportFields> {
  const rows = await db('attendee_checkins')
    .where({ event_id: eventId })
    .select<Array<{ registration_id: string; attendee_index: number; checked_in_at: Date | null; checked_in_by: string | null; checked_out_at: Date | null; checked_out_by: string | null }>>('*');
  const byKey = new Map(
    rows.map((row) => [
      `${row.registration_id}:${row.attendee_index}`,
      {
        checkedInAt: row.checked_in_at ? localMinute(row.checked_in_at, timeZone) : '',
        checkedInBy: row.checked_in_at ? (row.checked_in_by ?? '') : '',
        checkedOutAt: row.checked_out_at ? localMinute(row.checked_out_at, timeZone) : '',
        checkedOutBy: row.checked_out_at ? (row.checked_out_by ?? '') : '',
      },
    ]),
  );
  return (registrationId, attendeeIndex) => byKey.get(`${registrationId}:${attendeeIndex}`) ?? NOT_CHECKED_IN;
}
