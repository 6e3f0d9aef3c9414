import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { loadChurchIdentity } from '../mail/identity.js';
import { counted } from '../plural.js';
import { eventFromRow, type EventRecord, type EventRow } from '../registrations/event-record.js';
import { publicSeatCount } from '../registrations/registrations.js';
import { eventPath } from './event-view.js';
import type { EventsListPageData, PlacesState } from './templates/events-list-page.js';
import { pageFormat } from './templates/format.js';

/** "Only N places left" from this many places down (N ≤ 10) … */
export const FEW_PLACES = 10;
/** … or once no more than this share of the capacity is left (a large event's last tenth). */
export const FEW_PLACES_SHARE = 0.1;

/**
 * The events the public may register for, soonest first: published, not deleted, not yet started (the form
 * closes at the start, openForRegistration). A draft or a deleted event's page is "not found", so it is not listed.
 */
export async function upcomingPublicEvents(db: Db, now: Date): Promise<EventRecord[]> {
  const rows = await db('events')
    .where({ published: true })
    .whereNull('deleted_at')
    .where('starts_at', '>', now)
    .orderBy([{ column: 'starts_at' }, { column: 'slug' }])
    .select<EventRow[]>('*');
  return rows.map(eventFromRow);
}

/**
 * Whether places are left, in words, from the places the public may take (publicSeatCount, as the event
 * page counts them; null = no capacity limit).
 */
export function placesWording(
  seatsLeft: number | null,
  capacity: number | null,
  waitingList: boolean,
): { text: string; state: PlacesState } {
  if (seatsLeft === null) return { text: 'Places left', state: 'open' };
  if (seatsLeft === 0) return waitingList ? { text: 'Full — join the waiting list', state: 'full' } : { text: 'Full', state: 'full' };
  const few = seatsLeft <= FEW_PLACES || (capacity !== null && seatsLeft <= capacity * FEW_PLACES_SHARE);
  return few ? { text: `Only ${counted(seatsLeft, 'place', 'places')} left`, state: 'few' } : { text: 'Places left', state: 'open' };
}

/** The church's events page (`/` and `/events`): each upcoming event with its time in APP_TIMEZONE, place and places left. */
export async function eventsListPageData(ctx: AppContext): Promise<EventsListPageData & { title: string }> {
  const now = ctx.clock.now();
  const format = pageFormat(ctx.config.regional);
  const events = await upcomingPublicEvents(ctx.db, now);
  const items: EventsListPageData['events'] = [];
  // One count at a time: a church lists a handful of events, and the counts need not hold the pool's connections at once.
  for (const event of events) {
    const count = await publicSeatCount(ctx.db, event, now);
    const places = placesWording(count.seatsLeft, event.capacity, event.waitingList.enabled);
    items.push({
      title: event.title,
      href: eventPath(event.slug),
      when: format.dateTimeSpan(event.startsAt, event.endsAt),
      startsAt: event.startsAt.toISOString(),
      location: event.location ?? undefined,
      places: places.text,
      placesState: places.state,
    });
  }
  const website = items.length === 0 ? (await loadChurchIdentity(ctx.db, ctx.config)).website : undefined;
  return { title: 'Events', events: items, empty: items.length === 0, website };
}
