import crypto from 'node:crypto';
import type { Knex } from 'knex';
import type { EventRecord } from '../registrations/event-record.js';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { startEventCheckout } from '../payments/checkout.js';
import { renderNewRegistrationConfirmation } from './confirmations.js';
import { hourlyEmailCapsSql } from '../registrations/email-caps.js';
import { queuedMailRow, type QueuedMailInput } from '../mail/queue.js';
import type { FieldCipher } from '../crypto/field-cipher.js';
import { cardPaymentPossible } from '../payments/links.js';
import { PricingError, priceRegistration, type AttendeeChoice, type PricedRegistration } from '../registrations/pricing.js';
import {
  lockEventForSeats,
  registrationRow,
  publicSeatsLeft,
  publicSeatCountOfLocked,
  publicTierPlacesLeft,
  tierPlacesFree,
  tierShortOfPlaces,
  type LockedEvent,
  type NewRegistration,
  type PaymentMethod,
  type PublicSeatCount,
  type RegistrationContact,
} from '../registrations/registrations.js';
import { assertWithinOffer, lockOpenOffer, markOfferClaimed, type OfferClaim } from '../registrations/waitlist/claim.js';
import type { WaitlistEntryRow } from '../registrations/waitlist/entries.js';
import type { RegistrationAnswers } from '../registrations/answers.js';
import { questionsAsked } from '../registrations/questions.js';
import { EventClosedError, SoldOutError, tierFullError, TierFullError } from '../payments/registration-errors.js';
import { alertUnpaidSeatCap, unpaidStandingAlong, unpaidStandingFrom, UnpaidSeatCapError, type HeldByClient, type UnpaidHolder } from '../payments/unpaid-seat-cap.js';
import { alertUnpaidShareCrossed, unpaidShareCrossed } from '../payments/unpaid-share-alert.js';
import { alertHelpRequested } from '../payments/help-request-alert.js';
import { mailboxKey } from '../canonical-mailbox.js';
import { localDay } from '../local-time.js';
import { CodeRefusedError, codeTerms, findCode, usableCode } from '../registrations/codes.js';
import { assertCodeGuessesLeft, countRefusedCode } from './code-guesses.js';
import { addonRowsOf, takeAddonStock } from '../registrations/addon-stock.js';
import type { AddonPick } from '../registrations/addons.js';
import { scheduleChosen } from '../payments/deposit-checkout.js';
import { insertSchedule, type Schedule } from '../registrations/deposits.js';
import type { PaymentChoice } from '../registrations/balance-terms.js';

/**
 * A registration submitted on the public event page, already validated. Every
 * amount is priced here on the server from these choices; nothing the
 * registrant sends is taken as a price.
 */
export interface RegistrationSubmission {
  contact: RegistrationContact;
  attendees: AttendeeChoice[];
  family: boolean;
  /** Left out only when there is nothing to pay (the form offers no choice then): such a registration must be free. */
  payment?: 'card' | 'bank';
  /** The public form's client (publicClient of its address): its confirmation emails and unpaid places are capped. */
  client?: string;
  /** The client is on one of the church's own networks (CHURCH_NETWORKS): no per-client cap; the per-mailbox caps still apply. */
  fromChurchNetwork?: boolean;
  /** A waiting-list offer being claimed (its link's token, read): its reserved places are the ones taken. */
  waitlistOffer?: OfferClaim;
  /** The answers to the event's questions, already read (registrations/questions.ts); the office's add asks none. */
  answers?: RegistrationAnswers;
  /** The office's `--price-at`: the church-local day (yyyy-MM-dd) whose prices apply; else the day it is made. */
  priceDay?: string;
  /** A code typed on the form (or given by the office): judged, and its use counted, under the event's lock. */
  code?: string;
  /**
   * "We would like to talk about help with the cost" (only on an event that offers it): registered PENDING without a
   * card payment whatever payment was chosen, held without the unpaid-hold release until the office decides.
   */
  helpRequested?: boolean;
  /** The per-registration add-ons chosen (each attendee's are on the attendee); their stock is counted under the event's lock. */
  addons?: AddonPick[];
  /** On an event with a deposit (balance terms): pay the whole amount, the deposit, or the deposit and instalments. */
  choice?: PaymentChoice;
  /**
   * The event and its public places as the form's page read them just before, in one statement. Fewer places than
   * wanted (and no offer holding some): refused on that count, without the event's lock (see registerForEvent).
   */
  seen?: { event: EventRecord; count: PublicSeatCount };
  /** The card fee rate the form's page read with the event just before (a card checkout prices with it). */
  cardFeeRate?: { percent: number; fixed: number };
}

