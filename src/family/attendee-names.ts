import { FAMILY_WAIVER_SUFFIX, TICKET_NAME_SEPARATOR } from '../registrations/pricing.js';

type Attendee = { name: string; tier: string };
type Line = { label: string; amount: number; kind?: string };

/**
 * The attendees with their corrected names, and the price lines that carry those names ("Adult — Ruth",
 * "Child — Kim (family waiver)") relabelled to match, so the receipt and the pages say the new name. Each renamed
 * attendee relabels the first line not yet relabelled that names it with its tier; tiers, amounts and the order
 * of lines stay as they were.
 */
export function renameAttendees(
  attendees: readonly Attendee[],
  lines: readonly Line[],
  names: readonly string[],
  tierLabel: (tier: string) => string | undefined,
): { attendees: Attendee[]; lines: Line[]; renamed: number } {
  const relabelled = lines.map((line) => ({ ...line }));
  const taken = new Set<number>();
  let renamed = 0;
  const next = attendees.map((attendee, index) => {
    const name = names[index] ?? attendee.name;
    if (name === attendee.name) return attendee;
    renamed += 1;
    const label = tierLabel(attendee.tier);
    if (label !== undefined) {
      for (const suffix of ['', FAMILY_WAIVER_SUFFIX]) {
        const old = `${label}${TICKET_NAME_SEPARATOR}${attendee.name}${suffix}`;
        const at = relabelled.findIndex((line, i) => !taken.has(i) && line.label === old);
        if (at >= 0) {
          taken.add(at);
          (relabelled[at] as Line).label = `${label}${TICKET_NAME_SEPARATOR}${name}${suffix}`;
          break;
        }
      }
    }
    return { ...attendee, name };
  });
  return { attendees: next, lines: relabelled, renamed };
}
