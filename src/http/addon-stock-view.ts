import type { AppContext } from '../context.js';
import { addonStockLeft, countAddonStock } from '../registrations/addon-stock.js';
import { stockedAddons } from '../registrations/addons.js';
import type { EventRecord } from '../registrations/event-record.js';

/** The units left of each stocked add-on, for showing on the page (without the lock: the post counts under it). */
export async function addonStockLeftNow(ctx: Pick<AppContext, 'db' | 'clock'>, event: Pick<EventRecord, 'id' | 'pricing'>): Promise<Map<string, number>> {
  if (stockedAddons(event.pricing).length === 0) return new Map();
  return addonStockLeft(event.pricing, await countAddonStock(ctx.db, event.id, ctx.clock.now()));
}
