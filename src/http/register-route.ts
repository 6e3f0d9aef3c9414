import type { FastifyInstance, FastifyRequest } from 'fastify';
import { publicClient } from '../client-key.js';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { recordError } from '../ops/error-log.js';
import { verifyCaptchaToken } from '../payments/captcha.js';
import { FIRST_LINK_VERSION } from '../payments/links.js';
import { CardAmountTooSmallError } from '../payments/card-minimum.js';
import { PricingError } from '../registrations/pricing.js';
import { registerForEvent, SoldOutError } from '../signup/register.js';
import { UnpaidSeatCapError } from '../payments/unpaid-seat-cap.js';
import { sendError } from './errors.js';
import { eventPageData, eventPath } from './event-view.js';
import { loadPublicEvent, PUBLIC_FORM_RATE_LIMIT, readEventPage, sendPageNotFound, slugOf } from './public-pages.js';
import { parseRegistrationBody, resendableFields, type SubmittedValues } from './registration-form.js';
import { registrationPath } from './registration-view.js';
import { typedAnswerFields } from './question-view.js';
import type { PageRenderer } from './pages.js';
import { eventPage, type FieldProblem } from './templates/event-page.js';
import { messagePage } from './templates/message-page.js';
import { offerViewOf } from './waitlist-offer-view.js';
import { OfferNotOpenError } from '../registrations/waitlist/claim.js';
import { readClaimToken } from '../registrations/waitlist/tokens.js';

const sentence = (text: string) => text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.');

function wantsJson(request: FastifyRequest): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json');
}

/**
 * POST /events/:slug/register: validate, check the captcha, then register
 * (free → PAID, bank → PENDING, card → provider checkout) and answer 303.
 * Form posts get HTML pages; JSON posts get the JSON error body.
 */
