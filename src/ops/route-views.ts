import type { Db } from '../db/connect.js';

/**
 * Page views as one counter per path template and UTC day (route_view_days):
 * the table grows by pages × days, not by visits, and holds no time of any
 * single visit.
 */
export async function countRouteView(db: Db, path: string, now: Date): Promise<void> {
  await db.raw(
    `INSERT INTO route_view_days (path, day, views) VALUES (?, (?::timestamptz AT TIME ZONE 'UTC')::date, 1)
     ON CONFLICT (path, day) DO UPDATE SET views = route_view_days.views + 1`,
    [path, now],
  );
}
