import type { Knex } from 'knex';
import { eventFromRow, type EventRecord, type EventRow } from './event-record.js';
import { publicSeatCountFromRow, seatCountColumns, type PublicSeatCount, type SeatCountRow } from './registrations.js';
import { parseSettings, type SettingKey, type SettingValue } from '../settings.js';

/** What the public event page shows before it renders: read in one statement. */
export interface PublicEventRead<K extends SettingKey> {
  event: EventRecord;
  count: PublicSeatCount;
  /** The settings asked for, valid values only (getSettings' rule). */
  settings: Partial<{ [P in K]: SettingValue<P> }>;
  /** The event has a code a family could use on `day` (eventHasLiveCodes' rule). */
  liveCodes: boolean;
}

type ReadRow = EventRow & SeatCountRow & { page_settings: Record<string, unknown> | null; page_live_codes: boolean };

/**
 * The published, not deleted event by its slug, its public seat count at `now`, the settings `keys` and whether it
 * has live codes on the church-local `day`: what getEventBySlug, publicSeatCount, getSettings and eventHasLiveCodes
 * read one by one, in one statement (one round trip for a page every family opens, and reopens, when a camp opens).
 * An event with ticket types of limited places reads their counts with a second statement, as publicSeatCount does.
 */
export async function readPublicEvent<K extends SettingKey>(
  db: Knex,
  slug: string,
  options: { now: Date; day: string; settingKeys: readonly K[] },
): Promise<PublicEventRead<K> | undefined> {
  const result = await db.raw<{ rows: ReadRow[] }>(
    `SELECT e.*,
            ${seatCountColumns('e.id', ':now')},
            (SELECT json_object_agg(s.key, s.value) FROM app_settings s WHERE s.key IN (SELECT jsonb_array_elements_text(:keys::jsonb))) AS page_settings,
            EXISTS (SELECT 1 FROM discount_codes d
                     WHERE d.event_id = e.id AND d.disabled_at IS NULL AND (d.valid_until IS NULL OR d.valid_until >= :day)) AS page_live_codes
       FROM events e
      WHERE e.slug = :slug AND e.deleted_at IS NULL AND e.published
      LIMIT 1`,
    { slug, now: options.now, day: options.day, keys: JSON.stringify(options.settingKeys) },
  );
  const row = result.rows[0];
  if (!row) return undefined;
  const event = eventFromRow(row);
  return {
    event,
    count: await publicSeatCountFromRow(db, event, row, options.now),
    settings: parseSettings<K>((row.page_settings ?? {}) as Partial<Record<K, unknown>>),
    liveCodes: row.page_live_codes,
  };
}
