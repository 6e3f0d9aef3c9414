import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FEW_PLACES, placesWording } from '../../src/http/events-list-view.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { defaultEventStart, fromReferenceNow } from '../support/test-now.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db.raw('TRUNCATE events, route_view_days CASCADE');
});

const cipher = () => createTestContext({ db: tdb.db }).cipher;

async function withServer<T>(env: Record<string, string | undefined>, run: (server: TestServer) => Promise<T>): Promise<T> {
  const server = await startTestServer(createTestContext({ db: tdb.db, env }));
  try {
    return await run(server);
  } finally {
    await server.close();
  }
}

async function getPage(server: TestServer, path: string) {
  const response = await fetch(`${server.url}${path}`, { redirect: 'manual' });
  return { status: response.status, headers: response.headers, html: (await response.text()).replaceAll('&#x3D;', '=') };
}

/** The titles the page lists, in its order. */
const listedTitles = (html: string) => [...html.matchAll(/<a class="event-link" href="[^"]*"><bdi>([^<]*)<\/bdi><\/a>/g)].map((m) => m[1]);

/** The list entry of one event: from its link to the end of its card. */
function entryOf(html: string, slug: string): string {
  const start = html.indexOf(`href="/events/${slug}"`);
  expect(start, slug).toBeGreaterThan(-1);
  return html.slice(start, html.indexOf('</li>', start));
}

/** `taken` places held by PAID registrations of one attendee each. */
async function takePlaces(eventId: string, taken: number) {
  for (let i = 0; i < taken; i++) await insertRegistration(tdb.db, cipher(), eventId, { status: 'PAID', attendee_count: 1 });
}

describe('the events page at / and /events', () => {
  it('lists only published events that have not started, soonest first, each linking to its page; drafts, deleted and past events are left out', async () => {
    await insertEvent(tdb.db, { slug: 'later', title: 'Carols by Candlelight', starts_at: fromReferenceNow({ days: 30 }) });
    await insertEvent(tdb.db, { slug: 'sooner', title: 'Working Bee', starts_at: fromReferenceNow({ days: 3 }) });
    await insertEvent(tdb.db, { slug: 'middle', title: 'Family Camp', starts_at: defaultEventStart(), location: 'Lake Macquarie Camp' });
    await insertEvent(tdb.db, { slug: 'draft', title: 'Draft Retreat', published: false });
    await insertEvent(tdb.db, { slug: 'deleted', title: 'Deleted Picnic', deleted_at: fromReferenceNow({ days: -1 }) });
    await insertEvent(tdb.db, { slug: 'past', title: 'Last Week Dinner', starts_at: fromReferenceNow({ days: -7 }) });
    await insertEvent(tdb.db, { slug: 'started', title: 'Started An Hour Ago', starts_at: fromReferenceNow({ hours: -1 }), ends_at: fromReferenceNow({ hours: 5 }) });

    await withServer({}, async (server) => {
      const { status, html, headers } = await getPage(server, '/');
      expect(status).toBe(200);
      expect(headers.get('content-type')).toContain('text/html');
      expect(html).toContain('<h1>Upcoming events</h1>');
      expect(listedTitles(html)).toEqual(['Working Bee', 'Family Camp', 'Carols by Candlelight']);
      for (const hidden of ['Draft Retreat', 'Deleted Picnic', 'Last Week Dinner', 'Started An Hour Ago']) expect(html).not.toContain(hidden);
      const camp = entryOf(html, 'middle');
      // The start in APP_TIMEZONE (Sydney, AEDT), written as the event page writes it.
      expect(camp).toMatch(/Saturday,? 5 December 2026 at 7:00\spm AEDT/);
      expect(camp).toContain(`<time datetime="${defaultEventStart().toISOString()}">`);
      expect(camp).toContain('Lake Macquarie Camp');
      expect(html).not.toContain('No upcoming events');
      // The page the link names is the event's page.
      expect((await getPage(server, '/events/middle')).html).toContain('<h1><bdi>Family Camp</bdi></h1>');
    });
  });

  it('/events is the same page as /, and each address counts its own views (HEAD is no view)', async () => {
    await insertEvent(tdb.db, { slug: 'camp', title: 'Family Camp' });
    await withServer({}, async (server) => {
      const root = await getPage(server, '/');
      const events = await getPage(server, '/events');
      expect(events.status).toBe(200);
      expect(listedTitles(events.html)).toEqual(['Family Camp']);
      // The CSP nonces differ per response; the rest is the same page.
      const withoutNonces = (html: string) => html.replace(/nonce="[^"]*"/g, 'nonce=""');
      expect(withoutNonces(events.html)).toBe(withoutNonces(root.html));
      expect((await fetch(`${server.url}/events`, { method: 'HEAD' })).status).toBe(200);
    });
    expect(await tdb.db('route_view_days').orderBy('path').select('path', 'views')).toEqual([
      { path: '/', views: 1 },
      { path: '/events', views: 1 },
    ]);
  });

  it('carries the security headers and a CSP nonce on its style, like the other public pages', async () => {
    await withServer({}, async (server) => {
      const { html, headers } = await getPage(server, '/events');
      const csp = headers.get('content-security-policy') ?? '';
      const nonce = /<style nonce="([^"]+)">/.exec(html)?.[1];
      expect(nonce).toBeTruthy();
      expect(csp).toContain(`'nonce-${nonce}'`);
      expect(headers.get('x-content-type-options')).toBe('nosniff');
    });
  });

  it('with nothing upcoming it says so kindly, and offers the church website when there is one', async () => {
    await insertEvent(tdb.db, { slug: 'past', title: 'Last Week Dinner', starts_at: fromReferenceNow({ days: -7 }) });
    await withServer({}, async (server) => {
      const { status, html } = await getPage(server, '/');
      expect(status).toBe(200);
      expect(html).toContain('No upcoming events');
      expect(html).toContain('Please check back soon.');
      expect(html).not.toContain('Visit our website');
      expect(html).not.toContain('Not found');
    });
    await withServer({ CHURCH_WEBSITE: 'https://grace.example.org' }, async (server) => {
      expect((await getPage(server, '/events')).html).toContain('<a class="button" href="https://grace.example.org">Visit our website</a>');
    });
  });

  it('says whether places are left: plenty, only a few (10 or fewer, or a tenth of the capacity), full with a waiting list to join, or full', async () => {
    await insertEvent(tdb.db, { slug: 'unlimited', capacity: null });
    const plenty = await insertEvent(tdb.db, { slug: 'plenty', capacity: 100 });
    await takePlaces(plenty.id, 5);
    const few = await insertEvent(tdb.db, { slug: 'few', capacity: 100 });
    await takePlaces(few.id, 92);
    const one = await insertEvent(tdb.db, { slug: 'one', capacity: 3 });
    await takePlaces(one.id, 2);
    const tenth = await insertEvent(tdb.db, { slug: 'tenth', capacity: 500 });
    await insertRegistration(tdb.db, cipher(), tenth.id, { status: 'PAID', attendee_count: 450 });
    const full = await insertEvent(tdb.db, { slug: 'full', capacity: 2 });
    await takePlaces(full.id, 2);
    const waitlist = await insertEvent(tdb.db, { slug: 'waitlist', capacity: 2, waitlist_enabled: true });
    await takePlaces(waitlist.id, 2);

    await withServer({}, async (server) => {
      const { html } = await getPage(server, '/');
      const places = (slug: string) => /<p class="places places-(\w+)">([^<]*)<\/p>/.exec(entryOf(html, slug))?.slice(1);
      expect(places('unlimited')).toEqual(['open', 'Places left']);
      expect(places('plenty')).toEqual(['open', 'Places left']);
      expect(places('few')).toEqual(['few', 'Only 8 places left']);
      expect(places('one')).toEqual(['few', 'Only 1 place left']);
      expect(places('tenth')).toEqual(['few', 'Only 50 places left']);
      expect(places('full')).toEqual(['full', 'Full']);
      expect(places('waitlist')).toEqual(['full', 'Full — join the waiting list']);
    });
  });

  it('counts places as the event page does: a card checkout in progress holds its places on both', async () => {
    const event = await insertEvent(tdb.db, { slug: 'held', capacity: 10 });
    await takePlaces(event.id, 3);
    await insertCheckoutSession(tdb.db, cipher(), event.id, { places: 2 });
    await withServer({}, async (server) => {
      expect(entryOf((await getPage(server, '/')).html, 'held')).toContain('Only 5 places left');
      expect((await getPage(server, '/events/held')).html).toContain('5 places left');
    });
  });

  it('the wording thresholds: more than 10 places and more than a tenth of the capacity is "Places left"', () => {
    expect(placesWording(FEW_PLACES + 1, 100, false).text).toBe('Places left');
    expect(placesWording(FEW_PLACES, 100, false).text).toBe('Only 10 places left');
    expect(placesWording(51, 500, false).text).toBe('Places left');
    expect(placesWording(50, 500, true).text).toBe('Only 50 places left');
    expect(placesWording(0, 500, true)).toEqual({ text: 'Full — join the waiting list', state: 'full' });
    expect(placesWording(null, null, true)).toEqual({ text: 'Places left', state: 'open' });
  });
});
