import { AppError } from '../errors.js';
import type { EventRecord } from '../registrations/event-record.js';
import type { PublicSeatCount } from '../registrations/registrations.js';

/**
 * Why the public form (a registration or a new card checkout) cannot have the places it asks for. `standing`: the
 * event and its places as counted under the lock that refused it, so the form given back needs no second read.
 */
export class SoldOutError extends AppError {
  constructor(
    readonly seatsLeft: number,
    readonly standing?: { event: EventRecord; count: PublicSeatCount },
  ) {
    super(
      'sold_out',
      seatsLeft === 0
        ? 'Sorry, this event is sold out.'
        : `Sorry, only ${seatsLeft} ${seatsLeft === 1 ? 'place is' : 'places are'} left for this event.`,
      { httpStatus: 409 },
    );
    this.name = 'SoldOutError';
  }
}

export class EventClosedError extends AppError {
  constructor() {
    super('event_not_found', 'This event is not open for registration.', { httpStatus: 404 });
    this.name = 'EventClosedError';
  }
}

/** A ticket type with places of its own has fewer left than the registration names of it. */
export class TierFullError extends AppError {
  constructor(
    readonly tier: string,
    readonly label: string,
    readonly placesLeft: number,
  ) {
    super(
      'tier_full',
      placesLeft === 0
        ? `Sorry, every ${label} place is taken.`
        : `Sorry, only ${placesLeft} ${label} ${placesLeft === 1 ? 'place is' : 'places are'} left.`,
      { httpStatus: 409 },
    );
    this.name = 'TierFullError';
  }
}

/** The TierFullError for the first capped ticket type short of places, if any (labels from the event's tiers). */
export function tierFullError(
  short: { tier: string; left: number } | undefined,
  tiers: ReadonlyArray<{ id: string; label: string }>,
): TierFullError | undefined {
  if (!short) return undefined;
  return new TierFullError(short.tier, tiers.find((tier) => tier.id === short.tier)?.label ?? short.tier, short.left);
}
