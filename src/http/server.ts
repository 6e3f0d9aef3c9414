import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { churchIdentityFrom, loadChurchIdentity, type ChurchIdentity } from '../mail/identity.js';
import { CRON_SECRET_MISSING_WARNING, registerCronRoutes } from './cron-routes.js';
import { createErrorHandler, createFrameworkErrorHandler, sendErrorFor } from './errors.js';
import type { PageRenderer } from './pages.js';
import { securityHeaders, securityHeadersSetter } from './security-headers.js';
import { registerBrowserAssets } from './browser-assets.js';
import { registerHealthRoute } from './health.js';
import { registerPublicPages } from './public-pages.js';
import { registerEventsListPage } from './events-list-routes.js';
import { publicClient } from '../client-key.js';
import { postgresRateLimitStore } from './rate-limit-store.js';
import { registerRegistrationRoute } from './register-route.js';
import { registerSetupRoutes } from './setup-routes.js';
import { registerUnsubscribeRoutes } from './unsubscribe-routes.js';
import { registerManageRoutes } from './manage-routes.js';
import { registerEmailChangeRoutes } from './email-change-routes.js';
import { registerWaitlistRoutes } from './waitlist-routes.js';
import { registerCheckinRoutes } from './checkin-routes.js';
import { registerWebhookRoute } from './webhook-route.js';
import { captchaMissingInProduction, NO_CAPTCHA_WARNING } from '../payments/captcha.js';
import type { Telemetry, TelemetrySpan } from '../telemetry.js';
import { routeViewCounter } from '../ops/route-views.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Public page: count a view of its path template (never the query string) for the day. */
    recordView?: boolean;
  }
}

/** The whole request, headers and body, must arrive within this. */
export const REQUEST_TIMEOUT_MS = 20_000;
export const HEADERS_TIMEOUT_MS = 10_000;

export interface BuiltServer {
  app: FastifyInstance;
  /**
   * For graceful shutdown: asks the running cron jobs to stop early (send-reminders leaves the rest of its
   * event for the next run) and resolves when none is running.
   */
  idle(): Promise<void>;
}

/**
 * The HTTP server: cron endpoints, first-admin setup, health. Fastify with the
 * context's pino logger; request logs carry no secrets, Authorization headers
 * or bodies.
 */
