import type { Knex } from 'knex';
import { addonsOfRegistration } from './addon-stock.js';
import { addonLabel } from './addons.js';
import type { EventAddon } from './event-pricing.js';

/** A registration's add-on as the office and the family read it: for whom, what, and the price it was made at. */
export interface AddonEntry {
  /** The attendee's name; null for a per-registration add-on. */
  attendee: string | null;
  /** 1-based, as `registrations add --addon` numbers them; null for a per-registration add-on. */
  attendeeNumber: number | null;
  addon: string;
  /** "T-shirt (M)": the add-on's label as the event names it now, with its option. */
  label: string;
  option: string | null;
  priceMinor: number;
}

export async function registrationAddonEntries(
  db: Knex | Knex.Transaction,
  registrationId: string,
  pricing: { addons?: ReadonlyArray<Pick<EventAddon, 'id' | 'label'>> },
  attendees: ReadonlyArray<{ name: string }>,
): Promise<AddonEntry[]> {
  const labels = new Map((pricing.addons ?? []).map((addon) => [addon.id, addon.label]));
  return (await addonsOfRegistration(db, registrationId)).map((row) => ({
    attendee: row.attendee_index === null ? null : (attendees[row.attendee_index]?.name ?? `attendee ${row.attendee_index + 1}`),
    attendeeNumber: row.attendee_index === null ? null : row.attendee_index + 1,
    addon: row.addon_id,
    label: addonLabel({ label: labels.get(row.addon_id) ?? row.addon_id }, row.option ?? undefined),
    option: row.option,
    priceMinor: row.price_minor,
  }));
}

/** "Ruth: Bus seat, T-shirt (M)" per attendee, then "Registration: Lodge room": one line each, for emails and the roll. */
export function addonSummaryLines(entries: readonly AddonEntry[]): string[] {
  const byWhom = new Map<string, string[]>();
  for (const entry of entries) {
    const whom = entry.attendee ?? 'Registration';
    byWhom.set(whom, [...(byWhom.get(whom) ?? []), entry.label]);
  }
  return [...byWhom].map(([whom, labels]) => `${whom}: ${labels.join(', ')}`);
}

/**
 * The add-ons of every registration of an event, by `<registration id>:<attendee index>` (a per-registration one on
 * the first attendee), as labels: the printed roll's "Extras" flag (who gets on the bus, whose T-shirt is which size).
 */
export async function eventAddonLabels(
  db: Knex | Knex.Transaction,
  eventId: string,
  pricing: { addons?: ReadonlyArray<Pick<EventAddon, 'id' | 'label'>> },
): Promise<Map<string, string[]>> {
  if ((pricing.addons ?? []).length === 0) return new Map();
  const labels = new Map((pricing.addons ?? []).map((addon) => [addon.id, addon.label]));
  const rows = await db('registration_addons as a')
    .join('registrations as r', 'r.id', 'a.registration_id')
    .where('r.event_id', eventId)
    .orderBy(['a.registration_id', 'a.attendee_index', 'a.addon_id', 'a.option'])
    .select<Array<{ registration_id: string; attendee_index: number | null; addon_id: string; option: string | null }>>('a.registration_id', 'a.attendee_index', 'a.addon_id', 'a.option');
  const byKey = new Map<string, string[]>();
  for (const row of rows) {
    const key = `${row.registration_id}:${row.attendee_index ?? 0}`;
    byKey.set(key, [...(byKey.get(key) ?? []), addonLabel({ label: labels.get(row.addon_id) ?? row.addon_id }, row.option ?? undefined)]);
  }
  return byKey;
}
