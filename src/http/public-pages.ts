import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { getEventBySlug } from '../office/events.js';
import { type EventRecord } from '../registrations/event-record.js';
import type { AppContext } from '../context.js';
import type { Db } from '../db/connect.js';
import { isChurchClientKey, publicClient } from '../client-key.js';
import { AppError } from '../errors.js';
import { verifyRegistrationToken } from '../payments/links.js';
import { openForRegistration, priceDayOf } from '../signup/register.js';
import { readPublicEvent } from '../registrations/public-event-read.js';
import { CARD_FEE_KEYS, cardFeeRateFrom } from '../settings.js';
import { CHURCH_IDENTITY_KEYS, churchIdentityFrom } from '../mail/identity.js';
import { confirmEarlierCardAttempts, startExistingRegistrationCheckout } from '../payments/pay-now.js';
import { BalancePaymentError } from '../payments/balance-checkout.js';
import { CardAmountTooSmallError } from '../payments/card-minimum.js';
import { minorFromTyped } from './balance-view.js';
import { CANCELLED_RETURN_RATE_LIMIT, cancelledCheckoutNotice } from './cancelled-checkout.js';
import { eventPageData, eventPath } from './event-view.js';
import { hasControlCharacters } from './field-rules.js';
import { isHeldConfirmationToken, MAX_HELD_TOKEN_LENGTH } from './held-confirmation.js';
import {
  CONFIRMATION_HELD_QUERY,
  lineViews,
  loadPublicRegistration,
  payNowPageData,
  payNowPath,
  payNowRefusal,
  registrationPageData,
  registrationPath,
  type PublicRegistration,
} from './registration-view.js';
import type { PageRenderer } from './pages.js';
import { eventPage } from './templates/event-page.js';
import { messagePage } from './templates/message-page.js';
import { payNowPage } from './templates/pay-now-page.js';
import { registrationPage } from './templates/registration-page.js';
import { successPage } from './templates/success-page.js';
import { pageFormat } from './templates/format.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** CHURCH_NETWORK_FORM_POSTS_PER_MINUTE, decorated by buildServer: the form limit of a church network's client. */
    churchNetworkFormPostsPerMinute: number;
  }
}

/** The spec's form limit (section 8): posts a minute per client. */
export const PUBLIC_FORM_POSTS_PER_MINUTE = 10;

/** A client on one of the church's own networks (its key marked so) has the church's limit; everyone else the spec's. */
function formPostsPerMinute(request: FastifyRequest, key: string): number {
  return isChurchClientKey(key) ? request.server.churchNetworkFormPostsPerMinute : PUBLIC_FORM_POSTS_PER_MINUTE;
}

/**
 * Registration and other public form posts: 10 per minute per client (publicClient of request.ip: the socket,
 * or X-Forwarded-For only with TRUST_PROXY; an IPv6 client by its /48), spec section 8; a client on one of
 * CHURCH_NETWORKS, CHURCH_NETWORK_FORM_POSTS_PER_MINUTE. The plugin sets Retry-After; the answer is the usual
 * error body.
 */
export const PUBLIC_FORM_RATE_LIMIT = {
  max: formPostsPerMinute,
  timeWindow: '1 minute',
  errorResponseBuilder: (_request: FastifyRequest, context: { ttl: number }) =>
    new AppError('rate_limited', `Too many requests; try again in ${Math.ceil(context.ttl / 1000)} seconds.`, { httpStatus: 429 }),
};

/** The settings the event page shows: the church's identity (its header) and the card fee (the card choice's hint). */
const EVENT_PAGE_SETTING_KEYS = [...CHURCH_IDENTITY_KEYS, ...CARD_FEE_KEYS];

/** How often the success page reloads itself while the provider's confirmation is on its way. */
export const PROCESSING_REFRESH_SECONDS = 3;

