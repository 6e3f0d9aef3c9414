import type { AppContext } from '../context.js';
import { extrasClosedReason } from '../family/add-extras.js';
import type { ManagedRegistration } from '../family/managed-registration.js';
import { addonsOfferedTo, extrasRoom } from '../registrations/addon-extras.js';
import { addonStockLeft, addonsOfRegistration, countAddonStock } from '../registrations/addon-stock.js';
import { addonLabel, type AddonPick } from '../registrations/addons.js';
import type { EventAddon } from '../registrations/event-pricing.js';
import { cardPaymentInFlightAs } from '../registrations/card-checkouts.js';
import { wholePaymentOutsideLedger } from '../registrations/whole-card-payment.js';
import { controlsOf, type AddonControlView } from './addon-view.js';

/**
 * The manage page's "Add extras" form: for each attendee, the add-ons offered to its ticket type that it may still
 * add (maxPerAttendee less what it has; none of a group it holds another of), then the registration's own, named as
 * the registration form names them (addon-fields.ts reads both). What each already has is listed beside. Shown only
 * while extras may be added (add-extras.ts decides again under the locks).
 */
export interface ExtrasFormView {
  action: string;
  /** Open after a refused post. */
  open: boolean;
  errors: Array<{ field: string; message: string }>;
  /** What the registration has: "Ruth: Bus seat, T-shirt (M)". */
  had: string[];
  rows: Array<{ name: string; controls: AddonControlView[] }>;
  registration: AddonControlView[];
  /** What happens after adding: pay the new amount by card, or by bank transfer. */
  payNote: string;
}

export async function extrasFormView(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  managed: ManagedRegistration,
  input: { action: string; typed: Record<string, string[]>; errors: Array<{ field: string; message: string }>; money: (minor: number) => string },
): Promise<ExtrasFormView | undefined> {
  const { registration, event } = managed;
  const now = ctx.clock.now();
  if (extrasClosedReason(managed, now)) return undefined;
  if (await ctx.db('checkout_sessions').where({ registration_id: registration.id }).where(cardPaymentInFlightAs('checkout_sessions', now)).first('id')) return undefined;
  if ((await wholePaymentOutsideLedger(ctx.db, registration)) === 'unrecorded') return undefined;
  const addons = event.pricing.addons ?? [];
  // A registration with nothing to pay takes only free extras here: one with a price is the office's to add.
  const addable = (list: EventAddon[]) => (registration.payment_method === 'free' ? list.filter((addon) => addon.price === 0) : list);
  const held = await addonsOfRegistration(ctx.db, registration.id);
  const has = (index: number | null): AddonPick[] =>
    held.filter((row) => row.attendee_index === index).map((row) => ({ addon: row.addon_id, ...(row.option !== null ? { option: row.option } : {}) }));
  const left = addonStockLeft(event.pricing, await countAddonStock(ctx.db, event.id, now));
  const stillOpen = (offered: EventAddon[], holding: AddonPick[]): EventAddon[] =>
    addable(offered).flatMap((addon) => {
      const room = extrasRoom(addons, addon, holding);
      // Nothing is required of a registration made already: no hint says so.
      return room > 0 ? [{ ...addon, maxPerAttendee: room, required: undefined }] : [];
    });
  const pricing = { tiers: event.pricing.tiers };
  const rows = registration.attendees.map((attendee, index) => ({
    name: attendee.name,
    controls: controlsOf(stillOpen(addonsOfferedTo(event.pricing, attendee.tier), has(index)), pricing, { id: `extra-${index + 1}-`, name: `addon.${index}.` }, input.typed, input.money, left),
  }));
  const own = controlsOf(stillOpen(addonsOfferedTo(event.pricing, undefined), has(null)), pricing, { id: 'extra-', name: 'addon.' }, input.typed, input.money, left);
  if (rows.every((row) => row.controls.length === 0) && own.length === 0) return undefined;
  const labelOf = (pick: AddonPick) => addonLabel({ label: addons.find((addon) => addon.id === pick.addon)?.label ?? pick.addon }, pick.option);
  const had = [
    ...registration.attendees.flatMap((attendee, index) => (has(index).length > 0 ? [`${attendee.name}: ${has(index).map(labelOf).join(', ')}`] : [])),
    ...(has(null).length > 0 ? [`Registration: ${has(null).map(labelOf).join(', ')}`] : []),
  ];
  return {
    action: input.action,
    open: input.errors.length > 0,
    errors: input.errors,
    had,
    rows: rows.filter((row) => row.controls.length > 0),
    registration: own,
    payNote:
      registration.payment_method === 'card'
        ? 'After adding, you are taken to pay for the extras by card.'
        : 'After adding, what the extras cost is added to what you owe, and shown on this page with how to pay it.',
  };
}
