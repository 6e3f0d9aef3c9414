import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { loadChurchIdentity } from '../mail/identity.js';
import { CRON_SECRET_MISSING_WARNING, registerCronRoutes } from './cron-routes.js';
import { createErrorHandler, sendError } from './errors.js';
import { registerHealthRoute } from './health.js';
import { registerPublicPages } from './public-pages.js';
import { registerRegistrationRoute } from './register-route.js';
import { registerSetupRoutes } from './setup-routes.js';
import { registerWebhookRoute } from './webhook-route.js';
import { captchaMissingInProduction, NO_CAPTCHA_WARNING } from '../payments/captcha.js';
import type { Telemetry, TelemetrySpan } from '../telemetry.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Public page: record a route-view row (path template only, never the query string). */
    recordView?: boolean;
  }
}

export type PageRenderer = <D extends object>(
  reply: FastifyReply,
  render: (data: D & { title: string; refreshSeconds?: number }, shell: { churchName: string; theme: AppContext['config']['theme']; lang: string }) => string,
  data: D & { title: string; refreshSeconds?: number },
) => Promise<FastifyReply>;

export interface BuiltServer {
  app: FastifyInstance;
  /** Resolves when no tracked job is running (used by graceful shutdown). */
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
    // Only the immediate peer (our proxy) is trusted, so the client is the address it appended: the last
    // X-Forwarded-For entry. Trusting every hop (true) would take the first entry, which the client writes
    // itself, and let it choose its own rate-limit key.
    trustProxy: ctx.config.http.trustProxy ? (_address: string, hop: number) => hop === 0 : false,
    bodyLimit: options.bodyLimit ?? 256 * 1024,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    logController: new OneLinePerRequest(),
  });
  await app.register((await import('@fastify/formbody')).default);
  await app.register((await import('@fastify/rate-limit')).default, {
    global: false,
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `Too many requests; try again in ${Math.ceil(context.ttl / 1000)} seconds.`, { httpStatus: 429 }),
  });

  const running = new Set<Promise<unknown>>();
  const track = <T>(work: Promise<T>): Promise<T> => {
    running.add(work);
    void work.then(
      () => running.delete(work),
      () => running.delete(work),
    );
    return work;
  };

  const page: PageRenderer = async (reply, render, data) => {
    const identity = await loadChurchIdentity(ctx.db, ctx.config);
    const html = render(data, { churchName: identity.name, theme: ctx.config.theme, lang: ctx.config.regional.locale });
    return reply.type('text/html; charset=utf-8').send(html);
  };

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

  app.addHook('onResponse', async (request, reply) => {
    if (!request.routeOptions.config.recordView || reply.statusCode >= 400) return;
    const path = request.routeOptions.url ?? request.url.split('?')[0];
    await ctx.db('route_views').insert({ path, created_at: ctx.clock.now() }).catch((error: unknown) => {
      request.log.warn({ err: error }, 'could not record a page view');
    });
  });

  app.setErrorHandler(createErrorHandler(ctx));
  app.setNotFoundHandler(async (_request, reply) => sendError(reply, 404, 'not_found', 'Nothing is here.'));

  registerHealthRoute(app, ctx, options.packageVersion);
  registerCronRoutes(app, ctx, { track, telemetry });
  registerSetupRoutes(app, ctx, page);
  registerPublicPages(app, ctx, page);
  registerRegistrationRoute(app, ctx, page);
  registerWebhookRoute(app, ctx);

  if (!ctx.config.jobs.cronSecret) ctx.logger.warn(CRON_SECRET_MISSING_WARNING);
  if (captchaMissingInProduction(ctx.config)) await warnOpenRegistrationWithoutCaptcha(ctx);
  if (ctx.config.replicaCount > 1) {
    ctx.logger.warn(`CONTAINER_APP_REPLICA_COUNT is ${ctx.config.replicaCount}: run a single replica, the rate limiter is in memory`);
  }

  return {
    app,
    idle: async () => {
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
