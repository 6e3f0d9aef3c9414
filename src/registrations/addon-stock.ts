import type { Knex } from 'knex';
import { AppError } from '../errors.js';
import type { EventPricing } from './event-pricing.js';
import type { AttendeeChoice, PricedRegistration } from './pricing.js';
import { addonUnitsOf, stockedAddons, type AddonPick } from './addons.js';
import { holdsPlacesSql } from './card-checkouts.js';

/**
 * The add-ons a registration holds (registration_addons) and the live count of each add-on's stock. Stock is
 * counted as places are, under the event's lock (lockEventForSeats): units chosen by PENDING and PAID
 * registrations plus the units open, unexpired card checkouts hold (checkout_sessions.addon_units). A cancelled,
 * expired, released, refunded or disputed registration gives its units back by its state alone, exactly once.
 */

/** Units per add-on id. */
export type AddonUnits = Record<string, number>;

/** A stocked add-on has fewer units left than a registration chooses of it. */
export class AddonSoldOutError extends AppError {
  constructor(
    readonly addon: string,
    readonly label: string,
    readonly left: number,
    readonly wanted: number,
  ) {
    super(
      'addon_sold_out',
      left === 0 ? `Sorry, ${label} is sold out. Choose without it.` : `Sorry, only ${left} ${label} ${left === 1 ? 'is' : 'are'} left (you chose ${wanted}).`,
      { httpStatus: 409 },
    );
    this.name = 'AddonSoldOutError';
  }
}

export interface AddonStockCount {
  /** Units taken: PENDING and PAID registrations' plus open checkouts' holds. */
  taken: AddonUnits;
  /** Of `taken`, what open, unexpired card checkouts hold. */
  inCheckout: AddonUnits;
}

/** The units of each stocked add-on taken on the event at `now`: one statement. Under the event's lock it cannot change until commit. */
export async function countAddonStock(db: Knex | Knex.Transaction, eventId: string, now: Date): Promise<AddonStockCount> {
  const result = await db.raw<{ rows: Array<{ source: string; addon: string; units: number }> }>(
    `SELECT 'registered' AS source, a.addon_id AS addon, count(*)::int AS units
       FROM registration_addons a JOIN registrations r ON r.id = a.registration_id
      WHERE r.event_id = :id AND r.status IN ('PENDING','PAID') GROUP BY 2
     UNION ALL
     SELECT 'checkout', u.key, sum(u.value::int)::int
       FROM checkout_sessions c CROSS JOIN jsonb_each_text(c.addon_units) u
      WHERE c.event_id = :id AND ${holdsPlacesSql('c', ':now')} GROUP BY 2`,
    { id: eventId, now },
  );
  const taken: AddonUnits = {};
  const inCheckout: AddonUnits = {};
  for (const row of result.rows) {
    taken[row.addon] = (taken[row.addon] ?? 0) + Number(row.units);
    if (row.source === 'checkout') inCheckout[row.addon] = (inCheckout[row.addon] ?? 0) + Number(row.units);
  }
  return { taken, inCheckout };
}

/** Units left of each stocked add-on (never below 0), leaving out `except` (checkout holds, say). */
export function addonStockLeft(pricing: Pick<EventPricing, 'addons'>, count: AddonStockCount, except: AddonUnits = {}): Map<string, number> {
  return new Map(stockedAddons(pricing).map((addon) => [addon.id, Math.max(0, addon.stock - ((count.taken[addon.id] ?? 0) - (except[addon.id] ?? 0)))]));
}

/** The AddonSoldOutError for the first stocked add-on with fewer units left than `units` asks, if any. */
export function addonShortOfStock(pricing: Pick<EventPricing, 'addons'>, units: AddonUnits, left: ReadonlyMap<string, number>): AddonSoldOutError | undefined {
  for (const addon of stockedAddons(pricing)) {
    const wanted = units[addon.id] ?? 0;
    const room = left.get(addon.id) ?? 0;
    if (wanted > room) return new AddonSoldOutError(addon.id, addon.label, room, wanted);
  }
  return undefined;
}

