import type { AppContext } from '../context.js';
import type { EventRecord } from '../registrations/event-record.js';
import { findOpenOffer } from '../registrations/waitlist/claim.js';
import { readClaimToken } from '../registrations/waitlist/tokens.js';
import type { OfferView } from './event-view.js';

/** The open offer a claim link's token names for this event, for showing the form; undefined when it is not open. */
export async function offerViewOf(ctx: AppContext, event: EventRecord, token: string | undefined): Promise<OfferView | undefined> {
  const claim = token ? readClaimToken(ctx.config.keyring, token) : undefined;
  if (!token || !claim) return undefined;
  const open = await findOpenOffer(ctx.db, ctx.cipher, event.id, claim, ctx.clock.now());
  return open ? { token, places: open.entry.places, expiresAt: open.entry.offer_expires_at as Date, contact: open.contact } : undefined;
}
