import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countRouteView, routeViewCounter } from '../../src/ops/route-views.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('page views', () => {
  it('are kept as one counter per path and UTC day, never one row per view', async () => {
    await countRouteView(tdb.db, '/events/:slug', new Date('2026-11-22T00:00:00Z'));
    await Promise.all(Array.from({ length: 20 }, () => countRouteView(tdb.db, '/events/:slug', new Date('2026-11-22T23:59:59Z'))));
    await countRouteView(tdb.db, '/events/:slug', new Date('2026-11-23T00:00:00Z'));
    await countRouteView(tdb.db, '/setup', new Date('2026-11-22T12:00:00Z'));

    expect(await tdb.db('route_view_days').orderBy(['path', 'day']).select('path', 'day', 'views')).toEqual([
      { path: '/events/:slug', day: '2026-11-22', views: 21 },
      { path: '/events/:slug', day: '2026-11-23', views: 1 },
      { path: '/setup', day: '2026-11-22', views: 1 },
    ]);
  });

  it("a server writes a path's first view at once and the views that follow within the window in one write, each counted once, per path and day", async () => {
    await tdb.db('route_view_days').delete();
    const windowMs = 300;
    const views = routeViewCounter(tdb.db, windowMs);
    const writes: number[] = [];
    const started = performance.now();
    const onQuery = (query: { sql: string }) => {
      if (query.sql.includes('route_view_days')) writes.push(performance.now() - started);
    };
    tdb.db.on('query', onQuery);
    try {
      await Promise.all([
        ...Array.from({ length: 30 }, () => views.count('/events/:slug', new Date('2026-11-22T23:59:59Z'))),
        views.count('/events/:slug', new Date('2026-11-23T00:00:01Z')),
        views.count('/setup', new Date('2026-11-22T12:00:00Z')),
      ]);
      await views.count('/events/:slug', new Date('2026-11-22T23:59:59Z'));
    } finally {
      tdb.db.off('query', onQuery);
    }

    expect(await tdb.db('route_view_days').orderBy(['path', 'day']).select('path', 'day', 'views')).toEqual([
      { path: '/events/:slug', day: '2026-11-22', views: 31 },
      { path: '/events/:slug', day: '2026-11-23', views: 1 },
      { path: '/setup', day: '2026-11-22', views: 1 },
    ]);
    // The first of the 30, the other day's and /setup's at once; the other 29 together a window later; the last view
    // a window after that: 5 writes, not 33.
    expect(writes).toHaveLength(5);
    expect(writes.slice(0, 3).every((at) => at < windowMs)).toBe(true);
    expect(writes[3]).toBeGreaterThanOrEqual(windowMs - 5);
    expect(writes[4]).toBeGreaterThanOrEqual(2 * windowMs - 10);
  });

  it('a server closing writes the views still waiting for their window at once', async () => {
    await tdb.db('route_view_days').delete();
    const views = routeViewCounter(tdb.db, 60_000);
    const counted = [views.count('/events', new Date('2026-11-22T10:00:00Z')), views.count('/events', new Date('2026-11-22T10:00:01Z')), views.count('/events', new Date('2026-11-22T10:00:02Z'))];
    await counted[0];
    // The other two wait for a window of a minute, unless the server closes.
    expect(await tdb.db('route_view_days').select('views')).toEqual([{ views: 1 }]);
    await views.flush();
    await Promise.all(counted);
    expect(await tdb.db('route_view_days').select('views')).toEqual([{ views: 3 }]);
  });
});
