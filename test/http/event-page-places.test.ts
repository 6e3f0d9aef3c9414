import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { attendeeLimitNote, fewPlacesLeft, seatsLine } from '../../src/http/places-words.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { startTestServer, type TestServer } from '../support/http.js';
import { formBody, fullWaitlistEvent, openOffer } from '../registrations/waitlist-support.js';

let tdb: TestDatabase;
let server: TestServer;
const ctx = () => createTestContext({ db: tdb.db });

beforeAll(async () => {
  tdb = await createTestDatabase();
  server = await startTestServer(ctx());
});
afterAll(async () => {
  await server?.close();
  await tdb?.drop();
});
beforeEach(async () => {
  await tdb.db('rate_limits').delete();
});

const PRICING = JSON.stringify({
  tiers: [
    { id: 'adult', label: 'Adult', price: 12000 },
    { id: 'child', label: 'Child', price: 6000 },
  ],
});

/** Handlebars writes "=" in attribute values as &#x3D;, which browsers read as "=". */
const page = async (path: string) => (await (await fetch(`${server.url}${path}`)).text()).replaceAll('&#x3D;', '=');

/** An event with `left` of its `capacity` places left (the rest taken by one registration). */
async function eventWithPlacesLeft(left: number, capacity: number, overrides: Record<string, unknown> = {}) {
  const event = await insertEvent(tdb.db, { capacity, pricing: PRICING, ...overrides });
  if (capacity > left) await insertRegistration(tdb.db, ctx().cipher, event.id, { status: 'PENDING', attendee_count: capacity - left });
  return event;
}

function postForm(slug: string, fields: Record<string, string | string[]>) {
  return fetch(`${server.url}/events/${slug}/register`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: formBody(fields),
  });
}

describe('"Only N places left" is said only when few are left: at most 10, or at most a tenth of the capacity', () => {
  it('the rule at its edges', () => {
    expect(fewPlacesLeft(10, 20)).toBe(true);
    expect(fewPlacesLeft(11, 20)).toBe(false);
    expect(fewPlacesLeft(11, 110)).toBe(true);
    expect(fewPlacesLeft(50, 500)).toBe(true);
    expect(fewPlacesLeft(51, 500)).toBe(false);
    expect(fewPlacesLeft(0, 20)).toBe(false);
    expect(seatsLine(0, 20)).toBe('Sold out');
    expect(seatsLine(1, 20)).toBe('Only 1 place left');
    expect(seatsLine(38, 40)).toBe('38 places left');
  });

  it('the event page says "38 places left" plainly, "Only 3 places left" when few, and "Only 50 places left" of 500', async () => {
    const plenty = await eventWithPlacesLeft(38, 40);
    const plentyPage = await page(`/events/${plenty.slug}`);
    expect(plentyPage).toContain('<strong>38 places left</strong>');
    expect(plentyPage).not.toContain('Only');

    const few = await eventWithPlacesLeft(3, 40);
    expect(await page(`/events/${few.slug}`)).toContain('<strong>Only 3 places left</strong>');

    const large = await eventWithPlacesLeft(50, 500);
    expect(await page(`/events/${large.slug}`)).toContain('<strong>Only 50 places left</strong>');
    const largeMore = await eventWithPlacesLeft(51, 500);
    expect(await page(`/events/${largeMore.slug}`)).toContain('<strong>51 places left</strong>');
  });
});

describe('how many people a registration may name is said once, above the rows', () => {
  const atMost = (html: string) => html.match(/at most \d+ (people|person)/gi) ?? [];

  it('the places left, when fewer than the event allows, replace the event\'s own cap rather than repeat it', async () => {
    const event = await eventWithPlacesLeft(3, 20);
    const html = await page(`/events/${event.slug}`);
    expect(atMost(html)).toEqual(['at most 3 people']);
    expect(html).toMatch(/<legend>Who is coming<\/legend>\s*<p id="attendee-limit"><strong>Only 3 places are left, so this registration can name at most 3 people\.<\/strong><\/p>/);
    expect(html).not.toContain('At most 10');
  });

  it("the event's own cap, when places are plenty", async () => {
    const event = await eventWithPlacesLeft(30, 40, { max_attendees_per_registration: 4 });
    const html = await page(`/events/${event.slug}`);
    expect(atMost(html)).toEqual(['At most 4 people']);
    expect(attendeeLimitNote({ cap: 1, waitlist: false }).text).toBe('At most 1 person. Empty rows are ignored.');
  });
});

