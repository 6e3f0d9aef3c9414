import type { Knex } from 'knex';
import { AppError } from '../errors.js';
import type { EventRecord } from '../registrations/event-record.js';
import {
  lockEventForSeats,
  publicSeatCountOfLocked,
  publicSeatsLeft,
  publicTierPlacesLeft,
  tierPlacesFree,
  tierPlacesOf,
  tierShortOfPlaces,
  type CountedAlong,
  type LockedEvent,
  type TierCounts,
} from '../registrations/registrations.js';
import type { AttendeeChoice } from '../registrations/pricing.js';
import type { WaitlistEntryRow } from '../registrations/waitlist/entries.js';
import { EventClosedError, SoldOutError, tierFullError, type TierFullError } from './registration-errors.js';
import { holdsPlacesSql } from '../registrations/card-checkouts.js';

/**
 * A new card checkout holds its places from the moment the payer is sent to the provider until it is
 * paid, expires or fails, so nobody is charged for a place a bank transfer took meanwhile. So that
 * holding by card is no way to hoard, the open checkouts from one client (clientKey) may hold at most
 * the event's maxUnpaidSeatsPerClient places: a cap of their own, beside the bank-transfer one, so a
 * connection at its bank-transfer cap can still pay by card (and the holds end by themselves when the
 * checkouts expire: no alert).
 */
export class CheckoutHoldCapError extends AppError {
  constructor(held: number, cap: number) {
    super(
      'unpaid_seat_cap',
      `This connection already has ${held} ${held === 1 ? 'place' : 'places'} in card payments not yet finished for this event, ` +
        `and at most ${cap} ${cap === 1 ? 'place' : 'places'} may be held so from one connection. ` +
        'Please finish those payments, or try again when they have expired (half an hour).',
      { httpStatus: 409 },
    );
    this.name = 'CheckoutHoldCapError';
  }
}

/** The places the client's card checkouts hold on the event (open and unexpired), counted with the seats under the event's lock. */
function placesInCheckoutByClientAlong(client: string): CountedAlong {
  return {
    columns: [
      `(SELECT COALESCE(sum(c.places), 0) FROM checkout_sessions c
         WHERE c.event_id = :id AND c.client_key = :client AND ${holdsPlacesSql('c', ':now')}) AS card_held_by_client`,
    ],
    bindings: { client },
  };
}

/** What a new card checkout holds: places of the event, and of each ticket type with places of its own. */
export interface CheckoutHold {
  places: number;
  tierPlaces: TierCounts;
}

/**
 * The places a new card checkout holds, decided under the event's lock: the public count must have
 * them, as a bank transfer's would (the event's, and each capped ticket type's), and the client's open
 * checkouts must stay within the cap. No event places on an event without a capacity, where a hold
 * protects nobody (a capped ticket type's are still held). A refusal is returned, not thrown.
 */
export async function placesForNewCheckout(
  trx: Knex.Transaction,
  event: Pick<EventRecord, 'id'>,
  attendees: readonly AttendeeChoice[],
  client: string | undefined,
  now: Date,
): Promise<CheckoutHold | SoldOutError | TierFullError | CheckoutHoldCapError> {
  const wanted = attendees.length;
  const locked = await lockEventForSeats(trx, event.id, now, client === undefined ? undefined : placesInCheckoutByClientAlong(client));
  if (!locked || locked.event.deletedAt) throw new EventClosedError();
  const tierFull = tierFullError(tierShortOfPlaces(attendees, (tier) => publicTierPlacesLeft(locked, tier)), locked.event.pricing.tiers);
  const tierPlaces = tierPlacesOf(locked.event.pricing, attendees);
  if (locked.event.capacity === null) return tierFull ?? { places: 0, tierPlaces };
  const left = publicSeatsLeft(locked) ?? wanted;
  if (left < wanted) return new SoldOutError(left, { event: locked.event, count: publicSeatCountOfLocked(locked) });
  if (tierFull) return tierFull;
  if (client !== undefined) {
    const held = Number(locked.along?.card_held_by_client ?? 0);
    if (held + wanted > locked.event.maxUnpaidSeatsPerClient) return new CheckoutHoldCapError(held, locked.event.maxUnpaidSeatsPerClient);
  }
  return { places: wanted, tierPlaces };
}

/**
 * A checkout from a waiting-list offer holds no event places (the offer does), and of a capped ticket type only
 * the attendees beyond what the offer holds of it: those need the type's free places now, under the event's lock.
 */
export function tierPlacesForOfferCheckout(
  locked: LockedEvent,
  offer: Pick<WaitlistEntryRow, 'tier' | 'places'>,
  attendees: readonly AttendeeChoice[],
): CheckoutHold | TierFullError {
  const tierPlaces = tierPlacesOf(locked.event.pricing, attendees);
  if (offer.tier && tierPlaces[offer.tier] !== undefined) tierPlaces[offer.tier] = Math.max(0, (tierPlaces[offer.tier] ?? 0) - offer.places);
  const free = tierPlacesFree(locked);
  const beyond = Object.entries(tierPlaces).flatMap(([tier, places]) => Array.from({ length: places }, () => ({ name: '', tier })));
  const tierFull = tierFullError(tierShortOfPlaces(beyond, (tier) => free.get(tier) ?? null), locked.event.pricing.tiers);
  return tierFull ?? { places: 0, tierPlaces: Object.fromEntries(Object.entries(tierPlaces).filter(([, places]) => places > 0)) };
}
