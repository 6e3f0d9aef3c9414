import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { extrasLines, extrasProblem, type ExtrasHolder } from '../registrations/addon-extras.js';
import { addonsOfRegistration, insertAddonRows, takeAddonStock, AddonSoldOutError, type AddonRow } from '../registrations/addon-stock.js';
import type { AddonPick } from '../registrations/addons.js';
import { recordHistory } from '../registrations/history.js';
import { queueExtrasAddedEmail } from './extras-added-mail.js';
import { cardPaymentMayArrive, registrationMoney } from '../registrations/ledger.js';
import type { PricedLine } from '../registrations/pricing.js';
import { lockEventForSeats } from '../registrations/registrations.js';
import { recordWholeCardPayment, wholePaymentOutsideLedger } from '../registrations/whole-card-payment.js';
import { lockManagedRegistration, ManageRefusedError, REGISTRANT_ACTOR, type ManagedRegistration } from './managed-registration.js';

/**
 * A family adds extras (add-ons) to its registration from the manage page, while it is PENDING or PAID and the event
 * has not started, with no card payment on its way. One transaction, under the registration's lock and then the
 * event's (the order the webhook and the office take them): the extras are judged against what each attendee has,
 * their stock counted as every path counts it, priced at today's price as new lines (the registration's own lines
 * never change), and the total grows by them. A PAID registration then owes them: PENDING, as when a part payment is
 * reversed. A whole-total card payment of the older shape is first made a ledger row, so the larger total does not
 * read as paid.
 */

/** The extras chosen in the post: per attendee position, and the registration's own. */
export interface ExtrasChosen {
  rows: ReadonlyMap<number, readonly AddonPick[]>;
  registration: readonly AddonPick[];
}

export type AddExtrasOutcome =
  | { kind: 'not_found' }
  | { kind: 'invalid'; problems: Array<{ field: string; message: string }> }
  | { kind: 'sold_out'; message: string }
  | { kind: 'added'; addedMinor: number; balanceMinor: number; registrationId: string; paymentMethod: string };

/** Why extras cannot be added to this registration now, in the family's words; undefined when they can (checked again under the locks). */
export function extrasClosedReason(managed: ManagedRegistration, now: Date): string | undefined {
  const { registration, event } = managed;
  if (registration.status === 'CANCELLED') return 'This registration is cancelled, so nothing can be added to it.';
  if (event.deletedAt) return 'This event has been cancelled, so nothing can be added.';
  if (now.getTime() >= event.startsAt.getTime()) return 'The event has started, so extras can no longer be added here. Please ask at the event.';
  if ((event.pricing.addons ?? []).length === 0) return 'This event has no extras to add.';
  return undefined;
}

/** Said when a card payment may still arrive: the extras would change what it is for. */
export const CARD_PAYMENT_ON_ITS_WAY =
  'A card payment for this registration is on its way. Once it is confirmed (we email you), you can add extras here.';

/** Said when the registration's earlier payment cannot be carried into the new balance here. */
export const EXTRAS_BY_OFFICE = 'Extras for this registration are added by the church office: please contact them.';