describe('the waiting-list form shows only when the event is full, or when the family asks for more places than are left', () => {
  const section = (html: string) => /<section id="waitlist"[^>]*>/.exec(html)?.[0];

  it('with places left it is on the page for the script, hidden; the form offers the event\'s own cap of rows and says the waiting list is there', async () => {
    const { event } = await fullWaitlistEvent(tdb.db, ctx().cipher, 10, { pricing: PRICING }, 7);
    const html = await page(`/events/${event.slug}`);
    expect(section(html)).toBe('<section id="waitlist" aria-labelledby="waitlist-heading" hidden>');
    expect(html.match(/name="attendee_name"/g)).toHaveLength(6);
    expect(html).toContain('data-max="6" data-initial="1" data-places-left="3"');
    expect(html).toContain('Only 3 places are left. Need more? Name everyone who is coming, and we offer you the waiting list.');
    expect(html).not.toContain('id="to-waitlist"');
  });

  it('a sold-out event shows it at once', async () => {
    const { event } = await fullWaitlistEvent(tdb.db, ctx().cipher, 2);
    expect(section(await page(`/events/${event.slug}`))).toBe('<section id="waitlist" aria-labelledby="waitlist-heading">');
  });

  it('a post naming more people than are left is refused with the waiting list shown, filled in from the form for as many places', async () => {
    const { event } = await fullWaitlistEvent(tdb.db, ctx().cipher, 10, { pricing: PRICING }, 7);
    const names = ['Ana Lee', 'Ben Lee', 'Cy Lee', 'Di Lee', 'Ed Lee'];
    const response = await postForm(event.slug, {
      name: 'Jo Lee',
      email: 'jo-lee@example.org',
      mobile: '0400 111 222',
      payment: 'bank',
      attendee_name: [...names, ''],
      attendee_tier: ['adult', 'adult', 'child', 'child', 'child', 'adult'],
    });
    expect(response.status).toBe(409);
    const html = (await response.text()).replaceAll('&#x3D;', '=');
    expect(html).toContain('Sorry, only 3 places are left for this event.');
    expect(section(html)).toBe('<section id="waitlist" aria-labelledby="waitlist-heading">');
    expect(html).toContain('<a class="button outline" id="to-waitlist" href="#waitlist-heading">Join the waiting list instead</a>');
    expect(html).toContain('id="waitlist-name" name="name" value="Jo Lee"');
    expect(html).toContain('id="waitlist-email" name="email" type="email" value="jo-lee@example.org"');
    expect(html).toContain('id="waitlist-mobile" name="mobile" type="tel" value="0400 111 222"');
    expect(html).toMatch(/id="waitlist-places" name="places" type="number" min="1" max="6" value="5"/);
    expect(await tdb.db('registrations').where({ event_id: event.id }).pluck('id')).toHaveLength(7);
  });

  it('an event without a waiting list still caps the rows at the places left and shows no waiting list', async () => {
    const event = await eventWithPlacesLeft(3, 20);
    const html = await page(`/events/${event.slug}`);
    expect(html.match(/name="attendee_name"/g)).toHaveLength(3);
    expect(html).not.toContain('data-places-left');
    expect(html).not.toContain('id="waitlist"');
  });
});

describe("a waiting-list offer's link fills the form in and shows the total at once", () => {
  it('attendee 1 carries the name the family gave on joining, and the total box the price of the places held, without script', async () => {
    const { event, registrations } = await fullWaitlistEvent(tdb.db, ctx().cipher, 3, { pricing: PRICING });
    const token = await openOffer(ctx(), event, registrations, { name: 'Claimer Family', email: 'claimer@example.org' }, 2);
    const html = await page(`/events/${event.slug}?offer=${token}`);
    expect(html).toContain('2 places are held for you from the waiting list until');
    expect(html).toContain('id="name" name="name" value="Claimer Family"');
    expect(html).toContain('id="attendee-name-1" name="attendee_name" value="Claimer Family"');
    expect(html).toContain('id="attendee-name-2" name="attendee_name" value=""');
    expect(html).not.toContain('id="attendee-name-3"');
    // Two places at the first ticket's price, said in the box the script keeps up to date.
    expect(html).toMatch(/<div id="live-total" class="live-total" role="status" data-pricing="[^"]*">/);
    expect(html).toContain('<span id="live-total-label">Total for 2 people</span> <strong id="live-total-amount" data-total-minor="24000">$240.00</strong>');
  });

  it('a page without an offer keeps the total box for the script', async () => {
    const event = await eventWithPlacesLeft(30, 40);
    expect(await page(`/events/${event.slug}`)).toMatch(/<div id="live-total" class="live-total" role="status" data-pricing="[^"]*" hidden>/);
  });
});
