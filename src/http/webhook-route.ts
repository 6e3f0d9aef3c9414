import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { UnknownKeyVersionError } from '../crypto/field-cipher.js';
import { WEBHOOK_PATH } from '../payments/provider.js';
import { handleWebhookAction } from '../payments/webhook/handle.js';
import { mapWebhookEvent } from '../payments/webhook/map.js';
import { alertUnreadablePayment } from '../payments/webhook/unreadable.js';
import { verifyWebhookDelivery } from '../payments/webhook/verify.js';
import { sendError } from './errors.js';

/** Provider events are a few kilobytes; anything near this is not one. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;

/**
 * POST /api/stripe/webhook (decisions.md "HTTP answers"):
 * - 503 payments_disabled while PSP_SECRET_KEY/PSP_WEBHOOK_SECRET are unset (no secret to verify with; the
 *   provider keeps retrying, so deliveries made during a misconfiguration are not lost once it is fixed);
 * - 400 invalid_signature for a missing, wrong or stale Stripe-Signature: the body is neither parsed nor logged;
 * - 413 above 1 MB;
 * - 200 once handled, including ignored types, redeliveries and outcomes that end UNFULFILLED;
 * - 500 when the work could not be done (database unavailable, a staged registration under a key this
 *   server lacks: that one also raises an operations alert), so the provider delivers again.
 * Logs carry the event id, type and outcome only.
 *
 * The route lives in its own encapsulated plugin whose only body parser keeps
 * the raw bytes (the signature is over them), so the rest of the app keeps its
 * JSON and form parsing.
 */
export function registerWebhookRoute(app: FastifyInstance, ctx: AppContext): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_request, body, done) => {
      done(null, body);
    });

    scope.post(WEBHOOK_PATH, { bodyLimit: WEBHOOK_BODY_LIMIT }, async (request, reply) => {
      const payments = ctx.config.payments;
      if (!payments) {
        request.log.warn('a webhook delivery arrived but card payments are not configured (PSP_SECRET_KEY, PSP_WEBHOOK_SECRET)');
        return sendError(reply, 503, 'payments_disabled', 'Card payments are not configured on this server.');
      }
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const verified = await verifyWebhookDelivery(raw, request.headers['stripe-signature'], payments.webhookSecret);
      if (!verified.ok) {
        return verified.problem === 'invalid_signature'
          ? sendError(reply, 400, 'invalid_signature', 'The Stripe-Signature header is missing, wrong or too old.')
          : sendError(reply, 400, 'invalid_payload', 'The signed body is not a provider event.');
      }

      const { event } = verified;
      const logFields = { eventId: event.id, eventType: event.type };
      const action = mapWebhookEvent(event);
      if (action.kind === 'ignore') {
        request.log.info({ ...logFields, outcome: 'ignored' }, 'webhook event ignored');
        return reply.code(200).send({ received: true, outcome: 'ignored' });
      }
      try {
        const outcome = await handleWebhookAction(ctx, { id: event.id, type: event.type }, action);
        request.log.info({ ...logFields, outcome }, 'webhook event handled');
        return reply.code(200).send({ received: true, outcome });
      } catch (error) {
        request.log.warn(logFields, 'webhook event not handled; the provider will deliver it again');
        if (error instanceof UnknownKeyVersionError) {
          await alertUnreadablePayment(ctx, error, { eventId: event.id, action }).catch((alertError: unknown) =>
            request.log.error({ ...logFields, err: alertError }, 'could not raise the alert for a payment under a missing key'),
          );
        }
        throw error;
      }
    });

    scope.route({
      method: ['GET', 'PUT', 'PATCH', 'DELETE'],
      url: WEBHOOK_PATH,
      handler: async (_request, reply) => {
        reply.header('Allow', 'POST');
        return sendError(reply, 405, 'method_not_allowed', 'Use POST.');
      },
    });
  });
}
