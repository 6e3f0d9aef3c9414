import type { FastifyContextConfig, FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { secretsEqual } from '../crypto/field-cipher.js';
import { LeaseHeldError } from '../errors.js';
import { JobFailedError } from '../jobs/run-recorded.js';
import { loadJobFunction } from '../jobs/registry.js';
import { JOB_NAMES, type JobName, type JobSummary } from '../jobs/types.js';
import { sendError } from './errors.js';
import type { Telemetry } from '../telemetry.js';

export const CRON_SECRET_MISSING_WARNING =
  'CRON_SECRET is not set: every /api/cron/* call is refused with 503. Set CRON_SECRET in the app and the scheduler.';

/** Bearer check in constant time; the header must be exactly "Bearer <CRON_SECRET>". */
export function bearerMatches(header: string | undefined, secret: string): boolean {
  const match = /^Bearer (.+)$/.exec(header ?? '');
  return secretsEqual(match?.[1] ?? '', secret);
}

/** Wrong or missing bearers allowed per client address in a minute, over all cron endpoints together. */
export const FAILED_BEARERS_PER_MINUTE = 10;

/**
 * Only failed attempts count: a request carrying the right bearer is on the
 * allow list, so it is neither counted nor ever limited. Past the limit a
 * client gets 429 with Retry-After, before its bearer is even looked at.
 * Without CRON_SECRET there is no bearer to guess and every call answers 503,
 * so nothing is counted.
 */
function failedBearerLimit(ctx: AppContext): NonNullable<RateLimitOptions> {
  return {
    max: FAILED_BEARERS_PER_MINUTE,
    timeWindow: '1 minute',
    groupId: 'cron-bearer',
    allowList: (request) => {
      const secret = ctx.config.jobs.cronSecret;
      return secret ? bearerMatches(request.headers.authorization, secret) : true;
    },
  };
}
type RateLimitOptions = Exclude<FastifyContextConfig['rateLimit'], false>;

export interface CronRouteOptions {
  /** Called around each job run so shutdown can wait for it. */
  track<T>(work: Promise<T>): Promise<T>;
  /** Aborted at shutdown: passed to each job run. */
  stopping?: AbortSignal;
  telemetry?: Telemetry;
}

/**
 * POST /api/cron/<job>: the same job functions as the CLI and the scheduler,
 * trigger "http". 200 with the summary (500 with it when the outcome is `failed`), 401 wrong
 * bearer, 503 no CRON_SECRET, 409 lease held, 500 unexpected failure (with the error-log id),
 * 405 any other method (OPTIONS included).
 */
export function registerCronRoutes(parent: FastifyInstance, ctx: AppContext, options: CronRouteOptions): void {
  // A scope of their own (still under the parent's rate limiter) whose one body parser reads and drops whatever comes:
  // the endpoints take no payload, and a scheduler that declares a body type (`Content-Type: application/json` with
  // nothing after it, as curl -H sends it; an octet-stream) got 400 or 415 before its bearer was even looked at, and
  // the job never ran.
  void parent.register(async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: CRON_BODY_LIMIT }, (_request, _body, done) => done(null, undefined));
    registerJobRoutes(app, ctx, options);
  });
}

/** A body sent to a cron endpoint is never read; one larger than this is refused (413) rather than buffered. */
const CRON_BODY_LIMIT = 64 * 1024;

function registerJobRoutes(app: FastifyInstance, ctx: AppContext, options: CronRouteOptions): void {
  for (const job of JOB_NAMES) {
    const url = `/api/cron/${job}`;
    app.post<{ Querystring: { force?: string } }>(url, { config: { rateLimit: failedBearerLimit(ctx) } }, async (request, reply) => {
      const secret = ctx.config.jobs.cronSecret;
      if (!secret) {
        request.log.warn(CRON_SECRET_MISSING_WARNING);
        return sendError(reply, 503, 'cron_secret_unset', 'Cron endpoints are disabled until CRON_SECRET is set.');
      }
      if (!bearerMatches(request.headers.authorization, secret)) {
        reply.header('WWW-Authenticate', 'Bearer');
        return sendError(reply, 401, 'unauthorized', 'Missing or wrong bearer token.');
      }
      const span = options.telemetry?.startSpan(`job ${job}`, { 'eventops.trigger': 'http' });
      try {
        const run = await loadJobFunction(job as JobName);
        const summary: JobSummary = await options.track(
          run(ctx, { trigger: 'http', force: job === 'send-clearance-digest' && request.query.force === '1', signal: options.stopping }),
        );
        span?.setAttribute('eventops.outcome', summary.outcome);
        // A run that did none of its work (every send failed) is a failure to whoever scheduled it, as the CLI's exit 1 is.
        return reply.code(summary.outcome === 'failed' ? 500 : 200).send(summary);
      } catch (error) {
        span?.setError(error);
        if (error instanceof LeaseHeldError) {
          return sendError(reply, 409, 'lease_held', error.message, { heldSince: error.heldSince.toISOString() });
        }
        if (error instanceof JobFailedError) {
          // Already in the error log by the job runner: answer with that row's id. Id 0: the log could not be written.
          if (error.errorId > 0) return sendError(reply, 500, 'job_failed', `${job} failed; the error has been recorded.`, { id: error.errorId });
          return sendError(reply, 500, 'job_failed', `${job} failed, and the error log could not be written: is the database reachable?`);
        }
        throw error;
      } finally {
        span?.end();
      }
    });
    app.route({
      // Every method the server knows (OPTIONS and HEAD included), so none falls through to 404.
      method: app.supportedMethods.filter((method) => method !== 'POST'),
      url,
      handler: async (_request, reply) => {
        reply.header('Allow', 'POST');
        return sendError(reply, 405, 'method_not_allowed', 'Use POST.');
      },
    });
  }
}
