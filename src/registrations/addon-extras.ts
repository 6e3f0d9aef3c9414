import { addonLines, groupLabels, holderProblem, type AddonLine, type AddonPick, type AddonProblem } from './addons.js';
import type { EventAddon, EventPricing } from './event-pricing.js';

/**
 * Extras a family adds to a registration it made already (the manage page's "Add extras"): judged by the add-on
 * rules of registrations/addons.ts for what is added, counting what each holder has already: maxPerAttendee counts
 * the units it holds, and a group's alternative it holds already rules out the others. A required add-on is not
 * asked for again (the registration was judged when it was made). Pure, like addons.ts.
 */

/** One holder of add-ons (an attendee, or the registration when `tier` is undefined): what it has and what it adds. */
export interface ExtrasHolder {
  /** The attendee's name, as the problems name them; the registration's own: "Extras for the registration". */
  name: string;
  tier?: string;
  has: readonly AddonPick[];
  adding: readonly AddonPick[];
}

/** How many more units of `addon` the holder may add: maxPerAttendee less those it has; none once it has another of its group. */
export function extrasRoom(addons: readonly EventAddon[], addon: EventAddon, has: readonly AddonPick[]): number {
  if (heldAlternative(addons, addon, has)) return 0;
  return Math.max(0, (addon.maxPerAttendee ?? 1) - has.filter((pick) => pick.addon === addon.id).length);
}

/** The add-ons offered to a holder: per-attendee ones for its ticket type, or the per-registration ones. */
export function addonsOfferedTo(pricing: Pick<EventPricing, 'addons'>, tier: string | undefined): EventAddon[] {
  return (pricing.addons ?? []).filter((addon) => (tier === undefined ? addon.per === 'registration' : addon.per === 'attendee' && (addon.tiers === undefined || addon.tiers.includes(tier))));
}

/** The first problem with the extras added: each attendee's (by `field` `attendees[i].addons`), then the registration's (`addons`). */
export function extrasProblem(pricing: Pick<EventPricing, 'addons'>, attendees: readonly ExtrasHolder[], registration: ExtrasHolder): AddonProblem | undefined {
  const addons = pricing.addons ?? [];
  const holders = [...attendees.map((holder, index) => ({ holder, field: `attendees[${index}].addons` })), { holder: registration, field: 'addons' }];
  for (const { holder, field } of holders) {
    const problem = holderProblem(addons, holder.adding, holder.tier, holder.name, field, false) ?? countedProblem(addons, holder, field);
    if (problem) return problem;
  }
  return undefined;
}

/** The lines of the extras added, each at its add-on's price now: the attendees' in order, then the registration's. */
export function extrasLines(pricing: Pick<EventPricing, 'addons'>, attendees: readonly ExtrasHolder[], registration: ExtrasHolder): AddonLine[] {
  return addonLines(
    pricing,
    attendees.map((holder) => ({ name: holder.name, tier: holder.tier ?? '', addons: [...holder.adding] })),
    registration.adding,
  );
}

/** What is added beside what the holder has: past maxPerAttendee, or an alternative of a group it holds another of. */
function countedProblem(addons: readonly EventAddon[], holder: ExtrasHolder, field: string): AddonProblem | undefined {
  const say = (message: string): AddonProblem => ({ message: `${holder.name}: ${message}`, field });
  for (const id of new Set(holder.adding.map((pick) => pick.addon))) {
    const addon = addons.find((candidate) => candidate.id === id) as EventAddon;
    const had = holder.has.filter((pick) => pick.addon === id).length;
    const adding = holder.adding.filter((pick) => pick.addon === id).length;
    const other = heldAlternative(addons, addon, holder.has);
    if (other) {
      const label = addons.find((candidate) => candidate.id === other.addon)?.label ?? other.addon;
      return say(`already has ${label}: choose one of ${groupLabels(addons, addon.group as string)}, not both`);
    }
    const most = addon.maxPerAttendee ?? 1;
    if (had + adding > most) return say(`already has ${had} ${addon.label}; at most ${most} in all`);
  }
  return undefined;
}

/** A pick the holder has of another add-on of `addon`'s group, if any. */
function heldAlternative(addons: readonly EventAddon[], addon: EventAddon, has: readonly AddonPick[]): AddonPick | undefined {
  if (addon.group === undefined) return undefined;
  const group = new Set(addons.filter((candidate) => candidate.group === addon.group && candidate.id !== addon.id).map((candidate) => candidate.id));
  return has.find((pick) => group.has(pick.addon));
}