/** The event as the public sees it: published and not deleted, else nothing. */
export async function loadPublicEvent(db: Db, slug: string): Promise<EventRecord | undefined> {
  const event = await getEventBySlug(db, slug);
  return event?.published ? event : undefined;
}

/**
 * The event page's reads (the event, its places, the church's identity, the card fee and whether it has codes) in
 * one statement, for the page and for a form given back on it (a refusal as a camp fills).
 */
export async function readEventPage(ctx: AppContext, slug: string) {
  const now = ctx.clock.now();
  const read = await readPublicEvent(ctx.db, slug, { now, day: priceDayOf(ctx, now), settingKeys: EVENT_PAGE_SETTING_KEYS });
  if (!read) return undefined;
  return {
    event: read.event,
    preloaded: { count: read.count, cardFeeRate: cardFeeRateFrom(read.settings), liveCodes: read.liveCodes },
    identity: churchIdentityFrom(read.settings, ctx.config),
  };
}

export function sendPageNotFound(page: PageRenderer, reply: FastifyReply, what = 'page') {
  return page(reply.code(404), messagePage, {
    title: 'Not found',
    heading: 'Not found',
    message: `We could not find that ${what}. Please check the link you followed.`,
  });
}

/** Pages whose address carries a token: never cached, never sent on as a referrer. */
export function privatePage(reply: FastifyReply): FastifyReply {
  return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
}

/**
 * Text from the address that a query compares: PostgreSQL refuses a NUL in text (the query fails with a
 * 500), and no slug or session id holds a control character, so such a value is simply not found.
 */
const addressText = (max: number) => z.string().min(1).max(max).refine((value) => !hasControlCharacters(value));

const slugParams = z.object({ slug: addressText(200) });
export const slugOf = (params: unknown) => {
  const parsed = slugParams.safeParse(params);
  return parsed.success ? parsed.data.slug : '';
};
const idParams = z.object({ id: z.string().max(64) });
const tokenQuery = z.object({ token: z.string().max(128).optional() });
const confirmationHeldQuery = z.object({ [CONFIRMATION_HELD_QUERY]: z.string().max(MAX_HELD_TOKEN_LENGTH).optional() });
const tokenBody = z.object({ token: z.string().max(128).optional(), amount: z.string().max(12).optional(), pay_amount: z.string().max(16).optional() }).optional();
/** A part of the balance, in minor units, as the instalment reminder's link (or the pay page's form) names it. */
const amountField = z.object({ amount: z.string().regex(/^[1-9][0-9]{0,9}$/).transform(Number).optional() });
const successQuery = z.object({ session_id: addressText(255).optional() });

interface SuccessRow {
  status: 'OPEN' | 'COMPLETED' | 'EXPIRED' | 'UNFULFILLED';
  registration_id: string | null;
  payment_intent_id: string | null;
  scrubbed_at: Date | null;
  unpaid_confirmed_at: Date | null;
  slug: string;
  title: string;
  published: boolean;
  deleted_at: Date | null;
  starts_at: Date;
}

/** The success page with no outcome shown, for the parts that set one. */
const NO_OUTCOME = {
  paid: false,
  cancelled: false,
  registrationCancelled: false,
  processing: false,
  unfulfilled: false,
  notCompleted: false,
  unconfirmed: false,
  registrationOpen: false,
} as const;

type SuccessState = 'paid' | 'cancelled' | 'registrationCancelled' | 'processing' | 'unfulfilled' | 'notCompleted' | 'unconfirmed';

/**
 * What the success page may say. "Nothing was charged" only once the provider
 * confirmed it (its expiry event or reconcile); while a payment may still be
 * confirmed, "processing"; a payment refunded or disputed since, "cancelled";
 * a registration cancelled otherwise (by the office: nothing was refunded), just cancelled.
 */
