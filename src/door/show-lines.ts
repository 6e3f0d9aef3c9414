import type { CheckinLogEntry } from '../registrations/checkin/records.js';

const WORDS: Record<CheckinLogEntry['action'], string> = { check_in: 'checked in', undo: 'check-in undone', check_out: 'checked out' };

/** Said after a tap whose time fell outside the event's days (registrations/checkin/event-days.ts). */
export const OUTSIDE_EVENT_DAYS = "[flag: timed outside the event's days]";

/** The "Check-in:" part of `registrations show`: every check-in, undo and check-out, with its time and the link's label. */
export function checkinLines(detail: { attendees: Array<{ name: string }>; checkins: CheckinLogEntry[] }, minute: (date: Date) => string): string[] {
  return [
    'Check-in:',
    ...(detail.checkins.length === 0
      ? ['  none']
      : detail.checkins.map(
          (entry) =>
            `  ${minute(entry.at)} ${detail.attendees[entry.attendeeIndex]?.name ?? `attendee ${entry.attendeeIndex + 1}`} ${WORDS[entry.action]} (${entry.label})` +
            (entry.outsideEventDays ? ` ${OUTSIDE_EVENT_DAYS}` : ''),
        )),
  ];
}
