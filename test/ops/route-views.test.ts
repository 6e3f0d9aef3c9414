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

  it('a server counts views arriving while a write is on its way with one more write, each view counted once, per path and day', async () => {
    await tdb.db('route_view_days').delete();
    const count = routeViewCounter(tdb.db);
    let writes = 0;
    const onQuery = (query: { sql: string }) => {
      if (query.sql.includes('route_view_days')) writes += 1;
    };
    tdb.db.on('query', onQuery);
    try {
      await Promise.all([
        ...Array.from({ length: 30 }, () => count('/events/:slug', new Date('2026-11-22T23:59:59Z'))),
        count('/events/:slug', new Date('2026-11-23T00:00:01Z')),
        count('/setup', new Date('2026-11-22T12:00:00Z')),
      ]);
      await count('/events/:slug', new Date('2026-11-22T23:59:59Z'));
    } finally {
      tdb.db.off('query', onQuery);
    }

    expect(await tdb.db('route_view_days').orderBy(['path', 'day']).select('path', 'day', 'views')).toEqual([
      { path: '/events/:slug', day: '2026-11-22', views: 31 },
      { path: '/events/:slug', day: '2026-11-23', views: 1 },
      { path: '/setup', day: '2026-11-22', views: 1 },
    ]);
    // The first of the 30 at once, the other 29 together, then each of the others: 5 writes, not 33.
    expect(writes).toBe(5);
  });
});
