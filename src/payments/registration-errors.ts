import { AppError } from '../errors.js';

/** Why the public form (a registration or a new card checkout) cannot have the places it asks for. */
export class SoldOutError extends AppError {
  constructor(readonly seatsLeft: number) {
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
