import { UsageError } from '../../errors.js';
import type { AddonPick } from '../../registrations/addons.js';
import type { EventPricing } from '../../registrations/event-pricing.js';
import type { AttendeeChoice } from '../../registrations/pricing.js';

/**
 * The office's `registrations add --addon ATTENDEE:ADDON[=OPTION]` (repeatable): ATTENDEE is the attendee's number
 * in the order of the --attendee options (1 for the first) or their name as given there (case does not matter);
 * empty (`--addon :lodge`) for a per-registration add-on. OPTION is one of the add-on's options (`1:tshirt=M`).
 * Each --addon is one unit; what may be chosen is then judged by pricing, as on the form.
 */
export function withOfficeAddons(
  pricing: Pick<EventPricing, 'addons'>,
  attendees: readonly AttendeeChoice[],
  values: readonly string[],
): { attendees: AttendeeChoice[]; addons: AddonPick[] } {
  const known = new Set((pricing.addons ?? []).map((addon) => addon.id));
  const perAttendee = attendees.map(() => [] as AddonPick[]);
  const registration: AddonPick[] = [];
  for (const value of values) {
    const colon = value.indexOf(':');
    if (colon < 0) throw new UsageError(`--addon "${value}" must be ATTENDEE:ADDON, e.g. 1:bus, "Sam Smith:tshirt=M" or :lodge`);
    const who = value.slice(0, colon).trim();
    const rest = value.slice(colon + 1);
    const equals = rest.indexOf('=');
    const id = (equals < 0 ? rest : rest.slice(0, equals)).trim();
    const option = equals < 0 ? undefined : rest.slice(equals + 1).trim();
    if (!known.has(id)) {
      const ids = [...known];
      throw new UsageError(`--addon "${value}": the event has no add-on "${id}"`, ids.length > 0 ? `its add-ons: ${ids.join(', ')}` : 'the event has no add-ons');
    }
    const pick: AddonPick = { addon: id, ...(option !== undefined && option !== '' ? { option } : {}) };
    if (who === '') {
      registration.push(pick);
      continue;
    }
    (perAttendee[attendeeIndex(attendees, who, value)] as AddonPick[]).push(pick);
  }
  return {
    attendees: attendees.map((attendee, index) => {
      const picks = perAttendee[index] as AddonPick[];
      return picks.length > 0 ? { ...attendee, addons: picks } : attendee;
    }),
    addons: registration,
  };
}

function attendeeIndex(attendees: readonly AttendeeChoice[], who: string, value: string): number {
  if (/^\d+$/.test(who)) {
    const n = Number(who);
    if (n < 1 || n > attendees.length) throw new UsageError(`--addon "${value}": there is no attendee ${n} (attendees are numbered 1 to ${attendees.length} in the order of --attendee)`);
    return n - 1;
  }
  const matches = attendees.flatMap((attendee, index) => (attendee.name.toLowerCase() === who.toLowerCase() ? [index] : []));
  if (matches.length === 0) throw new UsageError(`--addon "${value}": no --attendee is named "${who}"`, 'name the attendee as in --attendee, or give their number (1 for the first)');
  if (matches.length > 1) throw new UsageError(`--addon "${value}": ${matches.length} attendees are named "${who}"`, 'give the attendee\'s number instead (1 for the first)');
  return matches[0] as number;
}
