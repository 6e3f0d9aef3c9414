import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { recordError } from '../ops/error-log.js';

export interface ErrorBody {
  error: { code: string; message: string; id?: number } & Record<string, unknown>;
}

/** The one error body of every endpoint (decisions.md "HTTP answers"). */
export function errorBody(code: string, message: string, extra: Record<string, unknown> = {}): ErrorBody {
  return { error: { code, message, ...extra } };
}

export function sendError(reply: FastifyReply, status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
  return reply.code(status).type('application/json; charset=utf-8').send(errorBody(code, message, extra));
}

interface FrameworkError extends Error {
  statusCode?: number;
  code?: string;
  validation?: unknown;
}

/**
 * Every error no route answered itself: client errors keep their status, and
 * anything else becomes a 500 carrying the id of its error-log row.
 */
export function createErrorHandler(ctx: AppContext) {
  return async (error: FrameworkError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof AppError && error.httpStatus < 500) {
      return sendError(reply, error.httpStatus, error.code, error.message);
    }
    if (!(error instanceof AppError) && error.statusCode && error.statusCode < 500) {
      const code = error.validation ? 'invalid_request' : (error.code ?? 'bad_request').toLowerCase();
      return sendError(reply, error.statusCode, code, error.message);
    }
    const id = await recordError(ctx.db, withoutBodyValues(error, request.body), {
      source: 'http',
      now: ctx.clock.now(),
      context: { method: request.method, route: request.routeOptions.url ?? 'unmatched' },
    }).catch(() => undefined);
    request.log.error({ err: error, errorId: id }, 'request failed');
    return sendError(reply, 500, 'internal_error', 'Something went wrong on our side; the error has been recorded.', id ? { id } : {});
  };
}

/** What fastify's own refusals before routing say, in our words; its codes name only what it refused. */
const FRAMEWORK_ERRORS: Record<string, { code: string; message: string }> = {
  FST_ERR_BAD_URL: { code: 'bad_url', message: 'This address is not valid.' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'url_too_long', message: 'This address is too long.' },
};

/**
 * fastify's frameworkErrors option: what it refuses before any route or hook runs (an address that
 * cannot be decoded, a path part too long) gets the one error body and, set here as no hook runs,
 * the security headers every answer carries.
 */
export function createFrameworkErrorHandler(setSecurityHeaders: (request: FastifyRequest['raw'], response: FastifyReply['raw']) => void) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    setSecurityHeaders(request.raw, reply.raw);
    const known = FRAMEWORK_ERRORS[error.code];
    if (known) return sendError(reply, error.statusCode ?? 400, known.code, known.message);
    return sendError(reply, error.statusCode ?? 500, (error.code ?? 'bad_request').toLowerCase(), error.message);
  };
}

/** Submitted values shorter than this are words like "bank" that say nothing about anyone. */
const MIN_REDACTED_LENGTH = 4;

function bodyStrings(body: unknown, found: Set<string> = new Set(), depth = 0): Set<string> {
  if (typeof body === 'string') {
    if (body.length >= MIN_REDACTED_LENGTH) found.add(body);
  } else if (body && typeof body === 'object' && depth < 5) {
    for (const value of Object.values(body)) bodyStrings(value, found, depth + 1);
  }
  return found;
}

/**
 * The error as it goes into the error log, with every value of the request
 * body cut out of its message and stack: a failure caused by what someone
 * typed into a public form must not copy their name or address into a table
 * that is kept for 90 days and filed to the issue tracker.
 */
export function withoutBodyValues(error: Error, body: unknown): Error {
  const values = [...bodyStrings(body)].sort((a, b) => b.length - a.length);
  if (values.length === 0) return error;
  const scrub = (text: string) => values.reduce((out, value) => out.split(value).join('<submitted value>'), text);
  // Same class (the fingerprint uses it), scrubbed message and stack.
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
  Object.defineProperties(copy, {
    message: { value: scrub(error.message), writable: true, configurable: true },
    stack: { value: error.stack === undefined ? undefined : scrub(error.stack), writable: true, configurable: true },
  });
  return copy;
}