function successState(row: SuccessRow, registration: PublicRegistration | undefined): SuccessState {
  switch (row.status) {
    case 'COMPLETED':
      if (registration?.status !== 'CANCELLED') return 'paid';
      return registration.cancelReason === 'refund' || registration.cancelReason === 'dispute' ? 'cancelled' : 'registrationCancelled';
    case 'UNFULFILLED':
      return 'unfulfilled';
    case 'OPEN':
      return 'processing';
    case 'EXPIRED':
      if (row.unpaid_confirmed_at) return 'notCompleted';
      return row.scrubbed_at ? 'unconfirmed' : 'processing';
  }
}

/**
 * Public pages: the event page, the card success page, a registration's own
 * page and the pay-now page (GET shows, POST starts the checkout).
 */
export function registerPublicPages(app: FastifyInstance, ctx: AppContext, page: PageRenderer, errorPage: PageRenderer = page): void {
  const notFound = (reply: FastifyReply, what?: string) => sendPageNotFound(page, reply, what);

  app.get('/events/:slug', { config: { recordView: true, rateLimit: CANCELLED_RETURN_RATE_LIMIT } }, async (request, reply) => {
    const slug = slugOf(request.params);
    const read = await readEventPage(ctx, slug);
    if (!read) return notFound(reply, 'event');
    const { event, preloaded, identity } = read;
    const query = request.query as Record<string, unknown>;
    // A waiting-list offer's claim link: the form with its places reserved and its contact filled in.
    const offerToken = typeof query.offer === 'string' && query.offer.length <= 200 ? query.offer : undefined;
    const offer = offerToken ? await (await import('./waitlist-offer-view.js')).offerViewOf(ctx, event, offerToken) : undefined;
    const offerGone = offerToken !== undefined && !offer ? 'This waiting-list offer is no longer open: it was used, it expired, or it was withdrawn.' : undefined;
    const cancelledNotice = await cancelledCheckoutNotice(ctx, event.id, request.query);
    // "Have a code?": judged for the page, each refused code counted against the connection's guesses.
    const code = typeof query.code === 'string' && query.code.trim() !== '' ? query.code.slice(0, 100).trim() : undefined;
    const codeClient = code ? publicClient(request.ip, ctx.config.limits.churchNetworks) : undefined;
    const data = await eventPageData(ctx, event, { notice: offerGone ?? cancelledNotice, offer, code, codeClient, preloaded });
    return page(cancelledNotice || offerToken || code ? privatePage(reply) : reply, eventPage, data, identity);
  });

  app.get('/events/:slug/success', { config: { recordView: true } }, async (request, reply) => {
    const slug = slugOf(request.params);
    const query = successQuery.safeParse(request.query);
    const sessionId = query.success ? query.data.session_id : undefined;
    if (!sessionId) return notFound(reply, 'payment');
    try {
      return await showSuccess(reply, slug, sessionId);
    } catch (error) {
      // The payer has just paid (or not): a bare error page here reads as a failed payment and invites paying again.
      request.log.error({ err: error }, 'the success page could not read the checkout; answered "processing"');
      reply.header('Retry-After', String(PROCESSING_REFRESH_SECONDS));
      return errorPage(privatePage(reply).code(503), successPage, {
        ...NO_OUTCOME,
        title: 'Your payment',
        eventTitle: 'your event',
        eventHref: eventPath(slug),
        processing: true,
        refreshSeconds: PROCESSING_REFRESH_SECONDS,
      });
    }
  });

  const showSuccess = async (reply: FastifyReply, slug: string, sessionId: string) => {
    const row = await ctx.db('checkout_sessions as c')
      .join('events as e', 'e.id', 'c.event_id')
      .where('c.provider_session_id', sessionId)
      .first<SuccessRow | undefined>(
        'c.status',
        'c.registration_id',
        'c.payment_intent_id',
        'c.scrubbed_at',
        'c.unpaid_confirmed_at',
        'e.slug',
        'e.title',
        'e.published',
        'e.deleted_at',
        'e.starts_at',
      );
    if (!row || row.slug !== slug) return notFound(reply, 'payment');
    const registration = await registrationOfCheckout(ctx.db, row, ctx.clock.now());
    const format = pageFormat(ctx.config.regional);
    const state = successState(row, registration);
    // A deleted or unpublished event's page is "not found": link to it only while it shows the event.
    const eventLive = row.published && !row.deleted_at;
    const base = {
      title: state === 'paid' ? 'Payment received' : 'Your payment',
      eventTitle: row.title,
      eventHref: eventLive ? eventPath(row.slug) : undefined,
      registrationOpen: eventLive && openForRegistration({ startsAt: row.starts_at }, ctx.clock.now()),
      paid: state === 'paid',
      cancelled: state === 'cancelled',
      registrationCancelled: state === 'registrationCancelled',
      processing: state === 'processing',
      unfulfilled: state === 'unfulfilled',
      paidTwice: state === 'unfulfilled' && registration?.status === 'PAID',
      notCompleted: state === 'notCompleted',
      unconfirmed: state === 'unconfirmed',
      registrationHref: registration ? registrationPath(ctx.config.authSecret, registration.id, registration.linkVersion) : undefined,
    };
    privatePage(reply);
    if (state === 'paid' && registration) {
      return page(reply, successPage, {
        ...base,
        eventCancelled: registration.event.deletedAt !== null,
        lines: lineViews(registration.lineItems, registration.attendeeNames, format.money),
        total: format.money(registration.totalMinor),
      });
    }
    if (state === 'processing') return page(reply, successPage, { ...base, refreshSeconds: PROCESSING_REFRESH_SECONDS });
    const payable = state === 'notCompleted' && registration && !(await payNowRefusal(ctx, registration));
    return page(reply, successPage, {
      ...base,
      payNowHref: payable ? payNowPath(ctx.config.authSecret, registration.id, registration.linkVersion) : undefined,
    });
  };

  /** The registration named by the path, when the token is right; otherwise the reply has been sent (404). */
  const authorised = async (
    params: unknown,
    token: string | undefined,
  ): Promise<{ registration: PublicRegistration; token: string } | undefined> => {
    const parsed = idParams.safeParse(params);
    if (!parsed.success || !token) return undefined;
    const registration = await loadPublicRegistration(ctx.db, parsed.data.id, ctx.clock.now());
    // Checked against the link version as it is now: a token of an earlier version (revoked) opens nothing.
    if (!registration || !verifyRegistrationToken(ctx.config.authSecret, registration.id, registration.linkVersion, token)) return undefined;
    return { registration, token };
  };
  const queryToken = (query: unknown) => {
    const parsed = tokenQuery.safeParse(query);
    return parsed.success ? parsed.data.token : undefined;
  };

  app.get('/registrations/:id', { config: { recordView: true } }, async (request, reply) => {
    const found = await authorised(request.params, queryToken(request.query));
    if (!found) return notFound(reply, 'registration');
    // Only the signed mark the form's post redirected with: an address edited or guessed shows the plain page.
    const mark = confirmationHeldQuery.safeParse(request.query).data?.[CONFIRMATION_HELD_QUERY];
    const { id, linkVersion } = found.registration;
    const confirmationHeldBack = isHeldConfirmationToken(ctx.config.authSecret, id, linkVersion, mark);
    return page(privatePage(reply), registrationPage, await registrationPageData(ctx, found.registration, { confirmationHeldBack }));
  });

  const notPayable = (reply: FastifyReply, registration: PublicRegistration, message: string) =>
    page(privatePage(reply).code(409), messagePage, {
      title: 'Card payment not possible',
      heading: 'Card payment is not possible',
      message,
      linkHref: registrationPath(ctx.config.authSecret, registration.id, registration.linkVersion),
      linkLabel: 'See your registration',
    });

  app.get('/registrations/:id/pay', { config: { recordView: true } }, async (request, reply) => {
    const found = await authorised(request.params, queryToken(request.query));
    if (!found) return notFound(reply, 'registration');
    // An earlier attempt past its expiry: the provider is asked before the page says a payment may be on its way.
    if (found.registration.cardPayment === 'in_flight' && ctx.config.payments && (await confirmEarlierCardAttempts(ctx, found.registration.id))) {
      found.registration = (await loadPublicRegistration(ctx.db, found.registration.id, ctx.clock.now())) ?? found.registration;
    }
    const blocker = await payNowRefusal(ctx, found.registration);
    if (blocker) return notPayable(reply, found.registration, blocker);
    const amount = amountField.safeParse(request.query);
    if (!amount.success) return notPayable(reply, found.registration, 'That amount could not be read; nothing was charged.');
    const data = await payNowPageData(ctx, found.registration, found.token, amount.data.amount).catch((error: unknown) => error);
    if (data instanceof BalancePaymentError || data instanceof CardAmountTooSmallError) return notPayable(reply, found.registration, data.message);
    if (data instanceof Error) throw data;
    return page(privatePage(reply), payNowPage, data as Awaited<ReturnType<typeof payNowPageData>>);
  });

  app.post(
    '/registrations/:id/pay',
    { config: { rateLimit: PUBLIC_FORM_RATE_LIMIT } },
    async (request, reply) => {
      const body = tokenBody.safeParse(request.body);
      const token = (body.success ? body.data?.token : undefined) ?? queryToken(request.query);
      const found = await authorised(request.params, token);
      if (!found) return notFound(reply, 'registration');
      // A checkout in flight is judged under the registration's lock: its live session is handed out again, else refused.
      const blocker = await payNowRefusal(ctx, found.registration, { inFlightDecidedUnderLock: true });
      if (blocker) return notPayable(reply, found.registration, blocker);
      try {
        // The registration page's form types the amount in dollars (pay_amount); the pay page and the reminders' links name it in minor units.
        const typed = body.success ? body.data?.pay_amount : undefined;
        const amount = amountField.safeParse({ amount: (body.success ? body.data?.amount : undefined) ?? (request.query as { amount?: string }).amount });
        const amountMinor = typed !== undefined ? minorFromTyped(ctx.config.regional, typed) : amount.success ? amount.data.amount : undefined;
        if ((typed !== undefined || !amount.success) && !amountMinor) return notPayable(reply, found.registration, 'That amount could not be read; nothing was charged.');
        const started = await startExistingRegistrationCheckout(ctx, { registrationId: found.registration.id, ...(amountMinor ? { amountMinor } : {}) });
        return reply.code(303).header('location', started.redirectUrl).send();
      } catch (error) {
        if (error instanceof AppError && error.code === 'provider_unavailable') {
          return page(privatePage(reply).code(502), messagePage, {
            title: 'Try again shortly',
            heading: 'Card payment is unavailable right now',
            message: 'We could not reach our card payment provider, and nothing was charged. Please try again in a minute.',
            linkHref: registrationPath(ctx.config.authSecret, found.registration.id, found.registration.linkVersion),
            linkLabel: 'Back to your registration',
          });
        }
        if (error instanceof AppError && error.httpStatus < 500) return notPayable(reply, found.registration, error.message);
        throw error;
      }
    },
  );
}

/** The registration a checkout made or paid: pay-now rows name it; new registrations carry the PaymentIntent. */
async function registrationOfCheckout(
  db: Db,
  row: Pick<SuccessRow, 'registration_id' | 'payment_intent_id'>,
  now: Date,
): Promise<PublicRegistration | undefined> {
  if (row.registration_id) return loadPublicRegistration(db, row.registration_id, now);
  if (!row.payment_intent_id) return undefined;
  const found = await db('registrations').where({ payment_intent_id: row.payment_intent_id }).first<{ id: string } | undefined>('id');
  return found ? loadPublicRegistration(db, found.id, now) : undefined;
}
