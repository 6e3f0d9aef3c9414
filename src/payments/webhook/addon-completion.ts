import type { Knex } from 'knex';
import { addonStockAtCompletion } from '../../registrations/addon-stock.js';
import type { EventRecord } from '../../registrations/event-record.js';
import { counted } from '../../plural.js';
import type { StagedRegistration } from '../staging.js';

/**
 * A paid new registration's stocked add-ons, under the completion's event lock: the reason it cannot have them (the
 * stock went while the payer was at the provider, e.g. its checkout expired and others took the last bus seat), which
 * ends the checkout UNFULFILLED with a sold_out alert like places do; never refunded here.
 */
export async function addonStockFailure(
  trx: Knex.Transaction,
  event: Pick<EventRecord, 'id' | 'pricing' | 'deletedAt'> | undefined,
  staged: StagedRegistration | undefined,
  claimed: { expires_at: Date },
  now: Date,
): Promise<{ kind: 'sold_out'; reason: string } | undefined> {
  if (!event || event.deletedAt || !staged) return undefined;
  const live = claimed.expires_at.getTime() > now.getTime();
  const short = await addonStockAtCompletion(trx, event, staged.attendees, staged.addons, live, now);
  if (!short) return undefined;
  return {
    kind: 'sold_out',
    reason: `${counted(short.wanted, short.label, short.label)} paid for but only ${short.left} left: that add-on sold out during checkout`,
  };
}