export type RegistrationOutcome =
  | {
      kind: 'registered';
      registrationId: string;
      status: 'PAID' | 'PENDING';
      method: PaymentMethod;
      priced: PricedRegistration;
      /** No confirmation email was queued: its mailbox or client had its confirmations for the hour. */
      confirmationHeldBack?: boolean;
    }
  | { kind: 'checkout'; checkoutId: string; redirectUrl: string };

export { EventClosedError, SoldOutError, TierFullError };

/** The church-local day (yyyy-MM-dd, APP_TIMEZONE) of `now`: the day whose prices a registration made now pays. */
export function priceDayOf(ctx: Pick<AppContext, 'config'>, now: Date): string {
  return localDay(now, ctx.config.regional.timeZone);
}

/** The public form closes when the event starts; the office can still register by hand (walk-ins). */
export class RegistrationClosedError extends AppError {
  constructor() {
    super('registration_closed', 'Registration for this event closed when it started.', { httpStatus: 409 });
    this.name = 'RegistrationClosedError';
  }
}

/** The family asked to talk about help with the cost on an event whose form offers it (elsewhere the field is ignored). */
function helpAsked(event: Pick<EventRecord, 'helpWithCost'>, submission: Pick<RegistrationSubmission, 'helpRequested'>): boolean {
  return event.helpWithCost && submission.helpRequested === true;
}

/** Whether the public may still register: until the event starts. */
export function openForRegistration(event: Pick<EventRecord, 'startsAt'>, now: Date): boolean {
  return event.startsAt.getTime() > now.getTime();
}

/**
 * Registers for an event. Free (net 0) → PAID at once, whatever payment was
 * chosen; bank transfer → PENDING; card → a provider checkout (no
 * registration until the webhook).
 * Card falls back to bank transfer when card payment is not possible for the
 * event (spec section 7). Free and bank registrations lock the event row so
 * capacity is never exceeded.
 */
export async function registerForEvent(
  ctx: AppContext,
  event: EventRecord,
  submission: RegistrationSubmission,
): Promise<RegistrationOutcome> {
  const now = ctx.clock.now();
  if (!openForRegistration(event, now)) throw new RegistrationClosedError();
  assertWithinAttendeeCap(event, submission.attendees.length);
  // Refused on the places the page read just before, one consistent count: a refusal takes nothing, so it needs no
  // lock (and waits behind no registration holding it). One that fits takes its places under the lock, counted again.
  const seenLeft = submission.waitlistOffer ? null : (submission.seen?.count.seatsLeft ?? null);
  if (seenLeft !== null && seenLeft < submission.attendees.length) throw new SoldOutError(Math.max(0, seenLeft), submission.seen);
  // A client that has guessed too many codes is refused any code before it is looked at; each refused code counts.
  const guesser = submission.code !== undefined && !submission.fromChurchNetwork ? submission.client : undefined;
  if (guesser !== undefined) await assertCodeGuessesLeft(ctx.db, guesser, now);
  try {
    return await registerWithCodeJudged(ctx, event, submission, now);
  } catch (error) {
    if (error instanceof CodeRefusedError && guesser !== undefined) await countRefusedCode(ctx.db, guesser, ctx.clock.now());
    throw error;
  }
}

