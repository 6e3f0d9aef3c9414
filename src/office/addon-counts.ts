import type { AppContext } from '../context.js';
import { NotFoundError } from '../errors.js';
import { countAddonStock } from '../registrations/addon-stock.js';
import { getEventBySlug } from './events.js';

/** One add-on's counts, for the kitchen's T-shirt order and the bus company (`eventops events addons SLUG`). */
export interface AddonCount {
  id: string;
  label: string;
  per: 'attendee' | 'registration';
  priceMinor: number;
  /** Units of PAID registrations. */
  paid: number;
  /** Units of PENDING registrations (bank transfer not yet received). */
  pending: number;
  /** Units open card checkouts hold now (payers at the provider). */
  inCheckout: number;
  /** null: no limit. */
  stock: number | null;
  /** stock − paid − pending − inCheckout, never below 0; null without a limit. */
  left: number | null;
  /** Units of PAID and PENDING registrations per option (a T-shirt's sizes), every option listed; {} without options. */
  options: Record<string, number>;
}

export interface AddonCounts {
  event: { slug: string; title: string };
  addons: AddonCount[];
}

/** The counts of each of the event's add-ons, as its stock is counted (registrations/addon-stock.ts), at `now`. */
export async function addonCountsOf(ctx: Pick<AppContext, 'db' | 'clock'>, slug: string): Promise<AddonCounts> {
  const event = await getEventBySlug(ctx.db, slug);
  if (!event) throw new NotFoundError(`event "${slug}"`, 'run `eventops events list` to see the slugs');
  const rows = await ctx.db('registration_addons as a')
    .join('registrations as r', 'r.id', 'a.registration_id')
    .where('r.event_id', event.id)
    .whereIn('r.status', ['PENDING', 'PAID'])
    .groupBy('a.addon_id', 'a.option', 'r.status')
    .select<Array<{ addon_id: string; option: string | null; status: 'PENDING' | 'PAID'; units: number }>>('a.addon_id', 'a.option', 'r.status', ctx.db.raw('count(*)::int AS units'));
  const held = await countAddonStock(ctx.db, event.id, ctx.clock.now());
  const addons = (event.pricing.addons ?? []).map((addon): AddonCount => {
    const mine = rows.filter((row) => row.addon_id === addon.id);
    const sum = (status: string) => mine.filter((row) => row.status === status).reduce((total, row) => total + row.units, 0);
    const paid = sum('PAID');
    const pending = sum('PENDING');
    const inCheckout = held.inCheckout[addon.id] ?? 0;
    const options = Object.fromEntries((addon.options ?? []).map((option) => [option, mine.filter((row) => row.option === option).reduce((total, row) => total + row.units, 0)]));
    return {
      id: addon.id,
      label: addon.label,
      per: addon.per,
      priceMinor: addon.price,
      paid,
      pending,
      inCheckout,
      stock: addon.stock ?? null,
      left: addon.stock === undefined ? null : Math.max(0, addon.stock - paid - pending - inCheckout),
      options,
    };
  });
  return { event: { slug: event.slug, title: event.title }, addons };
}
