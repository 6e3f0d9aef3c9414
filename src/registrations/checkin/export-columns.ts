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
  /** The check-in or check-out shown was timed outside the event's days: said in words; empty when not. */
  checkinFlag: string;
}

export const CHECKIN_EXPORT_COLUMNS: Array<{ key: Exclude<keyof CheckinExportFields, 'checkinFlag'>; header: string }> = [
  { key: 'checkedInAt', header: 'checked_in_at' },
  { key: 'checkedInBy', header: 'checked_in_by' },
  { key: 'checkedOutAt', header: 'checked_out_at' },
  { key: 'checkedOutBy', header: 'checked_out_by' },
];

/**
 * The flag's column comes last, after the answers' columns too, so that the columns a spreadsheet already refers to
 * keep their places.
 */
export const CHECKIN_FLAG_COLUMN = { key: 'checkinFlag', header: 'checkin_flag' } as const;

const NOT_CHECKED_IN: CheckinExportFields = { checkedInAt: '', checkedInBy: '', checkedOutAt: '', checkedOutBy: '', checkinFlag: '' };

interface StateRow {
  registration_id: string;
  attendee_index: number;
  checked_in_at: Date | null;
  checked_in_by: string | null;
  checked_out_at: Date | null;
  checked_out_by: string | null;
  checked_in_outside_event_days: boolean;
  checked_out_outside_event_days: boolean;
}

function flagOf(row: StateRow): string {
  const flagged = [
    ...(row.checked_in_at && row.checked_in_outside_event_days ? ['check-in'] : []),
    ...(row.checked_out_at && row.checked_out_outside_event_days ? ['check-out'] : []),
  ];
  return flagged.length > 0 ? `${flagged.join(' and ')} timed outside the event's days` : '';
}

/** The fields of one attendee, looked up by registration id and attendee index. */
export async function checkinExportFields(db: Db, eventId: string, timeZone: string): Promise<(registrationId: string, attendeeIndex: number) => CheckinExportFields> {
  const rows = await db('attendee_checkins')
    .where({ event_id: eventId })
    .select<StateRow[]>('*');
  const byKey = new Map(
    rows.map((row) => [
      `${row.registration_id}:${row.attendee_index}`,
      {
        checkedInAt: row.checked_in_at ? localMinute(row.checked_in_at, timeZone) : '',
        checkedInBy: row.checked_in_at ? (row.checked_in_by ?? '') : '',
        checkedOutAt: row.checked_out_at ? localMinute(row.checked_out_at, timeZone) : '',
        checkedOutBy: row.checked_out_at ? (row.checked_out_by ?? '') : '',
        checkinFlag: flagOf(row),
      },
    ]),
  );
  return (registrationId, attendeeIndex) => byKey.get(`${registrationId}:${attendeeIndex}`) ?? NOT_CHECKED_IN;
}
