import type { EventAddon, EventPricing } from './event-pricing.js';

/**
 * Add-ons as a registration chooses them, judged and priced by the event's rules (decisions.md "Add-ons"). Pure, so
 * the page's script checks and prices a basket exactly as the server does; pricing.ts turns the problems into its
 * PricingError and the lines into the order's own lines.
 */

/** One add-on chosen: one unit of it (chosen twice, two units), with its option (a T-shirt's size) when it has options. */
export interface AddonPick {
  addon: string;
  option?: string;
}

export interface AddonProblem {
  message: string;
  /** `attendees[i].addons` or `addons`. */
  field: string;
}

/** An attendee as the add-on rules read it. */
export interface AddonHolder {
  name: string;
  tier: string;
  addons?: readonly AddonPick[];
}

export interface AddonLine {
  label: string;
  amount: number;
  addon: string;
  option?: string;
  /** The attendee's position (0-based); undefined for a per-registration add-on. */
  attendee?: number;
}

/** Between an add-on line's label and whom it is for: "Bus seat — Ruth". */
const FOR_SEPARATOR = ' — ';

export function addonLabel(addon: Pick<EventAddon, 'label'>, option: string | undefined): string {
  return option === undefined ? addon.label : `${addon.label} (${option})`;
}

/** Whether an add-on is offered to an attendee of this ticket type. */
export function addonReachesTier(addon: Pick<EventAddon, 'per' | 'tiers'>, tier: string): boolean {
  return addon.per === 'attendee' && (addon.tiers === undefined || addon.tiers.includes(tier));
}

/** The add-ons with limited stock. */
export function stockedAddons(pricing: Pick<EventPricing, 'addons'> | undefined): Array<EventAddon & { stock: number }> {
  return (pricing?.addons ?? []).filter((addon): addon is EventAddon & { stock: number } => addon.stock !== undefined);
}

/**
 * The first problem with the add-ons one holder chose (an attendee, or the registration when `tier` is undefined):
 * unknown or not offered to it, an option missing or not offered, more than maxPerAttendee, two of one group, a
 * required one (or group) left out (unless `requireRequired` is false: extras added to a registration made already).
 */
export function holderProblem(
  addons: readonly EventAddon[],
  picks: readonly AddonPick[],
  tier: string | undefined,
  who: string,
  field: string,
  requireRequired = true,
): AddonProblem | undefined {
  const byId = new Map(addons.map((addon) => [addon.id, addon]));
  const say = (message: string): AddonProblem => ({ message: `${who}: ${message}`, field });
  const count = new Map<string, number>();
  const groups = new Map<string, string>();
  for (const pick of picks) {
    const addon = byId.get(pick.addon);
    const offered = addon && (tier === undefined ? addon.per === 'registration' : addonReachesTier(addon, tier));
    if (!addon || !offered) return say(`choose one of the extras offered${tier === undefined ? ' with the registration' : ' with this ticket'}`);
    if (addon.options && (pick.option === undefined || !addon.options.includes(pick.option))) return say(`choose ${addon.label}: ${addon.options.join(', ')}`);
    if (!addon.options && pick.option !== undefined) return say(`${addon.label} has no options to choose`);
    const n = (count.get(addon.id) ?? 0) + 1;
    count.set(addon.id, n);
    const most = addon.maxPerAttendee ?? 1;
    if (n > most) return say(`at most ${most} ${addon.label}`);
    if (addon.group !== undefined) {
      const other = groups.get(addon.group);
      if (other !== undefined && other !== addon.id) return say(`choose one of ${groupLabels(addons, addon.group)}, not both`);
      groups.set(addon.group, addon.id);
    }
  }
  if (!requireRequired) return undefined;
  const reached = addons.filter((addon) => (tier === undefined ? addon.per === 'registration' : addonReachesTier(addon, tier)));
  for (const addon of reached.filter((a) => a.required)) {
    if (addon.group === undefined && !count.has(addon.id)) return say(`choose ${addon.label}`);
    if (addon.group !== undefined && !groups.has(addon.group)) return say(`choose one of ${groupLabels(reached, addon.group)}`);
  }
  return undefined;
}

export function groupLabels(addons: readonly EventAddon[], group: string): string {
  return addons.filter((addon) => addon.group === group).map((addon) => addon.label).join(' or ');
}

/** The first problem with a registration's add-ons: each attendee's, then the registration's own. */
export function addonProblem(pricing: Pick<EventPricing, 'addons'>, attendees: readonly AddonHolder[], registrationAddons: readonly AddonPick[] = []): AddonProblem | undefined {
  const addons = pricing.addons ?? [];
  for (const [index, attendee] of attendees.entries()) {
    const problem = holderProblem(addons, attendee.addons ?? [], attendee.tier, `Attendee ${index + 1} extras`, `attendees[${index}].addons`);
    if (problem) return problem;
  }
  return holderProblem(addons, registrationAddons, undefined, 'Extras', 'addons');
}

/** The order's add-on lines, each at its add-on's price: the attendees' in attendee order, then the registration's. Checked first (addonProblem). */
export function addonLines(pricing: Pick<EventPricing, 'addons'>, attendees: readonly AddonHolder[], registrationAddons: readonly AddonPick[] = []): AddonLine[] {
  const byId = new Map((pricing.addons ?? []).map((addon) => [addon.id, addon]));
  const line = (pick: AddonPick, attendee: number | undefined, name: string | undefined): AddonLine[] => {
    const addon = byId.get(pick.addon);
    if (!addon) return [];
    const label = addonLabel(addon, pick.option) + (name === undefined ? '' : `${FOR_SEPARATOR}${name}`);
    return [{ label, amount: addon.price, addon: addon.id, ...(pick.option !== undefined ? { option: pick.option } : {}), ...(attendee !== undefined ? { attendee } : {}) }];
  };
  return [
    ...attendees.flatMap((attendee, index) => (attendee.addons ?? []).flatMap((pick) => line(pick, index, attendee.name))),
    ...registrationAddons.flatMap((pick) => line(pick, undefined, undefined)),
  ];
}

/** Units of each stocked add-on a registration chooses (what its card checkout holds: checkout_sessions.addon_units). */
export function addonUnitsOf(pricing: Pick<EventPricing, 'addons'>, attendees: readonly AddonHolder[], registrationAddons: readonly AddonPick[] = []): Record<string, number> {
  const stocked = new Set(stockedAddons(pricing).map((addon) => addon.id));
  const units: Record<string, number> = {};
  for (const pick of [...attendees.flatMap((attendee) => attendee.addons ?? []), ...registrationAddons]) {
    if (stocked.has(pick.addon)) units[pick.addon] = (units[pick.addon] ?? 0) + 1;
  }
  return units;
}
