import type { AppContext } from '../context.js';
import { loadEventForRoll, loadRoll, type RollAttendee } from './roll.js';

/**
 * Who came, who did not, and who came unregistered. A walk-in (came unregistered) is an attendee of a
 * registration made at the door: by `registrations add --at-door` (which checks them in), or any registration
 * made once the event had started (only the office can add one then). Everyone else registered beforehand: they
 * came when they were checked in at some point (a check-out keeps them as having come; an undo does not).
 */
export interface AttendanceLine {
  name: string;
  tierLabel: string;
  reference: string;
  contactName: string;
  checkedInAt: Date | null;
  checkedInBy: string | null;
  checkedOutAt: Date | null;
  checkedOutBy: string | null;
}

export interface Attendance {
  event: { slug: string; title: string; startsAt: Date };
  came: AttendanceLine[];
  didNotCome: AttendanceLine[];
  walkIns: AttendanceLine[];
}

const line = (a: RollAttendee): AttendanceLine => ({
  name: a.name,
  tierLabel: a.tierLabel,
  reference: a.reference,
  contactName: a.contactName,
  checkedInAt: a.checkedInAt,
  checkedInBy: a.checkedInBy,
  checkedOutAt: a.checkedOutAt,
  checkedOutBy: a.checkedOutBy,
});

export async function attendanceOf(ctx: Pick<AppContext, 'db' | 'cipher' | 'config'>, eventSlug: string): Promise<Attendance> {
  const event = await loadEventForRoll(ctx, { slug: eventSlug });
  const roll = await loadRoll(ctx, event);
  // The report reads by name, not by family as the door's roll does.
  const byName = [...roll.attendees].sort((a, b) => a.search.localeCompare(b.search) || a.key.localeCompare(b.key));
  const walkIn = (a: RollAttendee) => a.walkIn || a.registeredAt.getTime() >= event.startsAt.getTime();
  return {
    event: { slug: event.slug, title: event.title, startsAt: event.startsAt },
    came: byName.filter((a) => !walkIn(a) && a.state !== 'away').map(line),
    didNotCome: byName.filter((a) => !walkIn(a) && a.state === 'away').map(line),
    walkIns: byName.filter(walkIn).map(line),
  };
}