async function registerWithCodeJudged(ctx: AppContext, event: EventRecord, submission: RegistrationSubmission, now: Date): Promise<RegistrationOutcome> {
  // Read here to price the choice of payment; judged, and its use counted, again under the event's lock.
  const code = submission.code !== undefined ? await findCode(ctx.db, event.id, submission.code) : undefined;
  if (submission.code !== undefined && !code) throw new CodeRefusedError('unknown');
  const priced = priceRegistration(
    event.pricing,
    { attendees: submission.attendees, family: submission.family, addons: submission.addons, ...(code ? { code: codeTerms(code) } : {}) },
    { day: priceDayOf(ctx, now) },
  );
  // A family asking to talk about help pays nothing now, even if it chose card: the office decides first.
  const wantsCard = submission.payment === 'card' && !helpAsked(event, submission) && cardPaymentPossible(ctx.config, { online_payment: event.onlinePayment });
  if (!priced.free && wantsCard) {
    // startEventCheckout holds the places (or answers sold_out) under the event's lock, or for a waiting-list
    // offer checks it open and resumes its open checkout; the webhook re-checks under the lock.
    const started = await startEventCheckout(ctx, {
      event,
      contact: submission.contact,
      attendees: submission.attendees,
      family: submission.family,
      waitlistOffer: submission.waitlistOffer,
      answers: submission.answers,
      // The church's network has no per-client cap, on card holds either.
      client: submission.fromChurchNetwork ? undefined : submission.client,
      code: submission.code,
      addons: submission.addons,
      choice: submission.choice,
      cardFeeRate: submission.cardFeeRate,
    });
    return { kind: 'checkout', checkoutId: started.checkoutId, redirectUrl: started.redirectUrl };
  }
  return registerWithoutCard(ctx, event, submission);
}

/**
 * The places this registration may take under the event's lock: through an offer, the places it
 * holds plus any free; from the office, every free place; from the public form, none while anyone
 * waits on the list (publicSeatsLeft). null = unlimited.
 */
function placesAvailable(locked: LockedEvent, offer: WaitlistEntryRow | undefined, office: boolean): number | null {
  if (locked.event.capacity === null) return null;
  if (offer) return locked.event.capacity - locked.seatsTaken + offer.places;
  return office ? locked.seatsLeft : publicSeatsLeft(locked);
}

/**
 * The room of a ticket type with places of its own, as placesAvailable counts the event's: through an offer, the
 * type's free places plus those the offer holds of it; from the office, every free place of it; from the public
 * form, none the waiting list takes (publicTierPlacesLeft). null: the type has no places of its own.
 */
function tierRoom(locked: LockedEvent, offer: WaitlistEntryRow | undefined, office: boolean): (tier: string) => number | null {
  const free = tierPlacesFree(locked);
  return (tier) => {
    if (!free.has(tier)) return null;
    if (offer) return (free.get(tier) ?? 0) + (offer.tier === tier ? offer.places : 0);
    return office ? (free.get(tier) ?? 0) : publicTierPlacesLeft(locked, tier);
  };
}

/** The event's maxAttendeesPerRegistration, checked on the server whatever the form allowed. */
export function assertWithinAttendeeCap(event: Pick<EventRecord, 'maxAttendeesPerRegistration'>, attendees: number): void {
  if (attendees > event.maxAttendeesPerRegistration) {
    throw new PricingError(`at most ${event.maxAttendeesPerRegistration} attendees per registration`, 'attendees');
  }
}

/**
 * How a registration made by hand by the office differs from the public form:
 * the event may be unpublished, the capacity may be exceeded knowingly, the
 * money may already have been received, and the caller writes its own rows
 * (history, payment, alert) in the same transaction.
 */
export interface OfficeRegistrationOptions {
  overCapacity?: boolean;
  /** Received before registering (card: a payment kept without a registration): PAID with this method (a free registration stays "free"). */
  paidWith?: 'bank' | 'cash' | 'card';
  /** Runs in the registration's transaction after the insert; the confirmation is then queued by the caller. */
  within: (trx: Knex.Transaction, registered: RegisteredWithoutCard) => Promise<void>;
}

export interface RegisteredWithoutCard {
  registrationId: string;
  status: 'PAID' | 'PENDING';
  method: PaymentMethod;
  priced: PricedRegistration;
  event: EventRecord;
  /** The seats left after this registration; negative when the office exceeded the capacity. */
  seatsLeftAfter: number | null;
}

/**
 * Free → PAID, else PENDING by bank transfer; the seats are counted under the
 * event's row lock and the price is computed from the locked row. The public
 * form and the office's `registrations add` both come through here. A public
 * registration (with its client) is also held to the event's unpaid places per
 * client under that lock (unpaid-seat-cap.ts); the office's is not.
 * Every registration of the event queues behind that lock, so what does not depend on the seats (the hourly
 * confirmation caps, the confirmation rendered) is done before it; under it only what can change is read (the
 * seats, the offer, the code's uses, the add-on stock, the unpaid places) and the registration, its add-ons
 * and its confirmation are written in one statement.
 */
