import { createEvent, type EventAttributes } from 'ics';
import type { MailAttachment } from './types.js';

/** What an event's calendar entry is made of. */
export interface CalendarEvent {
  id: string;
  title: string;
  location: string | null;
  starts_at: Date;
  /** When the office gave none, the entry lasts ASSUMED_DURATION_HOURS. */
  ends_at: Date | null;
  /**
   * Calendar apps replace an entry they already hold (same UID) only with a higher SEQUENCE
   * (RFC 5546): raised by one with every change of the event, so a reminder re-sent for a
   * moved event replaces the entry instead of being ignored as old news.
   */
  calendar_sequence: number;
}

/** Calendar entries need an end; an event the office gave no end gets this much. */
export const ASSUMED_DURATION_HOURS = 2;

/** The .ics attached to a reminder; `stampedAt` (the run's clock) is its DTSTAMP. */
export function eventCalendarFile(event: CalendarEvent, stampedAt: Date): MailAttachment {
  const start = event.starts_at;
  // ics reads `timestamp` for DTSTAMP (else the system clock), though its types leave it out.
  const attributes: EventAttributes & { timestamp: number } = {
    productId: 'eventops',
    method: 'PUBLISH',
    uid: `${event.id}@eventops`,
    sequence: event.calendar_sequence,
    timestamp: stampedAt.getTime(),
    title: event.title,
    location: event.location ?? undefined,
    start: utcFields(start),
    startInputType: 'utc',
    startOutputType: 'utc',
    ...(event.ends_at === null
      ? { duration: { hours: ASSUMED_DURATION_HOURS } }
      : { end: utcFields(event.ends_at), endInputType: 'utc' as const, endOutputType: 'utc' as const }),
  };
  const { error, value } = createEvent(attributes);
  if (error || !value) throw error ?? new Error('could not build the calendar attachment');
  return { filename: 'event.ics', content: foldCalendarLines(value), contentType: 'text/calendar; method=PUBLISH; charset=utf-8' };
}

function utcFields(instant: Date): [number, number, number, number, number] {
  return [instant.getUTCFullYear(), instant.getUTCMonth() + 1, instant.getUTCDate(), instant.getUTCHours(), instant.getUTCMinutes()];
}

/** RFC 5545 3.1: a content line is at most 75 octets, excluding its line break. */
const MAX_LINE_OCTETS = 75;

/**
 * Refolds an iCalendar text at 75 octets. The ics package folds at 75
 * characters, so a title or place in Cyrillic, Vietnamese or CJK made lines of
 * up to three times the limit, which strict calendar importers refuse or cut.
 * Folds fall between characters, never inside one's UTF-8 bytes.
 */
export function foldCalendarLines(ics: string): string {
  const unfolded = ics.replace(/\r\n[ \t]/g, '');
  return unfolded
    .split('\r\n')
    .map((line) => foldLine(line))
    .join('\r\n');
}

function foldLine(line: string): string {
  const parts: string[] = [];
  let part = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char, 'utf8');
    // Continuation lines start with a space, which counts towards their 75.
    if (octets + size > MAX_LINE_OCTETS) {
      parts.push(part);
      part = ' ';
      octets = 1;
    }
    part += char;
    octets += size;
  }
  parts.push(part);
  return parts.join('\r\n');
}
