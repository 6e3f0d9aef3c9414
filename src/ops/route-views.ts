import type { Db } from '../db/connect.js';

/**
 * Page views as one counter per path template and UTC day (route_view_days):
 * the table grows by pages × days, not by visits, and holds no time of any
 * single visit.
 */
export async function countRouteView(db: Db, path: string, now: Date, views = 1): Promise<void> {
  await db.raw(
    `INSERT INTO route_view_days (path, day, views) VALUES (?, (?::timestamptz AT TIME ZONE 'UTC')::date, ?)
     ON CONFLICT (path, day) DO UPDATE SET views = route_view_days.views + EXCLUDED.views`,
    [path, now, views],
  );
}

/**
 * countRouteView for a server: while a counter's write is on its way, the views of the same path and day that
 * arrive meanwhile wait and are added by one write after it, instead of one write each queueing on the counter's
 * row lock (a camp's opening sends hundreds of views of one page a minute, all to one row). A view alone is written
 * at once, as before. Each view's promise settles when the write that counts it does.
 */
export function routeViewCounter(db: Db): (path: string, now: Date) => Promise<void> {
  const waiting = new Map<string, { now: Date; views: number; settled: Array<{ resolve: () => void; reject: (error: unknown) => void }> }>();
  const writing = new Set<string>();

  const write = (key: string, path: string): void => {
    const batch = waiting.get(key);
    if (!batch) {
      writing.delete(key);
      return;
    }
    waiting.delete(key);
    writing.add(key);
    countRouteView(db, path, batch.now, batch.views).then(
      () => batch.settled.forEach(({ resolve }) => resolve()),
      (error: unknown) => batch.settled.forEach(({ reject }) => reject(error)),
    ).finally(() => write(key, path));
  };

  return (path, now) =>
    new Promise<void>((resolve, reject) => {
      const key = `${now.toISOString().slice(0, 10)} ${path}`;
      const batch = waiting.get(key) ?? { now, views: 0, settled: [] };
      batch.views += 1;
      batch.settled.push({ resolve, reject });
      waiting.set(key, batch);
      if (!writing.has(key)) write(key, path);
    });
}