export async function registerWithoutCard(
  ctx: Pick<AppContext, 'db' | 'clock' | 'cipher' | 'config' | 'logger'>,
  event: EventRecord,
  submission: Omit<RegistrationSubmission, 'payment'> & Partial<Pick<RegistrationSubmission, 'payment'>>,
  office?: OfficeRegistrationOptions,
): Promise<Extract<RegistrationOutcome, { kind: 'registered' }> & RegisteredWithoutCard> {
  const now = ctx.clock.now();
  // Chosen here so that the confirmation naming it is rendered before the lock.
  const registrationId = crypto.randomUUID();
  const pricedOn = submission.priceDay ?? priceDayOf(ctx, now);
  // The church's own network has no per-client cap of confirmations; the mailbox's still applies.
  const confirmationClient = submission.fromChurchNetwork ? undefined : submission.client;
  // Before the transaction: rendering reads, and holds no connection while others take places.
  const early = office ? undefined : await confirmationBeforeLock(ctx.db, ctx, event, submission, { registrationId, pricedOn, client: confirmationClient }, now);
  const mailbox = !office && submission.client !== undefined ? mailboxKey(ctx.cipher, submission.contact.email) : undefined;
  // The public form's unpaid places per connection and per mailbox: counted with the seats under the event's lock, so two
  // posts from one client racing for the last places under the cap get one answer each. The church's own network has no
  // per-client cap; the mailbox's applies to everyone.
  const holders: UnpaidHolder[] | undefined =
    mailbox === undefined || submission.client === undefined
      ? undefined
      : [...(submission.fromChurchNetwork ? [] : [{ kind: 'connection' as const, client: submission.client }]), { kind: 'mailbox', mailbox }];
  const outcome = await ctx.db.transaction(async (trx) => {
    const locked = await lockEventForSeats(trx, event.id, now, holders && unpaidStandingAlong(holders));
    if (!locked || locked.event.deletedAt || (!office && !locked.event.published)) throw new EventClosedError();
    // Checked again on the locked row: the start may have been moved meanwhile.
    if (!office && !openForRegistration(locked.event, now)) throw new RegistrationClosedError();
    const wanted = submission.attendees.length;
    // The offer is judged under the same lock: a claimed, expired or withdrawn one is refused here.
    const offer = submission.waitlistOffer ? await lockOpenOffer(trx, event.id, submission.waitlistOffer, now) : undefined;
    if (offer) assertWithinOffer(offer, wanted);
    const available = placesAvailable(locked, offer, Boolean(office));
    if (available !== null && available < wanted && !office?.overCapacity) throw new SoldOutError(Math.max(0, available), { event: locked.event, count: publicSeatCountOfLocked(locked) });
    // A ticket type with places of its own needs room in them too, counted the same way under the same lock.
    const tierFull = office?.overCapacity ? undefined : tierFullError(tierShortOfPlaces(submission.attendees, tierRoom(locked, offer, Boolean(office))), locked.event.pricing.tiers);
    if (tierFull) throw tierFull;
    // An add-on's stock likewise, the office's too: the bus has its seats whatever the office knows.
    const addonStock = await takeAddonStock(trx, locked.event, submission.attendees, submission.addons, now);
    if (addonStock instanceof Error) throw addonStock;
    // Priced again from the locked row, so a price change committed meanwhile is the one that counts; on the day it
    // is made (the office may name another), and never again afterwards: the amounts are stored with it.
    // A code is judged here, its uses counted live under the event's lock: two families racing for its last use
    // get one answer each. A use is this registration; it comes back when the registration is cancelled.
    const code = submission.code !== undefined ? await usableCode(trx, locked.event, submission.code, { day: pricedOn, attendees: submission.attendees, now }) : undefined;
    const priced = priceRegistration(
      locked.event.pricing,
      { attendees: submission.attendees, family: submission.family, addons: submission.addons, ...(code ? { code: codeTerms(code) } : {}) },
      { day: pricedOn, allowHidden: Boolean(office) },
    );
    const free = priced.free;
    // No payment chosen, and a price set meanwhile: asked, not assumed to be a bank transfer.
    if (!free && !office && submission.payment === undefined) throw new PricingError('Payment: choose card or bank transfer', 'payment');
    // The public form's unpaid places before this registration (what the unpaid_share alert counts), read with the caps'.
    let publicUnpaid: number | undefined;
    if (holders) {
      const standing = unpaidStandingFrom(locked.along, holders);
      publicUnpaid = standing.publicUnpaid;
      for (const [index, holder] of holders.entries()) {
        const held = standing.held[index] as HeldByClient;
        if (held.seats + wanted > locked.event.maxUnpaidSeatsPerClient) {
          const cardOffered = !free && cardPaymentPossible(ctx.config, { online_payment: locked.event.onlinePayment });
          // Returned, not thrown: the alert is committed with this transaction although nothing is registered.
          await alertUnpaidSeatCap(trx, ctx, locked.event, holder, held);
          return new UnpaidSeatCapError(held.seats, locked.event.maxUnpaidSeatsPerClient, cardOffered, free, holder.kind);
        }
      }
    }
    const status = free || office?.paidWith ? 'PAID' : 'PENDING';
    const method: PaymentMethod = free ? 'free' : (office?.paidWith ?? 'bank');
    const helpRequested = !office && !free && helpAsked(locked.event, submission);
    const schedule = status === 'PENDING' ? scheduleChosen(locked.event, submission.choice, priced.total, { attendees: wanted, today: pricedOn }) : undefined;
    const registration: NewRegistration & { id: string } = {
      id: registrationId,
      eventId: event.id,
      status,
      method,
      contact: submission.contact,
      attendees: submission.attendees,
      family: submission.family,
      priced,
      pricedOn,
      codeId: code?.id,
      helpRequested,
      addons: submission.addons,
      clientKey: office ? undefined : submission.client,
      mailboxKey: mailbox,
      // Split plain/sensitive by the questions as the locked row has them.
      ...(submission.answers ? { answers: { questions: questionsAsked(locked.event), values: submission.answers } } : {}),
      now,
    };
    // Rendered before the lock unless the event or the price moved meanwhile (rarely): then here, from the locked row.
    // Counted under the lock, after every refusal: kept only with the registration. (Before the lock, the counters'
    // row locks would queue a client's posts behind each other and hide a missing event lock from the races' tests.)
    const confirmation = office
      ? undefined
      : (early?.renderedFor(locked.event, priced, helpRequested) ??
        (await renderNewRegistrationConfirmation(trx, ctx, confirmationInput(registrationId, submission, locked.event, priced, confirmationClient, helpRequested, schedule), now)));
    // Counted against the hourly caps in the write itself, after every refusal: kept only with the registration.
    const queued = await writeRegistration(
      trx,
      ctx.cipher,
      registration,
      confirmation && { mail: confirmation, caps: hourlyEmailCapsSql(ctx, { mailbox: submission.contact.email, client: confirmationClient }, now) },
    );
    if (confirmation && !queued) ctx.logger.warn({ registrationId }, 'confirmation email not sent: its mailbox or client had its confirmations for the hour');
    // A deposit or instalments chosen: the schedule is written with the registration.
    if (schedule) await insertSchedule(trx, registrationId, schedule);
    const registered: RegisteredWithoutCard = {
      registrationId,
      status,
      method,
      priced,
      event: locked.event,
      seatsLeftAfter: locked.event.capacity === null ? null : locked.event.capacity - locked.seatsTaken - wanted + (offer?.places ?? 0),
    };
    if (offer) await markOfferClaimed(trx, offer, { registrationId, attendees: wanted, actor: office ? 'office' : 'registration form', now });
    if (office) {
      await office.within(trx, registered);
      return { kind: 'registered' as const, ...registered };
    }
    if (helpRequested) await alertHelpRequested(trx, ctx, locked.event, registrationId, submission.contact);
    // Only a registration that keeps its client key is counted among the public form's unpaid places.
    // Read again (with its holders) only when this registration takes them past the share: rarely.
    const unpaidAfter = (publicUnpaid ?? 0) + (status === 'PENDING' ? wanted : 0);
    if (publicUnpaid !== undefined && (status === 'PENDING' || method === 'free') && unpaidShareCrossed(locked.event, unpaidAfter, wanted)) {
      await alertUnpaidShareCrossed(trx, ctx, locked.event, wanted);
    }
    return { kind: 'registered' as const, ...registered, confirmationHeldBack: !queued };
  });
  if (outcome instanceof UnpaidSeatCapError) throw outcome;
  return outcome;
}

