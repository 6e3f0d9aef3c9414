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

/** A path's views are written at most once in this long: the rest of the window's views wait and go in one write. */
export const VIEW_WRITE_WINDOW_MS = 1_000;

export interface RouteViewCounter {
  /** Counts a view; settles when the write that counts it does. */
  count(path: string, now: Date): Promise<void>;
  /** Writes every view still waiting for its window, and waits for the writes under way (a server closing). */
  flush(): Promise<void>;
}

interface Waiting {
  path: string;
  now: Date;
  views: number;
  settled: Array<{ resolve: () => void; reject: (error: unknown) => void }>;
}

/**
 * countRouteView for a server: a path's first view is written at once, and the views of the same path and day that
 * follow within the window go in one write when it ends, instead of one committed write each (a camp's opening sends
 * hundreds of views of one page a minute, all to one row). A crash loses at most one window's views of a page.
 */
export function routeViewCounter(db: Db, windowMs = VIEW_WRITE_WINDOW_MS): RouteViewCounter {
  const waiting = new Map<string, Waiting>();
  const writing = new Map<string, Promise<void>>();
  const timers = new Map<string, NodeJS.Timeout>();
  /** When each key's last write started (performance.now()). */
  const lastWrite = new Map<string, number>();

  const write = (key: string): void => {
    const batch = waiting.get(key);
    if (!batch) return;
    waiting.delete(key);
    const started = performance.now();
    lastWrite.set(key, started);
    if (lastWrite.size > 1_000) for (const [old, at] of lastWrite) if (started - at > windowMs) lastWrite.delete(old);
    const done = countRouteView(db, batch.path, batch.now, batch.views).then(
      () => batch.settled.forEach(({ resolve }) => resolve()),
      (error: unknown) => batch.settled.forEach(({ reject }) => reject(error)),
    );
    writing.set(key, done);
    void done.finally(() => {
      writing.delete(key);
      schedule(key);
    });
  };

  const schedule = (key: string): void => {
    if (!waiting.has(key) || writing.has(key) || timers.has(key)) return;
    const wait = windowMs - (performance.now() - (lastWrite.get(key) ?? Number.NEGATIVE_INFINITY));
    if (wait <= 0) return write(key);
    const timer = setTimeout(() => {
      timers.delete(key);
      write(key);
    }, wait);
    timer.unref();
    timers.set(key, timer);
  };

  return {
    count: (path, now) =>
      new Promise<void>((resolve, reject) => {
        const key = `${now.toISOString().slice(0, 10)} ${path}`;
        const batch = waiting.get(key) ?? { path, now, views: 0, settled: [] };
        batch.views += 1;
        batch.settled.push({ resolve, reject });
        waiting.set(key, batch);
        schedule(key);
      }),
    async flush() {
      for (const [key, timer] of timers) {
        clearTimeout(timer);
        timers.delete(key);
      }
      while (waiting.size > 0 || writing.size > 0) {
        for (const key of waiting.keys()) if (!writing.has(key)) write(key);
        await Promise.allSettled([...writing.values()]);
      }
    },
  };
}