/**
 * The units of stocked add-ons these choices take, checked against the stock left at `now`: the caller holds the
 * event's lock (lockEventForSeats), so two families racing for the last bus seat get one answer each. Returns the
 * units (what a card checkout holds), or the AddonSoldOutError, returned, not thrown.
 */
export async function takeAddonStock(
  trx: Knex.Transaction,
  event: { id: string; pricing: Pick<EventPricing, 'addons'> },
  attendees: readonly AttendeeChoice[],
  addons: readonly AddonPick[] | undefined,
  now: Date,
): Promise<AddonUnits | AddonSoldOutError> {
  const units = addonUnitsOf(event.pricing, attendees, addons);
  if (Object.keys(units).length === 0) return units;
  const short = addonShortOfStock(event.pricing, units, addonStockLeft(event.pricing, await countAddonStock(trx, event.id, now)));
  return short ?? units;
}

/**
 * A paid checkout's add-ons under the completion's lock: into its own live hold (open and unexpired when claimed: the
 * claim already took it out of the count, and other checkouts' holds were granted only while stock was free), else only
 * units nobody holds. The AddonSoldOutError when they no longer fit.
 */
export async function addonStockAtCompletion(
  trx: Knex.Transaction,
  event: { id: string; pricing: Pick<EventPricing, 'addons'> },
  attendees: readonly AttendeeChoice[],
  addons: readonly AddonPick[] | undefined,
  live: boolean,
  now: Date,
): Promise<AddonSoldOutError | undefined> {
  const units = addonUnitsOf(event.pricing, attendees, addons);
  if (Object.keys(units).length === 0) return undefined;
  const count = await countAddonStock(trx, event.id, now);
  return addonShortOfStock(event.pricing, units, addonStockLeft(event.pricing, count, live ? count.inCheckout : {}));
}

export interface AddonRow {
  registration_id: string;
  attendee_index: number | null;
  addon_id: string;
  option: string | null;
  price_minor: number;
  created_at: Date;
}

/**
 * The registration_addons rows of a new registration: one per unit, in the order pricing lists the add-on lines
 * (attendees in order, then the registration's), each at the amount of its priced line: the price it was made at.
 */
export function addonRowsOf(registrationId: string, attendees: readonly AttendeeChoice[], addons: readonly AddonPick[] | undefined, priced: Pick<PricedRegistration, 'lines'>, now: Date): AddonRow[] {
  const amounts = priced.lines.filter((line) => line.kind === 'addon').map((line) => line.amount);
  const picks = [
    ...attendees.flatMap((attendee, index) => (attendee.addons ?? []).map((pick) => ({ pick, attendee: index as number | null }))),
    ...(addons ?? []).map((pick) => ({ pick, attendee: null })),
  ];
  if (picks.length !== amounts.length) throw new Error(`the priced registration has ${amounts.length} add-on lines for ${picks.length} add-ons chosen`);
  return picks.map(({ pick, attendee }, index) => ({
    registration_id: registrationId,
    attendee_index: attendee,
    addon_id: pick.addon,
    option: pick.option ?? null,
    price_minor: amounts[index] as number,
    created_at: now,
  }));
}

export async function insertAddonRows(trx: Knex.Transaction, rows: readonly AddonRow[]): Promise<void> {
  if (rows.length > 0) await trx('registration_addons').insert(rows);
}

/** A registration's add-ons, in the order they were chosen. */
export async function addonsOfRegistration(db: Knex | Knex.Transaction, registrationId: string): Promise<AddonRow[]> {
  return db('registration_addons').where({ registration_id: registrationId }).orderByRaw('attendee_index NULLS LAST, addon_id, option NULLS FIRST, id').select<AddonRow[]>('*');
}

/** Attendees without their add-ons, as registrations.attendees stores them (the add-ons are rows of their own). */
export function withoutAddons(attendees: readonly AttendeeChoice[]): AttendeeChoice[] {
  return attendees.map(({ addons: _addons, ...attendee }) => attendee);
}
