import type { Knex } from 'knex';
import { counted } from '../../plural.js';
import type { EventRecord } from '../event-record.js';
import { publicSeatCount, tierPlacesFree } from '../registrations.js';
import { entryReference } from './entries.js';
import { offersOpen } from './offers.js';
import { planOffers, WAITLIST_SKIP_LIMIT, type QueuedEntry } from './plan.js';

/**
 * Free places on an event with people waiting that the waiting list is not about to take, and why: the
 * office's view of what would otherwise sit unsold without anyone being told.
 */
export interface StrandedPlaces {
  places: number;
  /** Whether the public form sells them (the page shows them). */
  onPublicSale: boolean;
  reason: string;
}

export interface ListStanding {
  /** Places free to anyone at all (capacity less registrations, offers and checkouts); null = no capacity. */
  free: number | null;
  /** Places the next offer pass will offer, in order. */
  toOffer: number;
  stranded?: StrandedPlaces;
}

/** How the event's free places stand against its queue (as planOffers and the public count see them). */
export function listStanding(
  event: EventRecord,
  free: number | null,
  queue: readonly QueuedEntry[],
  now: Date,
  tierFree: ReadonlyMap<string, number> = new Map(),
): ListStanding {
  if (free === null || free <= 0 || queue.length === 0) return { free, toOffer: 0 };
  if (!offersOpen(event, now)) return { free, toOffer: 0, stranded: pausedPlaces(event, free, now) };
  const plan = planOffers(free, queue, tierFree);
  const toOffer = plan.steps.reduce((sum, step) => sum + step.offer.places, 0);
  if (plan.left <= 0) return { free, toOffer };
  if (plan.heldForBlocked > 0 && plan.blockedBy) {
    const blocker = plan.blockedBy;
    const behind = queue.length - queue.indexOf(blocker) - 1;
    return {
      free,
      toOffer,
      stranded: {
        places: plan.heldForBlocked,
        onPublicSale: false,
        reason: `held for ${entryReference(blocker.id)}, which wants ${counted(blocker.places, 'place', 'places')} and has been passed over ${WAITLIST_SKIP_LIMIT} times: the order rule serves it before the ${counted(behind, 'entry', 'entries')} behind it (offer it with \`eventops waitlist offer\` once enough are free, or raise the capacity)`,
      },
    };
  }
  const smallest = Math.min(...queue.filter((entry) => !plan.steps.some((step) => step.offer.id === entry.id)).map((entry) => entry.places));
  return {
    free,
    toOffer,
    stranded: {
      places: plan.left,
      onPublicSale: true,
      reason: `no waiting entry fits them (the smallest wants ${counted(smallest, 'place', 'places')}): on public sale`,
    },
  };
}

function pausedPlaces(event: EventRecord, free: number, now: Date): StrandedPlaces {
  if (!event.waitingList.enabled) return { places: free, onPublicSale: event.published, reason: 'the waiting list is off, so nobody on it is offered places' };
  if (event.startsAt.getTime() <= now.getTime()) return { places: free, onPublicSale: false, reason: 'the event has started: registration and offers have closed' };
  return { places: free, onPublicSale: false, reason: 'the event is not published: no offers are made until it is' };
}

/** The standing of one event's list, read without locking. */
export async function readListStanding(db: Knex, event: EventRecord, now: Date): Promise<ListStanding> {
  const count = await publicSeatCount(db, event, now);
  return listStanding(event, count.free, count.queue, now, tierPlacesFree({ event, tierTaken: count.tierTaken }));
}
