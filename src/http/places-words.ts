/**
 * What the event page says about the places left (docs/decisions.md, "The event page on a phone"): the count is
 * said beside the event, "Only …" when few are left; the form says once how many people it may name.
 */

/** Few places left: at most this many, whatever the capacity. */
export const FEW_PLACES_LEFT = 10;
/** …or at most this share of the capacity, for a large event (a tenth of 500 is 50). */
export const FEW_PLACES_SHARE = 0.1;

/** At most FEW_PLACES_LEFT places, or at most a tenth of the capacity (rounded down), and not none. */
export function fewPlacesLeft(seatsLeft: number, capacity: number): boolean {
  return seatsLeft > 0 && (seatsLeft <= FEW_PLACES_LEFT || seatsLeft <= Math.floor(capacity * FEW_PLACES_SHARE));
}

const places = (n: number) => `${n} ${n === 1 ? 'place' : 'places'}`;

/** The line beside the event: "Sold out", "Only 3 places left" when few are, else "38 places left". */
export function seatsLine(seatsLeft: number, capacity: number): string {
  if (seatsLeft <= 0) return 'Sold out';
  return fewPlacesLeft(seatsLeft, capacity) ? `Only ${places(seatsLeft)} left` : `${places(seatsLeft)} left`;
}

export interface AttendeeLimitNote {
  text: string;
  /** Said in bold: the places left, not the event's own cap, limit this registration. */
  strong: boolean;
}

/**
 * The one line above the attendee rows that says how many people a registration may name: the event's own cap,
 * or the places left when fewer. With a waiting list the family may name more than are left: the server (or
 * the script, as rows are added) then offers the waiting list for them.
 */
export function attendeeLimitNote(input: { cap: number; placesLeft?: number; waitlist: boolean }): AttendeeLimitNote {
  const { cap, placesLeft, waitlist } = input;
  if (placesLeft === undefined || placesLeft >= cap) {
    return { text: `At most ${cap} ${cap === 1 ? 'person' : 'people'}. Empty rows are ignored.`, strong: false };
  }
  const left = placesLeft === 1 ? 'Only 1 place is left' : `Only ${placesLeft} places are left`;
  if (waitlist) return { text: `${left}. Need more? Name everyone who is coming, and we offer you the waiting list.`, strong: true };
  return { text: placesLeft === 1 ? `${left}, so this registration can name 1 person.` : `${left}, so this registration can name at most ${placesLeft} people.`, strong: true };
}

/** The waiting list's first words: every place taken, or fewer left than the family needs. */
export function waitlistIntro(seatsLeft: number, waiting: number): string {
  if (seatsLeft === 0) {
    const queue = waiting > 0 ? ` and ${waiting} ${waiting === 1 ? 'family is' : 'families are'} waiting` : '';
    return `Every place is taken${queue}. Join the waiting list: when places free up we offer them in order, by email.`;
  }
  return `Need more than ${places(seatsLeft)}? Join the waiting list: when enough places free up we offer them in order, by email.`;
}