export async function buildServer(
  ctx: AppContext,
  options: { bodyLimit?: number; packageVersion?: string; telemetry?: Telemetry } = {},
): Promise<BuiltServer> {
  const { default: Fastify } = await import('fastify');
  /** One log line per request, written when it is answered, with the request's method and path (fastify writes two). */
  class OneLinePerRequest extends Fastify.LogController {
    override incomingRequest(): void {}
    override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
      const fields = { req: request, res: { statusCode: reply.statusCode }, responseTime: Math.round(reply.elapsedTime * 10) / 10 };
      if (error) reply.log.error({ ...fields, err: error }, 'request errored');
      else reply.log.info(fields, 'request completed');
    }
  }
  const app: FastifyInstance = Fastify({
    loggerInstance: ctx.logger as FastifyBaseLogger,
    // Only hops whose address TRUST_PROXY lists are believed (proxy-addr): walking back from the connection
    // through X-Forwarded-For, the first address not trusted is the client. So a client that connects directly,
    // or one that writes its own entries in front of what our proxy appended, cannot choose its rate-limit key.
    trustProxy: ctx.config.http.trustProxy ? [...ctx.config.http.trustProxy] : false,
    bodyLimit: options.bodyLimit ?? 256 * 1024,
    // A request (headers and body) must arrive whole within 20 s, its headers within 10 s; Node checks every
    // 2 s, so a body trickled a byte at a time is closed with 408 within about 22 s. Only the arrival is
    // bounded: a cron job may take minutes to answer, so there is no idle socket timeout (connectionTimeout).
    requestTimeout: REQUEST_TIMEOUT_MS,
    http: { headersTimeout: HEADERS_TIMEOUT_MS, connectionsCheckingInterval: 2_000 },
    // Longer than the usual 60 s idle timeout of a proxy in front, so the proxy, not us, closes an idle connection.
    keepAliveTimeout: 72_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    logController: new OneLinePerRequest(),
    frameworkErrors: createFrameworkErrorHandler(securityHeadersSetter(ctx.config)),
  });
  await app.register((await import('@fastify/formbody')).default);
  await app.register((await import('@fastify/helmet')).default, securityHeaders(ctx.config));

  const running = new Set<Promise<unknown>>();
  const stopping = new AbortController();
  const track = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    void work.then(
      () => running.delete(work),
      () => running.delete(work),
    );
    return work;
  };

  const renderer =
    (identity: () => Promise<ChurchIdentity>): PageRenderer =>
    async (reply, render, data, known) => {
      const { name } = known ?? (await identity());
      const html = render(data, { churchName: name, theme: ctx.config.theme, lang: ctx.config.regional.locale, cspNonce: reply.cspNonce });
      return reply.type('text/html; charset=utf-8').send(html);
    };
  const page = renderer(() => loadChurchIdentity(ctx.db, ctx.config));
  // Error pages answer when the database is down too: the church's name then comes from configuration.
  const errorPage = renderer(() => loadChurchIdentity(ctx.db, ctx.config).catch(() => churchIdentityFrom({}, ctx.config)));

  const telemetry = options.telemetry;
  if (telemetry) {
    const spans = new WeakMap<object, TelemetrySpan>();
    app.addHook('onRequest', async (request) => {
      spans.set(request, telemetry.startSpan(`${request.method} ${request.routeOptions.url ?? 'unmatched'}`, { 'http.method': request.method }));
    });
    app.addHook('onResponse', async (request, reply) => {
      const span = spans.get(request);
      span?.setAttribute('http.status_code', reply.statusCode);
      span?.end();
    });
  }

  const views = routeViewCounter(ctx.db);
  app.addHook('onResponse', async (request, reply) => {
    // HEAD is a monitor or a link checker, not a reader.
    if (!request.routeOptions.config.recordView || request.method !== 'GET' || reply.statusCode >= 400) return;
    const path = request.routeOptions.url ?? request.url.split('?')[0] ?? request.url;
    // Not waited for: a busy page's view waits up to a second to be written with the others (routeViewCounter).
    void views.count(path, ctx.clock.now()).catch((error: unknown) => {
      request.log.warn({ err: error }, 'could not record a page view');
    });
  });
  // The views still waiting for their write, before the database is closed.
  app.addHook('onClose', async () => {
    await views.flush().catch((error: unknown) => app.log.warn({ err: error }, 'could not record the last page views'));
  });

  app.setErrorHandler(createErrorHandler(ctx, errorPage));
  app.setNotFoundHandler(async (request, reply) => sendErrorFor(errorPage, request, reply, 404, 'not_found', 'Nothing is here.'));

  registerHealthRoute(app, ctx, options.packageVersion);
  registerBrowserAssets(app);
  registerWebhookRoute(app, ctx);
  const rateLimit = (await import('@fastify/rate-limit')).default;
  const rateLimited = (_request: FastifyRequest, context: { ttl: number }) =>
    new AppError('rate_limited', `Too many requests; try again in ${Math.ceil(context.ttl / 1000)} seconds.`, { httpStatus: 429 });
  // Read by PUBLIC_FORM_RATE_LIMIT's max for a client on one of the church's own networks.
  app.decorate('churchNetworkFormPostsPerMinute', ctx.config.limits.churchNetworkFormPostsPerMinute);
  // Every limit (failed cron bearers, setup attempts, public form posts) is counted in PostgreSQL: shared by
  // every server on the database and kept over restarts.
  await app.register(async (scope) => {
    await scope.register(rateLimit, {
      global: false,
      store: postgresRateLimitStore(ctx),
      // A client on one of the church's own networks is counted apart (and its form limit is the church's).
      keyGenerator: (request) => publicClient(request.ip, ctx.config.limits.churchNetworks).key,
      errorResponseBuilder: rateLimited,
    });
    registerCronRoutes(scope, ctx, { track, stopping: stopping.signal, telemetry });
    registerSetupRoutes(scope, ctx, page);
    registerPublicPages(scope, ctx, page, errorPage);
    registerEventsListPage(scope, ctx, page);
    registerRegistrationRoute(scope, ctx, page);
    registerUnsubscribeRoutes(scope, ctx, page);
    registerManageRoutes(scope, ctx, page);
    registerEmailChangeRoutes(scope, ctx, page);
    registerWaitlistRoutes(scope, ctx, page);
    registerCheckinRoutes(scope, ctx, page);
  });

  if (!ctx.config.jobs.cronSecret) ctx.logger.warn(CRON_SECRET_MISSING_WARNING);
  if (captchaMissingInProduction(ctx.config)) await warnOpenRegistrationWithoutCaptcha(ctx);

  return {
    app,
    idle: async () => {
      stopping.abort();
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

/** Says how many events take registrations right now, so the warning is concrete; a database error only loses the count. */
async function warnOpenRegistrationWithoutCaptcha(ctx: AppContext): Promise<void> {
  const open = await ctx.db('events')
    .where({ published: true })
    .whereNull('deleted_at')
    .where('starts_at', '>', ctx.clock.now())
    .count<{ n: number }>({ n: '*' })
    .first()
    .then((row) => Number(row?.n ?? 0))
    .catch(() => undefined);
  ctx.logger.warn({ openEvents: open }, NO_CAPTCHA_WARNING);
}