export function registerRegistrationRoute(app: FastifyInstance, ctx: AppContext, page: PageRenderer): void {
  // The limit is counted once the body is read (preHandler, not onRequest): when its count in PostgreSQL fails, the
  // error page still has what the member typed, to send again.
  const config = { rateLimit: { ...PUBLIC_FORM_RATE_LIMIT, hook: 'preHandler' as const }, resendOnError: resendableFields };
  app.post('/events/:slug/register', { config }, async (request, reply) => {
    const json = wantsJson(request);
    // As the event page reads (one statement), with the places it shows: a post for more than that skips work the lock would waste.
    const read = await readEventPage(ctx, slugOf(request.params));
    const event = read?.event;
    if (!event) {
      return json ? sendError(reply, 404, 'event_not_found', 'No open event has this address.') : sendPageNotFound(page, reply, 'event');
    }

    // A claim of a waiting-list offer: its token travels with the post, and a form given back keeps it.
    const body = (request.body ?? {}) as Record<string, unknown>;
    const offerToken = typeof body.offer === 'string' && body.offer !== '' ? body.offer.slice(0, 200) : undefined;
    const waitlistOffer = offerToken ? readClaimToken(ctx.config.keyring, offerToken) : undefined;
    const offerFor = async (shown: typeof event) => (json ? undefined : await offerViewOf(ctx, shown, offerToken));

    const rejectForm = async (status: number, code: string, values: SubmittedValues, problems: FieldProblem[], formError?: string, shown = event) => {
      if (json) {
        const message = formError ?? `Please check these fields: ${problems.map((p) => p.message).join('; ')}`;
        return sendError(reply, status, code, message, problems.length > 0 ? { fields: problems } : {});
      }
      const answerFields = typedAnswerFields(request.body);
      const codeClient = publicClient(request.ip, ctx.config.limits.churchNetworks);
      return page(reply.code(status), eventPage, await eventPageData(ctx, shown, { values, answerFields, errors: problems, formError, offer: await offerFor(shown), codeClient }));
    };

    /**
     * A registration refused after its fields passed (no longer fits, closed, the provider unreachable, too small
     * to pay by card): the form again with what was typed and the reason at the top, made from the event as it is
     * now, so its rows and places-left line follow the places left. An event no longer public gets the message page.
     */
    const refuse = async (error: AppError, values: SubmittedValues) => {
      if (json) return sendError(reply, error.httpStatus, error.code, error.message);
      // When a camp fills, most posts end here. Sold out: the event and its places as the lock counted them, with the
      // page's settings from the read before it; else read as the event page reads (one statement).
      const standing = error instanceof SoldOutError && error.standing?.event.published && !error.standing.event.deletedAt ? error.standing : undefined;
      const again = read && standing ? { event: standing.event, preloaded: { ...read.preloaded, count: standing.count }, identity: read.identity } : await readEventPage(ctx, event.slug);
      if (again) {
        const { event: current, preloaded, identity } = again;
        const offer = await offerFor(current);
        const answerFields = typedAnswerFields(request.body);
        // More people than places left: the waiting list (when the event has one) is offered, filled in from the form.
        const overCapacity = error instanceof SoldOutError;
        const codeClient = publicClient(request.ip, ctx.config.limits.churchNetworks);
        return page(
          reply.code(error.httpStatus),
          eventPage,
          await eventPageData(ctx, current, { values, answerFields, formError: sentence(error.message), offer, overCapacity, codeClient, preloaded }),
          identity,
        );
      }
      return page(reply.code(error.httpStatus), messagePage, {
        title: 'Registration not possible',
        heading: 'Registration not possible',
        message: sentence(error.message),
        linkHref: eventPath(event.slug),
        linkLabel: 'Back to the event',
      });
    };

    const parsed = parseRegistrationBody(
      request.body,
      json ? 'json' : 'form',
      event.pricing,
      event.maxAttendeesPerRegistration,
      { event, now: ctx.clock.now(), timeZone: ctx.config.regional.timeZone },
    );
    if (!parsed.ok) return rejectForm(400, 'invalid_registration', parsed.values, parsed.problems);

    if (ctx.config.captcha) {
      const verdict = await verifyCaptchaToken(ctx.config.captcha, parsed.captchaToken, { remoteIp: request.ip });
      if (!verdict.ok && verdict.reason === 'misconfigured') {
        // Every registration fails alike until someone fixes the secret: into the error log, so the digest files it.
        const problem = new Error('the captcha verifier refused CAPTCHA_SECRET_KEY: check it against the site key');
        request.log.error({ err: problem }, 'captcha secret refused; public registration is blocked');
        await recordError(ctx.db, problem, { source: 'http:register', now: ctx.clock.now() });
      }
      if (!verdict.ok && (verdict.reason === 'unavailable' || verdict.reason === 'misconfigured')) {
        if (verdict.reason === 'unavailable') request.log.warn('captcha verification service unavailable');
        return rejectForm(503, 'captcha_unavailable', parsed.values, [], 'We could not run the bot check just now. Please try again in a minute.');
      }
      if (!verdict.ok) {
        return rejectForm(400, 'captcha_failed', parsed.values, [], 'The bot check did not pass. Please complete it and submit again.');
      }
    }

    try {
      if (offerToken && !waitlistOffer) throw new OfferNotOpenError();
      const client = publicClient(request.ip, ctx.config.limits.churchNetworks);
      const outcome = await registerForEvent(ctx, event, {
        ...parsed.submission,
        client: client.key,
        fromChurchNetwork: client.churchNetwork,
        waitlistOffer,
        seen: read && { event: read.event, count: read.preloaded.count },
        cardFeeRate: read?.preloaded.cardFeeRate,
      });
      if (outcome.kind === 'checkout') {
        return reply.code(303).header('location', outcome.redirectUrl).send(json ? { checkoutId: outcome.checkoutId, redirectUrl: outcome.redirectUrl } : undefined);
      }
      // A registration just made has the first link version.
      const location = registrationPath(ctx.config.authSecret, outcome.registrationId, FIRST_LINK_VERSION, { confirmationHeldBack: outcome.confirmationHeldBack });
      const answer = { registrationId: outcome.registrationId, status: outcome.status, location, confirmationEmailed: !outcome.confirmationHeldBack };
      return reply.code(303).header('location', location).send(json ? answer : undefined);
    } catch (error) {
      if (error instanceof PricingError) {
        // Priced under the event's lock, perhaps after the office changed it (a free event now priced): the form again as
        // the event is now, so the choice the message asks for is there to make.
        const current = json ? event : ((await loadPublicEvent(ctx.db, event.slug)) ?? event);
        return rejectForm(400, 'invalid_registration', parsed.values, [{ field: error.field, message: error.message }], undefined, current);
      }
      // Too small to pay by card: the form again with bank transfer chosen, so one more submit registers it.
      if (error instanceof CardAmountTooSmallError) return refuse(error, { ...parsed.values, payment: 'bank' });
      // Over the unpaid places one connection may hold: the form again with card chosen, when the event takes cards.
      if (error instanceof UnpaidSeatCapError && error.cardOffered) return refuse(error, { ...parsed.values, payment: 'card' });
      if (error instanceof AppError && (error.httpStatus < 500 || error.code === 'provider_unavailable')) return refuse(error, parsed.values);
      throw error;
    }
  });
}