function confirmationInput(
  registrationId: string,
  submission: Pick<RegistrationSubmission, 'contact' | 'attendees' | 'answers'>,
  event: EventRecord,
  priced: PricedRegistration,
  client: string | undefined,
  helpRequested: boolean,
  schedule: Schedule | undefined,
): Parameters<typeof renderNewRegistrationConfirmation>[2] {
  return {
    registrationId,
    contact: submission.contact,
    event,
    priced,
    client,
    attendeeNames: submission.attendees.map((attendee) => attendee.name),
    answers: submission.answers,
    helpRequested,
    ...(schedule ? { schedule } : {}),
  };
}

interface EarlyConfirmation {
  /** The confirmation rendered before the lock, if the locked event and the price are the ones it was rendered from. */
  renderedFor: (locked: EventRecord, priced: PricedRegistration, helpRequested: boolean) => QueuedMailInput | undefined;
}

/**
 * Before the event's lock: renders the confirmation from the event as read and the price it would have, so that
 * under the lock it is only counted against the hourly caps and written.
 */
async function confirmationBeforeLock(
  db: Knex,
  ctx: Pick<AppContext, 'config' | 'cipher' | 'logger'>,
  event: EventRecord,
  submission: Omit<RegistrationSubmission, 'payment'>,
  made: { registrationId: string; pricedOn: string; client: string | undefined },
  now: Date,
): Promise<EarlyConfirmation> {
  const code = submission.code !== undefined ? await findCode(db, event.id, submission.code) : undefined;
  let priced: PricedRegistration;
  try {
    priced = priceRegistration(
      event.pricing,
      { attendees: submission.attendees, family: submission.family, addons: submission.addons, ...(code ? { code: codeTerms(code) } : {}) },
      { day: made.pricedOn },
    );
  } catch {
    // Refused again under the lock, or priced there from the locked row.
    return { renderedFor: () => undefined };
  }
  const helpRequested = !priced.free && helpAsked(event, submission);
  const schedule = priced.free ? undefined : scheduleChosen(event, submission.choice, priced.total, { attendees: submission.attendees.length, today: made.pricedOn });
  const mail = await renderNewRegistrationConfirmation(db, ctx, confirmationInput(made.registrationId, submission, event, priced, made.client, helpRequested, schedule), now);
  const seen = JSON.stringify(event);
  const pricedAs = JSON.stringify(priced);
  return {
    renderedFor: (locked, lockedPrice, lockedHelp) =>
      JSON.stringify(locked) === seen && JSON.stringify(lockedPrice) === pricedAs && lockedHelp === helpRequested ? mail : undefined,
  };
}