export async function addExtrasByRegistrant(ctx: Pick<AppContext, 'db' | 'config' | 'clock' | 'cipher'>, token: string, chosen: ExtrasChosen, client: string): Promise<AddExtrasOutcome> {
  return ctx.db.transaction(async (trx) => {
    const managed = await lockManagedRegistration(trx, ctx.config.authSecret, token);
    if (!managed) return { kind: 'not_found' } as const;
    const now = ctx.clock.now();
    const closed = extrasClosedReason(managed, now);
    if (closed) throw new ManageRefusedError('extras_closed', closed);
    const { registration } = managed;
    if (await cardPaymentMayArrive(trx, registration.id, now)) throw new ManageRefusedError('card_payment_on_its_way', CARD_PAYMENT_ON_ITS_WAY);
    const whole = await wholePaymentOutsideLedger(trx, registration);
    if (whole === 'unrecorded') throw new ManageRefusedError('extras_by_office', EXTRAS_BY_OFFICE);

    const locked = await lockEventForSeats(trx, registration.event_id, now);
    if (!locked) return { kind: 'not_found' } as const;
    const { event } = locked;
    const holders = await holdersOf(trx, registration, chosen);
    if (typeof holders === 'string') return { kind: 'invalid', problems: [{ field: 'addons', message: holders }] } as const;
    const problem = extrasProblem(event.pricing, holders.attendees, holders.registration);
    if (problem) return { kind: 'invalid', problems: [problem] } as const;
    const lines = extrasLines(event.pricing, holders.attendees, holders.registration);
    const addedMinor = lines.reduce((sum, line) => sum + line.amount, 0);
    if (addedMinor > 0 && registration.payment_method === 'free') throw new ManageRefusedError('extras_by_office', EXTRAS_BY_OFFICE);

    const stock = await takeAddonStock(
      trx,
      event,
      holders.attendees.map((holder) => ({ name: holder.name, tier: holder.tier ?? '', addons: [...holder.adding] })),
      holders.registration.adding,
      now,
    );
    if (stock instanceof AddonSoldOutError) return { kind: 'sold_out', message: stock.message } as const;

    if (whole && addedMinor > 0) await recordWholeCardPayment(trx, registration.id, whole);
    const rows: AddonRow[] = lines.map((line) => ({
      registration_id: registration.id,
      attendee_index: line.attendee ?? null,
      addon_id: line.addon,
      option: line.option ?? null,
      price_minor: line.amount,
      created_at: now,
    }));
    await insertAddonRows(trx, rows);
    const owes = addedMinor > 0 && registration.status === 'PAID';
    const storedLines = registration.line_items as unknown as PricedLine[];
    await trx('registrations')
      .where({ id: registration.id })
      .update({
        line_items: JSON.stringify([...storedLines, ...lines.map((line): PricedLine => ({ label: line.label, amount: line.amount, kind: 'addon' }))]),
        total_minor: registration.total_minor + addedMinor,
        ...(owes ? { status: 'PENDING', paid_at: null } : {}),
        updated_at: now,
      });
    const money = await registrationMoney(trx, registration.id);
    await recordHistory(trx, {
      registrationId: registration.id,
      action: 'extras_added',
      changes: {
        extras: lines.map((line) => line.label),
        addedMinor,
        totalMinor: { from: registration.total_minor, to: registration.total_minor + addedMinor },
        ...(owes ? { status: { from: 'PAID', to: 'PENDING' } } : {}),
        ...(whole && addedMinor > 0 ? { cardPaymentRecordedMinor: whole.amountMinor } : {}),
        balanceMinor: money.balanceMinor,
        client,
      },
      actor: REGISTRANT_ACTOR,
      now,
    });
    await queueExtrasAddedEmail(trx, ctx, { registration, event, added: lines, totalMinor: registration.total_minor + addedMinor, money, now });
    return { kind: 'added', addedMinor, balanceMinor: money.balanceMinor, registrationId: registration.id, paymentMethod: registration.payment_method } as const;
  });
}

/** Each attendee (and the registration) with the add-ons it has and those chosen for it; a string when the post names no such attendee. */
async function holdersOf(
  trx: Knex.Transaction,
  registration: ManagedRegistration['registration'],
  chosen: ExtrasChosen,
): Promise<{ attendees: ExtrasHolder[]; registration: ExtrasHolder } | string> {
  const attendees = registration.attendees;
  if ([...chosen.rows.keys()].some((index) => index >= attendees.length)) return 'Choose extras only for the attendees of this registration.';
  const nothing = [...chosen.rows.values()].every((picks) => picks.length === 0) && chosen.registration.length === 0;
  if (nothing) return 'Choose at least one extra to add.';
  const held = await addonsOfRegistration(trx, registration.id);
  const has = (index: number | null): AddonPick[] =>
    held.filter((row) => row.attendee_index === index).map((row) => ({ addon: row.addon_id, ...(row.option !== null ? { option: row.option } : {}) }));
  return {
    attendees: attendees.map((attendee, index) => ({ name: attendee.name, tier: attendee.tier, has: has(index), adding: chosen.rows.get(index) ?? [] })),
    registration: { name: 'Extras for the registration', has: has(null), adding: chosen.registration },
  };
}
