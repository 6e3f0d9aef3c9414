import type { AppContext } from '../../context.js';
import { counted } from '../../plural.js';
import { checkInWalkIn } from './records.js';

/** `registrations add --at-door`: the new registration's attendees checked in as walk-ins, by the office user. */
export async function checkInAtDoor(ctx: Pick<AppContext, 'db' | 'clock'>, registrationId: string, actor: string): Promise<string> {
  const row = await ctx.db('registrations').where({ id: registrationId }).first<{ event_id: string; attendee_count: number }>('event_id', 'attendee_count');
  await checkInWalkIn(ctx.db, { eventId: row.event_id, registrationId, attendees: row.attendee_count, label: `at the door (${actor})`, now: ctx.clock.now() });
  return `checked in ${counted(row.attendee_count, 'attendee', 'attendees')} at the door`;
}