/**
 * The registration, its add-ons and its confirmation (if any) as one statement (data-modifying CTEs, which all run
 * whether or not they are read), as a paid checkout's completion writes them. The confirmation is counted against
 * the hourly caps in the same statement and queued only within them: whether it was queued.
 */
async function writeRegistration(
  trx: Knex.Transaction,
  cipher: FieldCipher,
  registration: NewRegistration & { id: string },
  confirmation: { mail: QueuedMailInput; caps: ReturnType<typeof hourlyEmailCapsSql> } | undefined,
): Promise<boolean> {
  const addonRows = addonRowsOf(registration.id, registration.attendees, registration.addons, registration.priced, registration.now);
  const writes = [trx('registrations').insert(registrationRow(cipher, registration)), ...(addonRows.length > 0 ? [trx('registration_addons').insert(addonRows)] : [])];
  if (!confirmation) {
    await (writes.length === 1 ? writes[0] : writes.reduce((query, write, index) => query.with(`write_${index}`, write), trx.queryBuilder()).select(trx.raw('1')));
    return false;
  }
  const parts = writes.map((write) => write.toSQL());
  const mail = queuedMailRow(cipher, confirmation.mail, registration.now);
  const columns = Object.keys(mail);
  const { rows } = await trx.raw<{ rows: Array<{ id: string }> }>(
    `WITH ${parts.map((part, index) => `write_${index} AS (${part.sql})`).join(',\n')},
     ${confirmation.caps.ctes}
     INSERT INTO queued_mail (${columns.map(() => '??').join(', ')}) SELECT ${columns.map(() => '?').join(', ')} WHERE ${confirmation.caps.within} RETURNING id`,
    [...parts.flatMap((part) => part.bindings), ...confirmation.caps.bindings, ...columns, ...(Object.values(mail) as Knex.RawBinding[])],
  );
  return rows.length > 0;
}
