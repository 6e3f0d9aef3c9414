import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { confirmedUnpaid } from '../payments/card-payment-state.js';
import { createProviderClient, providerErrorDetails } from '../payments/provider.js';
import { CHECKOUT_REF_QUERY } from '../payments/links.js';

/**
 * The notice on `/events/<slug>?checkout=cancelled&ref=<checkout id>`, where the provider sends a payer who
 * left its page. The query string only says someone came back: "nothing was charged" is said only when our
 * records hold the provider's confirmation, or the provider reports the session unpaid and not complete.
 */

const CHECKOUT_CANCELLED_QUERY = 'checkout';

export const NOTHING_CHARGED_NOTICE = 'Your card payment was cancelled and nothing was charged. You can register again below.';
export const NOT_FINISHED_NOTICE =
  'Your card payment was not finished. If you did complete it, you do not need to pay again: we will email you as soon as it is confirmed. Otherwise you can register again below.';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const isCancelledReturn = (query: unknown) => (query as Record<string, unknown> | undefined)?.[CHECKOUT_CANCELLED_QUERY] === 'cancelled';

/**
 * The event page's own limit: only a return from the provider (which may ask the provider) is counted,
 * at the public form's rate per client (10 a minute); a plain view of the event page is never limited.
 */
export const CANCELLED_RETURN_RATE_LIMIT = {
  max: 10,
  timeWindow: '1 minute',
  groupId: 'checkout-cancelled',
  allowList: (request: FastifyRequest) => !isCancelledReturn(request.query),
};

interface CancelledRow {
  status: string;
  unpaid_confirmed_at: Date | null;
  provider_session_id: string | null;
}

/** The notice for this request, or undefined when it is not a return from the provider's page. */
export async function cancelledCheckoutNotice(ctx: AppContext, eventId: string, query: unknown): Promise<string | undefined> {
  if (!isCancelledReturn(query)) return undefined;
  const ref = (query as Record<string, unknown>)[CHECKOUT_REF_QUERY];
  if (typeof ref !== 'string' || !UUID.test(ref)) return NOT_FINISHED_NOTICE;
  const row = await ctx.db('checkout_sessions')
    .where({ id: ref, event_id: eventId })
    .first<CancelledRow | undefined>('status', 'unpaid_confirmed_at', 'provider_session_id');
  if (!row) return NOT_FINISHED_NOTICE;
  if (confirmedUnpaid(row)) return NOTHING_CHARGED_NOTICE;
  if ((row.status !== 'OPEN' && row.status !== 'EXPIRED') || !row.provider_session_id || !ctx.config.payments) return NOT_FINISHED_NOTICE;
  return (await providerReportsUnpaid(ctx, row.provider_session_id)) ? NOTHING_CHARGED_NOTICE : NOT_FINISHED_NOTICE;
}

async function providerReportsUnpaid(ctx: AppContext, sessionId: string): Promise<boolean> {
  try {
    const provider = await createProviderClient(ctx.config);
    const session = await provider.checkout.sessions.retrieve(sessionId);
    return session.status !== 'complete' && session.payment_status === 'unpaid';
  } catch (error) {
    ctx.logger.warn({ provider: providerErrorDetails(error) }, 'could not ask the card provider about a cancelled checkout; the page says it was not finished');
    return false;
  }
}
