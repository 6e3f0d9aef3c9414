/**
 * Routes whose path carries a secret, as fastify patterns: every `:param` segment of them is a token that opens
 * something (an unsubscribe link today; check-in and manage links belong here too) and never reaches a log. Query
 * strings (the registration and pay-now pages' ?token=…, provider session ids) are dropped from logged paths whole.
 */
/** The celebration emails' unsubscribe link (GET shows, POST unsubscribes). */
export const UNSUBSCRIBE_ROUTE = '/celebrations/unsubscribe/:token';

/** The registrant's "Manage your registration" link (GET shows; /details, /cancel and /ask-cancel below it). */
export const MANAGE_ROUTE = '/manage/:token';

/** An email change's links (family/email-change.ts): the new address confirms, the old one undoes. */
export const EMAIL_CHANGE_CONFIRM_ROUTE = '/email-change/confirm/:token';
export const EMAIL_CHANGE_UNDO_ROUTE = '/email-change/undo/:token';

/** The waiting-list emails' leave link (GET shows, POST leaves). */
export const WAITLIST_LEAVE_ROUTE = '/waitlist/leave/:token';

/** The waiting-list join email's confirm link (GET shows, POST confirms). */
export const WAITLIST_CONFIRM_ROUTE = '/waitlist/confirm/:token';

/** A volunteer's check-in link (GET shows the roll; /actions and /pay below it). */
export const CHECKIN_ROUTE = '/checkin/:token';

export const SECRET_PATH_ROUTES: readonly string[] = [
  UNSUBSCRIBE_ROUTE,
  MANAGE_ROUTE,
  WAITLIST_LEAVE_ROUTE,
  WAITLIST_CONFIRM_ROUTE,
  CHECKIN_ROUTE,
  EMAIL_CHANGE_CONFIRM_ROUTE,
  EMAIL_CHANGE_UNDO_ROUTE,
];

export const REDACTED_SEGMENT = '[redacted]';

interface SecretRoute {
  /** Each segment: a literal to match, or null for a token. */
  segments: Array<string | null>;
}

const compiled: SecretRoute[] = SECRET_PATH_ROUTES.map((route) => ({
  segments: route
    .split('/')
    .filter(Boolean)
    .map((segment) => (segment.startsWith(':') ? null : segment.toLowerCase())),
}));

/**
 * A request URL as logs may show it: without its query string, and with the token segments of a secret route
 * replaced by "[redacted]". Matched loosely (case, percent-encoding, repeated slashes, extra segments after the
 * token) so that a mistyped or unmatched variant of a link, answered 404, does not log its token either.
 */
export function pathForLog(url: string): string {
  const path = url.split('?')[0] ?? '';
  const segments = path.split('/');
  const named = segments.map((segment, index) => ({ index, text: decoded(segment).toLowerCase() })).filter((s) => s.text !== '');
  for (const route of compiled) {
    if (named.length < route.segments.length) continue;
    const matches = route.segments.every((literal, i) => literal === null || named[i]?.text === literal);
    if (!matches) continue;
    const redacted = [...segments];
    route.segments.forEach((literal, i) => {
      const at = named[i]?.index;
      if (literal === null && at !== undefined) redacted[at] = REDACTED_SEGMENT;
    });
    // Whatever follows a token is the link's too (a token split by a stray slash).
    for (const rest of named.slice(route.segments.length)) redacted[rest.index] = REDACTED_SEGMENT;
    return redacted.join('/');
  }
  return path;
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
