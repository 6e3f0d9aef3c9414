import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { recordError } from '../ops/error-log.js';
import type { PageRenderer } from './pages.js';
import { messagePage, type MessagePageData } from './templates/message-page.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A form route: what its body typed, for the unexpected-failure page to send again (see createErrorHandler). */
    resendOnError?: (body: unknown) => Array<{ name: string; value: string }>;
  }
}

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

/**
 * Whether an error is answered with a page rather than the JSON body (decisions.md "Error pages"):
 * yes for what a browser asks, that is anything but an /api/ address (cron jobs, the webhook), a
 * JSON body, or an Accept header that names JSON and not HTML.
 */
export function answersWithPage(request: FastifyRequest): boolean {
  if (request.url.startsWith('/api/')) return false;
  if ((request.headers['content-type'] ?? '').toLowerCase().startsWith('application/json')) return false;
  const accept = (request.headers.accept ?? '').toLowerCase();
  return !(accept.includes('application/json') && !accept.includes('text/html'));
}

const PAGE_HEADINGS: Record<number, string> = {
  404: 'Not found',
  413: 'Too much was sent',
  415: 'Not a form we can read',
  429: 'Too many tries',
  500: 'Something went wrong',
};

/** The error as the message page says it: the same status and message (and error id) as the JSON body. */
function sendErrorPage(page: PageRenderer, reply: FastifyReply, status: number, message: string, more: Pick<MessagePageData, 'errorId' | 'resend'> = {}) {
  const heading = PAGE_HEADINGS[status] ?? 'That did not work';
  return page(reply.code(status), messagePage, { title: heading, heading, message, ...more });
}

/** The JSON error body, or for a browser's request the message page saying the same. */
export function sendErrorFor(
  page: PageRenderer,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  code: string,
  message: string,
  extra: { id?: number } = {},
  resend?: MessagePageData['resend'],
) {
  if (answersWithPage(request)) return sendErrorPage(page, reply, status, message, { errorId: extra.id, resend });
  return sendError(reply, status, code, message, extra);
}

interface FrameworkError extends Error {
  statusCode?: number;
  code?: string;
  validation?: unknown;
}

/** Said only when the error-log row was written: the id shown with it is what the office can look up. */
export const RECORDED_FAILURE_MESSAGE = 'Something went wrong on our side; the error has been recorded.';
/** When even the error log could not be written (the database is down): nothing to look up, so no claim. */
export const UNRECORDED_FAILURE_MESSAGE = 'Something went wrong on our side. Please try again in a few minutes.';

/** A failed form post's typed fields, to send again from the page; not kept anywhere, and the page is not cached. */
function resendOf(request: FastifyRequest, reply: FastifyReply, botCheck: boolean): MessagePageData['resend'] {
  const fields = request.routeOptions.config?.resendOnError?.(request.body) ?? [];
  if (fields.length === 0) return undefined;
  reply.header('cache-control', 'no-store');
  return { action: request.url, fields, botCheck };
}

/**
 * Every error no route answered itself: client errors keep their status, and
 * anything else becomes a 500 carrying the id of its error-log row, when it
 * could be written. A browser gets it as a page (`errorPage` must not need the
 * database: it answers when the database is what failed), with a form post's
 * fields to send again.
 */
export function createErrorHandler(ctx: AppContext, errorPage: PageRenderer) {
  return async (error: FrameworkError, request: FastifyRequest, reply: FastifyReply) => {
    const answer = (status: number, code: string, message: string, extra?: { id?: number }) =>
      sendErrorFor(errorPage, request, reply, status, code, message, extra);
    if (error instanceof AppError && error.httpStatus < 500) {
      return answer(error.httpStatus, error.code, error.message);
    }
    if (!(error instanceof AppError) && error.statusCode && error.statusCode < 500) {
      const code = error.validation ? 'invalid_request' : (error.code ?? 'bad_request').toLowerCase();
      return answer(error.statusCode, code, error.message);
    }
    const id = await recordError(ctx.db, withoutBodyValues(error, request.body), {
      source: 'http',
      now: ctx.clock.now(),
      context: { method: request.method, route: request.routeOptions.url ?? 'unmatched' },
    }).catch(() => undefined);
    request.log.error({ err: error, errorId: id }, 'request failed');
    const message = id ? RECORDED_FAILURE_MESSAGE : UNRECORDED_FAILURE_MESSAGE;
    const resend = answersWithPage(request) ? resendOf(request, reply, ctx.config.captcha !== undefined) : undefined;
    return sendErrorFor(errorPage, request, reply, 500, 'internal_error', message, id ? { id } : {}, resend);
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
