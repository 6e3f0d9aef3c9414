import { formatInTimeZone } from 'date-fns-tz';
import { AppError, UsageError } from '../errors.js';
import { ASSUMED_DURATION_HOURS } from '../mail/calendar.js';

/**
 * How long a check-in link works. Without --hours it works until the event is over: its end (or, without one, its
 * start plus the two hours its calendar entry assumes), plus LINK_MARGIN_HOURS for a late finish and the
 * check-outs of the last children collected. With --hours it works that long from its making, and the office is
 * warned when that is over before the event starts (or, for an event with an end, before it ends). Never longer
 * than MOST_LINK_HOURS: a link is a bearer secret that shows the roll's flags, so a leaked one must run out.
 */
export const MOST_LINK_HOURS = 24 * 14;
export const LINK_MARGIN_HOURS = 6;

const HOUR_MS = 3_600_000;

export interface EventTimes {
  slug: string;
  startsAt: Date;
  endsAt: Date | null;
}

export interface LinkLifetime {
  expiresAt: Date;
  /** For the office, on standard error: the link is made all the same. */
  warnings: string[];
}

/** When the event is over for the door: its end, or its start plus the calendar's assumed duration. */
export function eventOverAt(event: Pick<EventTimes, 'startsAt' | 'endsAt'>): Date {
  return event.endsAt ?? new Date(event.startsAt.getTime() + ASSUMED_DURATION_HOURS * HOUR_MS);
}

/** "Sat 14 Mar 2027, 18:00 (America/Chicago)": an instant in the church's time zone, naming it. */
export function zonedMinute(instant: Date, timeZone: string): string {
  return `${formatInTimeZone(instant, timeZone, 'EEE d MMM yyyy, HH:mm')} (${timeZone})`;
}

export function linkLifetime(event: EventTimes, now: Date, hours: number | undefined, timeZone: string): LinkLifetime {
  const when = (instant: Date) => zonedMinute(instant, timeZone);
  if (hours === undefined) return defaultLifetime(event, now, when);
  if (!(hours > 0 && hours <= MOST_LINK_HOURS)) throw new UsageError(`--hours must be more than 0 and at most ${MOST_LINK_HOURS}`);
  const expiresAt = new Date(now.getTime() + hours * HOUR_MS);
  const warnings: string[] = [];
  if (expiresAt.getTime() <= event.startsAt.getTime()) {
    warnings.push(`this link stops working ${when(expiresAt)}, before the event starts ${when(event.startsAt)}: leave out --hours for a link that works until the event is over`);
  } else if (event.endsAt && expiresAt.getTime() < event.endsAt.getTime()) {
    warnings.push(`this link stops working ${when(expiresAt)}, before the event ends ${when(event.endsAt)}: leave out --hours for a link that works until the event is over`);
  }
  return { expiresAt, warnings };
}

function defaultLifetime(event: EventTimes, now: Date, when: (instant: Date) => string): LinkLifetime {
  const over = eventOverAt(event);
  const expiresAt = new Date(over.getTime() + LINK_MARGIN_HOURS * HOUR_MS);
  if (expiresAt.getTime() <= now.getTime()) {
    throw new AppError('event_over', `the event "${event.slug}" is over (it ended ${when(over)}): a link made for it would not work`, {
      suggestion: 'to make one all the same (for check-outs, say), give how long it works: --hours 2',
    });
  }
  if (expiresAt.getTime() - now.getTime() > MOST_LINK_HOURS * HOUR_MS) {
    throw new AppError(
      'link_too_long',
      `a check-in link works at most ${MOST_LINK_HOURS} hours (two weeks), and the event "${event.slug}" is over ${when(over)}, later than that from now`,
      { suggestion: `make the link within two weeks of the event, or give --hours (at most ${MOST_LINK_HOURS}) for one that stops sooner` },
    );
  }
  return { expiresAt, warnings: [] };
}
