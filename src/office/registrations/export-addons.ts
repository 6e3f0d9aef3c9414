import type { Knex } from 'knex';
import type { EventAddon } from '../../registrations/event-pricing.js';

/**
 * The export's add-on columns: one per add-on of the event, headed `addon.<id>`, after the answers. A per-attendee
 * add-on on each attendee's row, a per-registration one on its first attendee's row (like the money). A cell is the
 * options chosen ("M, L") for an add-on with options, else how many ("1"); '' for none.
 */
export async function addonExportCells(
  db: Knex,
  eventId: string,
  addons: readonly Pick<EventAddon, 'id' | 'per' | 'options'>[],
): Promise<{ headers: string[]; cells: (registrationId: string, attendeeIndex: number) => Record<string, string> } | undefined> {
  if (addons.length === 0) return undefined;
  const rows = await db('registration_addons as a')
    .join('registrations as r', 'r.id', 'a.registration_id')
    .where('r.event_id', eventId)
    .orderBy(['a.registration_id', 'a.attendee_index', 'a.addon_id', 'a.option'])
    .select<Array<{ registration_id: string; attendee_index: number | null; addon_id: string; option: string | null }>>('a.registration_id', 'a.attendee_index', 'a.addon_id', 'a.option');
  const chosen = new Map<string, Array<string | null>>();
  for (const row of rows) {
    const key = `${row.registration_id}:${row.attendee_index ?? 0}:${row.addon_id}`;
    chosen.set(key, [...(chosen.get(key) ?? []), row.option]);
  }
  const header = (id: string) => `addon.${id}`;
  return {
    headers: addons.map((addon) => header(addon.id)),
    cells: (registrationId, attendeeIndex) =>
      Object.fromEntries(
        addons.map((addon) => {
          const picks = addon.per === 'registration' && attendeeIndex > 0 ? [] : (chosen.get(`${registrationId}:${attendeeIndex}:${addon.id}`) ?? []);
          const cell = picks.length === 0 ? '' : addon.options ? picks.map((option) => option ?? '').join(', ') : String(picks.length);
          return [header(addon.id), cell];
        }),
      ),
  };
}
