import http from 'node:http';
import net from 'node:net';
import Stripe from 'stripe';
import fc from 'fast-check';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { FAILED_BEARERS_PER_MINUTE } from '../../src/http/cron-routes.js';
import { WEBHOOK_BODY_LIMIT } from '../../src/http/webhook-route.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { insertEvent, insertRegistration } from '../../test/support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../../test/support/payments-harness.js';
import { buildProviderEvent, type ProviderObject } from '../../test/support/provider-fixtures.js';
import { createRandom, type Random } from '../../test/support/random.js';
import { TEST_KEYS, testEnv } from '../../test/support/env.js';
import { TEST_WEBHOOK_SECRET, completedSession, stageNewRegistrationCheckout } from '../../test/support/webhook-events.js';
import { plusAddressingHeld, sendPlusAddressedPosts } from './hostile-mailbox.js';
import { probeOfferExtensionLoop, probePayNowLoop, probeTwoCheckoutsFromOneOffer } from './hostile-holds.js';

/**
 * Case 7, hostile input: forged, stale, tampered, oversized and mislabelled
 * webhook requests; a fuzzed public registration form; malformed
 * configuration. Each must be refused with a client error that names what is
 * wrong, change nothing, and never echo or log what was sent. Last, the
 * hold-extension probes (hostile-holds.ts): reopening card checkouts never keeps
 * an offer or an unpaid hold past its stated end, and never costs an innocent
 * payer their places.
 */

// ---------------------------------------------------------------- webhook

export const HOSTILE_MARKER = 'hostile-marker';

export type HostileKind =
  | 'no_signature'
  | 'wrong_secret'
  | 'stale_timestamp'
  | 'tampered_body'
  | 'malformed_header'
  | 'huge_body'
  | 'huge_body_chunked'
  | 'wrong_content_type';

const KINDS: Array<[HostileKind, number]> = [
  ['no_signature', 18],
  ['wrong_secret', 18],
  ['stale_timestamp', 16],
  ['tampered_body', 18],
  ['malformed_header', 12],
  ['huge_body', 3],
  ['huge_body_chunked', 2],
  ['wrong_content_type', 13],
];

export interface HostileRequest {
  kind: HostileKind;
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** Send without Content-Length, in chunks. */
  chunked: boolean;
  /** The answers that count as refusing it. */
  expected: number[];
}

export interface WebhookTarget {
  checkoutId: string;
  providerSessionId: string;
  amount: number;
}

const CONTENT_TYPES = ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream', ''];

/** A delivery that would complete the target checkout if it were accepted, carrying a marker that must never be logged. */
function eventFor(target: WebhookTarget, n: number, random: Random): ProviderObject {
  const session = completedSession({ ...target, amountTotal: target.amount });
  const type = random.pick(['checkout.session.completed', 'checkout.session.async_payment_succeeded', 'charge.refunded']);
  return buildProviderEvent(type, { ...session, client_reference_id: `${HOSTILE_MARKER}-${n}`, customer_email: `${HOSTILE_MARKER}-${n}@example.org` });
}

function sign(payload: string, secret: string, timestamp?: number): string {
  return Stripe.webhooks.generateTestHeaderString({ payload, secret, ...(timestamp === undefined ? {} : { timestamp }) });
}

export function hostileWebhookRequest(target: WebhookTarget, n: number, random: Random): HostileRequest {
  const kind = random.weighted(KINDS);
  const payload = JSON.stringify(eventFor(target, n, random), null, 2);
  const json = { 'content-type': 'application/json; charset=utf-8' };
  const now = Math.floor(Date.now() / 1000);
  switch (kind) {
    case 'no_signature':
      return { kind, headers: json, body: Buffer.from(payload), chunked: false, expected: [400] };
    case 'wrong_secret':
      return {
        kind,
        headers: { ...json, 'stripe-signature': sign(payload, random.pick(['whsec_forged', `${TEST_WEBHOOK_SECRET}x`, '', 'sk_test_eventops'])) },
        body: Buffer.from(payload),
        chunked: false,
        expected: [400],
      };
    case 'stale_timestamp':
      // Signed with the real secret, but older than the five-minute tolerance (a replay).
      return {
        kind,
        headers: { ...json, 'stripe-signature': sign(payload, TEST_WEBHOOK_SECRET, now - random.int(301, 86_400 * 30)) },
        body: Buffer.from(payload),
        chunked: false,
        expected: [400],
      };
    case 'tampered_body': {
      const signature = sign(payload, TEST_WEBHOOK_SECRET);
      const tampered = random.chance(0.5)
        ? payload.replace(`"amount_total": ${target.amount}`, `"amount_total": ${target.amount - random.int(1, 1000)}`)
        : `${payload} `;
      return { kind, headers: { ...json, 'stripe-signature': signature }, body: Buffer.from(tampered), chunked: false, expected: [400] };
    }
    case 'malformed_header': {
      const good = sign(payload, TEST_WEBHOOK_SECRET);
      const header = random.pick<string | string[]>([
        '',
        't=,v1=',
        `t=${now}`,
        `v1=${good.split('v1=')[1] ?? ''}`,
        `t=not-a-number,v1=${'0'.repeat(64)}`,
        `t=${now},v1=${'z'.repeat(64)},v0=${'a'.repeat(64)}`,
        'x'.repeat(8000),
        [`t=${now},v1=${'0'.repeat(64)}`, `t=${now},v1=${'1'.repeat(64)}`],
      ]);
      return { kind, headers: { ...json, 'stripe-signature': header }, body: Buffer.from(payload), chunked: false, expected: [400] };
    }
    case 'huge_body':
    case 'huge_body_chunked': {
      const padding = `"${HOSTILE_MARKER}":"${'A'.repeat(WEBHOOK_BODY_LIMIT + random.int(1, 64 * 1024))}"`;
      const huge = `${payload.slice(0, -1)},${padding}}`;
      // Even correctly signed: anything over the limit is refused before it is read.
      return {
        kind,
        headers: { ...json, 'stripe-signature': sign(huge, TEST_WEBHOOK_SECRET) },
        body: Buffer.from(huge),
        chunked: kind === 'huge_body_chunked',
        expected: [413],
      };
    }
    case 'wrong_content_type': {
      const contentType = random.pick(CONTENT_TYPES);
      const body = contentType.startsWith('application/x-www-form-urlencoded') ? `payload=${encodeURIComponent(payload)}` : payload;
      const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
      if (random.chance(0.5)) headers['stripe-signature'] = sign(body, 'whsec_forged');
      return { kind, headers, body: Buffer.from(body), chunked: false, expected: [400] };
    }
  }
}

/** POSTs raw bytes and reports the status, even when the server answers before reading the whole body. */
export function rawPost(url: string, request: Pick<HostileRequest, 'headers' | 'body' | 'chunked'>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: http.OutgoingHttpHeaders = { ...request.headers };
    if (!request.chunked) headers['content-length'] = request.body.length;
    const req = http.request(url, { method: 'POST', headers, timeout: 20_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // A server refusing an oversized body may close the socket while we still write: the answer is what counts.
    req.on('error', (error) => (answered ? undefined : reject(error)));
    let answered = false;
    req.on('response', () => (answered = true));
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    if (request.chunked) {
      const size = 64 * 1024;
      let offset = 0;
      const writeMore = (): void => {
        while (offset < request.body.length) {
          const chunk = request.body.subarray(offset, offset + size);
          offset += size;
          if (!req.write(chunk)) {
            req.once('drain', writeMore);
            return;
          }
        }
        req.end();
      };
      writeMore();
    } else {
      req.end(request.body);
    }
  });
}

export interface HostileWebhookReport {
  seed: number;
  sent: number;
  byKind: Partial<Record<HostileKind, number>>;
  /** Requests not answered with their expected refusal: "<kind> → <status>". */
  unexpected: string[];
  /** Error bodies that are not the documented JSON error body. */
  badBodies: number;
  /** Rows the requests caused (processed events, registrations, alerts, error-log rows, changed checkouts). */
  rowsWritten: number;
  /** Log lines that carry any part of a request body. */
  leakedLogLines: string[];
}

/** Sends `count` hostile webhook requests at a running server whose logs are captured, then looks for traces. */
export async function sendHostileWebhooks(harness: PaymentsHarness, count: number, seed = Math.floor(Math.random() * 2 ** 31)): Promise<HostileWebhookReport> {
  const random = createRandom(seed);
  const { db } = harness.tdb;
  const event = await insertEvent(db, { online_payment: true });
  const target = await stageNewRegistrationCheckout(harness.ctx, event);
  const before = await rowCounts(harness);
  const url = `${harness.server.url}/api/stripe/webhook`;
  const byKind: Partial<Record<HostileKind, number>> = {};
  const unexpected: string[] = [];
  let badBodies = 0;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const n = next++;
      const request = hostileWebhookRequest(target, n, random);
      byKind[request.kind] = (byKind[request.kind] ?? 0) + 1;
      const answer = await rawPost(url, request);
      if (!request.expected.includes(answer.status)) unexpected.push(`${request.kind} → ${answer.status} ${answer.body.slice(0, 200)}`);
      if (!isErrorBody(answer.body)) badBodies += 1;
    }
  };
  await Promise.all(Array.from({ length: 12 }, worker));
  const after = await rowCounts(harness);
  const rowsWritten = Object.keys(after).reduce((sum, key) => sum + Math.abs((after[key] ?? 0) - (before[key] ?? 0)), 0);
  const checkout = await db('checkout_sessions').where({ id: target.checkoutId }).first<{ status: string }>();
  const leakedLogLines = harness.logs.lines.filter((line) => line.includes(HOSTILE_MARKER) || line.includes('"amount_total"'));
  return { seed, sent: count, byKind, unexpected, badBodies, rowsWritten: rowsWritten + (checkout.status === 'OPEN' ? 0 : 1), leakedLogLines };
}

function isErrorBody(text: string): boolean {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    return typeof parsed.error?.code === 'string' && typeof parsed.error.message === 'string';
  } catch {
    return false;
  }
}

async function rowCounts(harness: PaymentsHarness): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of ['processed_webhook_events', 'registrations', 'operations_alerts', 'pending_reversals', 'queued_mail', 'error_logs']) {
    const row = await harness.tdb.db(table).count<{ n: string }>({ n: '*' }).first();
    counts[table] = Number(row?.n ?? 0);
  }
  return counts;
}

// ---------------------------------------------------------------- registration form

export const INJECTED = [
  '<script>alert("x")</script>',
  '"><img src=x onerror=alert(1)>',
  "'; DROP TABLE registrations; --",
  '{{constructor.constructor("return process")()}}',
  '<b onmouseover=alert(1)>bold</b>',
  '\u0000\u202e\ud83d\ude00',
];

/** A field of the submission broken on purpose, with the field name the answer must name. */
export interface Mutation<B> {
  field: string;
  apply(body: B): void;
}
type JsonBody = Record<string, unknown>;

/** Values of the wrong type for any contact field (null and booleans are legitimate "absent"/"family" values in JSON). */
const wrongType = fc.oneof(
  fc.integer(),
  fc.array(fc.string({ maxLength: 8 }), { minLength: 2, maxLength: 3 }),
  fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.string({ maxLength: 5 }), { minKeys: 1, maxKeys: 2 }),
);

const jsonContactMutation: fc.Arbitrary<Mutation<JsonBody>> = fc.oneof(
  fc.constantFrom('name', 'email', 'payment').map((field) => ({ field, apply: (b: JsonBody) => void delete b[field] })),
  fc.tuple(fc.constantFrom('name', 'email', 'payment', 'mobile', 'family'), wrongType).map(([field, value]) => ({
    field,
    apply: (b: JsonBody) => void (b[field] = value),
  })),
  fc.constantFrom('', ' ', 'not-an-email', '<script>@x', `${'a'.repeat(250)}@example.org`).map((email) => ({ field: 'email', apply: (b: JsonBody) => void (b.email = email) })),
  fc.constantFrom('card-please', 'cash', '', 'CARD').map((payment) => ({ field: 'payment', apply: (b: JsonBody) => void (b.payment = payment) })),
  fc.constantFrom('abc', '+61 <b>4</b>', '1'.repeat(41)).map((mobile) => ({ field: 'mobile', apply: (b: JsonBody) => void (b.mobile = mobile) })),
  fc.constantFrom<unknown>('yes', 'on please', 1).map((family) => ({ field: 'family', apply: (b: JsonBody) => void (b.family = family) })),
);

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `Guest ${i}`, tier: 'adult' }));

const jsonAttendeeMutation: fc.Arbitrary<Mutation<JsonBody>> = fc.oneof(
  fc.constantFrom(0, 51, 201, 400).map((n) => ({ field: 'attendees', apply: (b: JsonBody) => void (b.attendees = rows(n)) })),
  fc.constantFrom<unknown>('all of us', -3, 1e9, { name: 'x' }, null).map((value) => ({ field: 'attendees', apply: (b: JsonBody) => void (b.attendees = value) })),
  fc.constantFrom('vip', '', '__proto__', 'ADULT', 'constructor').map((tier) => ({ field: 'attendees[0].tier', apply: (b: JsonBody) => void (b.attendees = [{ name: 'Guest', tier }]) })),
  fc.constantFrom<unknown>('', '   ', 'x'.repeat(201), 42, ['a', 'b']).map((name) => ({ field: 'attendees[0].name', apply: (b: JsonBody) => void (b.attendees = [{ name, tier: 'adult' }]) })),
  fc.constantFrom<unknown>(null, 7, 'Guest').map((row) => ({ field: 'attendees[0]', apply: (b: JsonBody) => void (b.attendees = [row]) })),
);

const injectedOrPlain = (plain: string) => fc.oneof(fc.constantFrom(...INJECTED.slice(0, 5)), fc.constant(plain));

export const validJsonSubmission = fc.record({
  name: injectedOrPlain('Jordan Member'),
  email: fc.constant('member@example.org'),
  mobile: fc.constantFrom(undefined, '+61 400 000 000'),
  payment: fc.constant('bank'),
  family: fc.boolean(),
  attendees: fc.array(fc.record({ name: injectedOrPlain('Guest'), tier: fc.constant('adult') }), { minLength: 1, maxLength: 3 }),
});

/** Applies contact mutations and at most one attendee mutation (two would overwrite each other), at least one in all. */
function broken<B>(base: fc.Arbitrary<B>, contact: fc.Arbitrary<Mutation<B>>, attendee: fc.Arbitrary<Mutation<B>>) {
  return fc
    .tuple(base, fc.array(contact, { maxLength: 3 }), fc.option(attendee, { nil: undefined }))
    .filter(([, contactMutations, attendeeMutation]) => contactMutations.length > 0 || attendeeMutation !== undefined)
    .map(([valid, contactMutations, attendeeMutation]) => {
      const body = structuredClone(valid);
      const mutations = attendeeMutation ? [...contactMutations, attendeeMutation] : contactMutations;
      for (const mutation of mutations) mutation.apply(body);
      return { body, fields: [...new Set(mutations.map((m) => m.field))] };
    });
}

/** An invalid JSON submission with the fields it must be refused for. */
export const invalidJsonSubmission = broken<JsonBody>(validJsonSubmission, jsonContactMutation, jsonAttendeeMutation);

/** The page's form as posted: ordered pairs, repeated attendee_name / attendee_tier. */
export type FormPairs = Array<[string, string]>;

export const validFormSubmission: fc.Arbitrary<FormPairs> = validJsonSubmission.map((b) => {
  const pairs: FormPairs = [
    ['name', b.name],
    ['email', b.email],
    ['payment', b.payment],
  ];
  if (b.mobile) pairs.push(['mobile', b.mobile]);
  if (b.family) pairs.push(['family', 'on']);
  for (const row of b.attendees) pairs.push(['attendee_name', row.name], ['attendee_tier', row.tier]);
  return pairs;
});

const setField = (pairs: FormPairs, key: string, values: string[]) => {
  const kept = pairs.filter(([k]) => k !== key);
  pairs.splice(0, pairs.length, ...kept, ...values.map((v): [string, string] => [key, v]));
};
const setRows = (pairs: FormPairs, names: string[], tiers: string[]) => {
  const kept = pairs.filter(([k]) => k !== 'attendee_name' && k !== 'attendee_tier');
  pairs.splice(0, pairs.length, ...kept, ...names.map((n): [string, string] => ['attendee_name', n]), ...tiers.map((t): [string, string] => ['attendee_tier', t]));
};

const formContactMutation: fc.Arbitrary<Mutation<FormPairs>> = fc.oneof(
  fc.constantFrom('name', 'email', 'payment').map((field) => ({ field, apply: (p: FormPairs) => setField(p, field, []) })),
  fc.constantFrom('name', 'email', 'payment').map((field) => ({ field, apply: (p: FormPairs) => setField(p, field, ['first', 'second']) })),
  fc.constantFrom('', '   ', 'not-an-email', '<script>alert(1)</script>', `${'a'.repeat(250)}@example.org`).map((email) => ({ field: 'email', apply: (p: FormPairs) => setField(p, 'email', [email]) })),
  fc.constantFrom('card-please', 'cash', '', '<b onmouseover=alert(1)>card</b>').map((payment) => ({ field: 'payment', apply: (p: FormPairs) => setField(p, 'payment', [payment]) })),
  fc.constantFrom('abc', '<img src=x onerror=alert(1)>', '1'.repeat(41)).map((mobile) => ({ field: 'mobile', apply: (p: FormPairs) => setField(p, 'mobile', [mobile]) })),
  fc.constantFrom('yes', 'true', '1', '<script>alert(1)</script>').map((family) => ({ field: 'family', apply: (p: FormPairs) => setField(p, 'family', [family]) })),
  fc.constant({ field: 'name', apply: (p: FormPairs) => setField(p, 'name', ['x'.repeat(201)]) }),
);

const formAttendeeMutation: fc.Arbitrary<Mutation<FormPairs>> = fc.oneof(
  fc.constantFrom(0, 51, 201, 300).map((n) => ({
    field: 'attendees',
    apply: (p: FormPairs) => setRows(p, rows(n).map((r) => r.name), rows(n).map((r) => r.tier)),
  })),
  fc.constant({ field: 'attendees', apply: (p: FormPairs) => setRows(p, ['Guest', 'Guest 2'], ['adult']) }),
  fc.constantFrom('-3', '1000000000').map((count) => ({ field: 'attendees', apply: (p: FormPairs) => setRows(p, [count], []) })),
  fc.constantFrom('vip', '', '__proto__', '<script>alert(1)</script>').map((tier) => ({ field: 'attendees[0].tier', apply: (p: FormPairs) => setRows(p, ['Guest'], [tier]) })),
  fc.constant({ field: 'attendees[0].name', apply: (p: FormPairs) => setRows(p, ['x'.repeat(201)], ['adult']) }),
);

/** An invalid form post with the fields it must be refused for. */
export const invalidFormSubmission = broken<FormPairs>(validFormSubmission, formContactMutation, formAttendeeMutation);

export interface FormAnswer {
  status: number;
  contentType: string;
  text: string;
}

let forwardedFor = 0;

/** One registration post from its own client address (TRUST_PROXY is on in these runs, so the rate limit does not mask answers). */
export async function postRegistration(baseUrl: string, slug: string, body: string, contentType: string): Promise<FormAnswer> {
  forwardedFor += 1;
  const response = await fetch(`${baseUrl}/events/${slug}/register`, {
    method: 'POST',
    headers: { 'content-type': contentType, 'x-forwarded-for': `10.${(forwardedFor >> 16) & 255}.${(forwardedFor >> 8) & 255}.${forwardedFor & 255}` },
    body,
    redirect: 'manual',
  });
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', text: await response.text() };
}

/** Raw injected text that must never come back unescaped in a page. */
export function unescapedInjection(html: string): string | undefined {
  return ['<script>alert', '<img src=x', '<b onmouseover'].find((raw) => html.includes(raw));
}

// ---------------------------------------------------------------- seat hoarding

export interface HoardingReport {
  sent: number;
  /** What went against the rule: each a sentence. */
  problems: string[];
  /** Unpaid places the hoarding address holds at the end: the event's maxUnpaidSeatsPerClient. */
  heldByHoarder: number;
  /** The places left the event page shows at the end. */
  placesLeft: number | undefined;
  /** Bank-transfer posts from other addresses that registered. */
  othersRegistered: number;
}

/** A mailbox of the client's own: these probes are about the per-connection cap, not the per-mailbox one. */
const mailboxOf = (client: string) => `family-${client.replace(/[^0-9a-f]/gi, '-')}@example.org`;

/** The page's form with `attendees` adults, by bank transfer, from `client` (X-Forwarded-For: the server trusts its proxy). */
async function postBankForm(baseUrl: string, slug: string, client: string, attendees: number, email = mailboxOf(client)): Promise<{ status: number; text: string }> {
  const form = new URLSearchParams({ name: 'Hoarding Harry', email, payment: 'bank' });
  for (let n = 1; n <= attendees; n += 1) {
    form.append('attendee_name', `Guest ${n}`);
    form.append('attendee_tier', 'adult');
  }
  const response = await fetch(`${baseUrl}/events/${slug}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': client },
    body: form.toString(),
    redirect: 'manual',
  });
  return { status: response.status, text: await response.text() };
}

const placesLeftOn = (html: string) => {
  const match = /(\d+) places left/.exec(html);
  return match ? Number(match[1]) : undefined;
};

/**
 * One address posts `posts` bank-transfer registrations of ten to a 120-place event (its cap per client left at
 * the default 30, the form's rate limit at 10 a minute): no more than the cap is held, every other post is refused
 * (409, naming the places held) or rate-limited (429), and the places left count only what was registered. Then
 * three other addresses register ten each, as anyone may.
 */
export async function probeSeatHoarding(harness: PaymentsHarness, options: { posts?: number; hoarder?: string } = {}): Promise<HoardingReport> {
  const { db } = harness.tdb;
  const posts = options.posts ?? 12;
  const hoarder = options.hoarder ?? '192.0.2.66';
  const event = await insertEvent(db, { capacity: 120 });
  const cap = Number((await db('events').where({ id: event.id }).first<{ max_unpaid_seats_per_client: number }>()).max_unpaid_seats_per_client);
  const problems: string[] = [];
  for (let n = 0; n < posts; n += 1) {
    const answer = await postBankForm(harness.server.url, event.slug, hoarder, 10);
    const expected = (n + 1) * 10 <= cap ? 303 : [409, 429];
    if (Array.isArray(expected) ? !expected.includes(answer.status) : answer.status !== expected) {
      problems.push(`post ${n + 1} from one address answered ${answer.status}, not ${String(expected)}`);
    }
    if (answer.status === 409 && !answer.text.includes(`already holds ${cap} unpaid places`)) problems.push(`post ${n + 1}: the refusal does not name the ${cap} unpaid places held`);
  }
  const held = Number((await db('registrations').where({ event_id: event.id, status: 'PENDING' }).sum<{ seats: string | null }>({ seats: 'attendee_count' }).first())?.seats ?? 0);
  if (held !== cap) problems.push(`one address holds ${held} unpaid places, not the cap of ${cap}`);
  const pageAfterHoarder = placesLeftOn(await (await fetch(`${harness.server.url}/events/${event.slug}`)).text());
  if (pageAfterHoarder !== 120 - cap) problems.push(`the page says ${String(pageAfterHoarder)} places left after the hoarder, not ${120 - cap}`);
  let othersRegistered = 0;
  for (const other of ['192.0.2.67', '192.0.2.68', '192.0.2.69']) {
    const answer = await postBankForm(harness.server.url, event.slug, other, 10);
    if (answer.status === 303) othersRegistered += 1;
    else problems.push(`a post from ${other} answered ${answer.status}, not 303`);
  }
  const placesLeft = placesLeftOn(await (await fetch(`${harness.server.url}/events/${event.slug}`)).text());
  if (placesLeft !== 120 - cap - othersRegistered * 10) problems.push(`the page says ${String(placesLeft)} places left at the end, not ${120 - cap - othersRegistered * 10}`);
  return { sent: posts + 3, problems, heldByHoarder: held, placesLeft, othersRegistered };
}

export interface RotationReport {
  sent: number;
  /** What went against the rule: each a sentence. */
  problems: string[];
  /** Unpaid places the rotating /48 holds at the end: the event's maxUnpaidSeatsPerClient. */
  heldBySite: number;
}

/**
 * One site rotating its IPv6 addresses: eight bank-transfer posts of ten, each from another /56 (and /64 and
 * address) inside one /48, each naming a mailbox of its own. The /48 is one client: the first posts up to the
 * cap (default 30) register, the rest are refused naming the places held, and a post from the next /48 still
 * registers. Counting by /56 let each of them hold a cap of its own.
 */
export async function probeSlash48Rotation(harness: PaymentsHarness, options: { site?: number } = {}): Promise<RotationReport> {
  const { db } = harness.tdb;
  const site = (options.site ?? 0x4800) & 0xffff;
  const prefix = `2001:db8:${site.toString(16)}`;
  const event = await insertEvent(db, { capacity: 200 });
  const cap = Number((await db('events').where({ id: event.id }).first<{ max_unpaid_seats_per_client: number }>()).max_unpaid_seats_per_client);
  const problems: string[] = [];
  const posts = 8;
  for (let n = 0; n < posts; n += 1) {
    // A new /56 each time: the fourth hextet's high byte.
    const client = `${prefix}:${(((n + 1) << 8) | n).toString(16)}:${n + 1}::${n + 7}`;
    const answer = await postBankForm(harness.server.url, event.slug, client, 10);
    const expected = (n + 1) * 10 <= cap ? 303 : 409;
    if (answer.status !== expected) problems.push(`post ${n + 1} from ${client} (one /48) answered ${answer.status}, not ${expected}`);
    if (answer.status === 409 && !answer.text.includes(`This connection already holds ${cap} unpaid places`)) problems.push(`post ${n + 1}: the refusal does not name the ${cap} unpaid places the /48 holds`);
  }
  const held = Number(
    (await db('registrations').where({ event_id: event.id, client_key: `${prefix}::/48` }).sum<{ seats: string | null }>({ seats: 'attendee_count' }).first())?.seats ?? 0,
  );
  if (held !== cap) problems.push(`one /48 holds ${held} unpaid places, not the cap of ${cap}`);
  const neighbour = `2001:db8:${((site + 1) & 0xffff).toString(16)}::1`;
  const other = await postBankForm(harness.server.url, event.slug, neighbour, 10);
  if (other.status !== 303) problems.push(`a post from the next /48 (${neighbour}) answered ${other.status}, not 303`);
  return { sent: posts + 1, problems, heldBySite: held };
}

// ---------------------------------------------------------------- junk waiting-list entries

export interface JunkWaitlistReport {
  sent: number;
  /** What went against the rule: each a sentence. */
  problems: string[];
  /** The places left the event page shows once places free up. */
  placesLeft: number | undefined;
}

/**
 * Junk joins of a sold-out camp's waiting list (any places 1-8, made-up mailboxes, from many addresses) must
 * never close the form: each is answered 202 and stored UNCONFIRMED, holding nothing. When 7 places free up,
 * the page shows all 7, a family of 7 registers them, the offer pass offers junk nothing, and a day later
 * every junk entry has lapsed.
 */
export async function probeJunkWaitlistEntries(harness: PaymentsHarness, options: { posts?: number; seed?: number } = {}): Promise<JunkWaitlistReport> {
  const { db } = harness.tdb;
  const posts = options.posts ?? 20;
  const random = createRandom(options.seed ?? 1);
  const startsAt = new Date(harness.ctx.clock.now().getTime() + 30 * 24 * 3600_000);
  const event = await insertEvent(db, { capacity: 10, max_attendees_per_registration: 8, waitlist_enabled: true, starts_at: startsAt });
  const taken: string[] = [];
  for (let n = 0; n < 10; n += 1) taken.push((await insertRegistration(db, harness.ctx.cipher, event.id, { email: `camper-${n}@example.org` })).id);
  const problems: string[] = [];
  for (let n = 0; n < posts; n += 1) {
    const form = new URLSearchParams({ name: `Junk ${n}`, email: `junk-${n}-${random.int(0, 1e9)}@junk.example`, places: String(random.int(1, 8)) });
    const response = await fetch(`${harness.server.url}/events/${event.slug}/waitlist`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-forwarded-for': `198.51.100.${n % 250}` },
      body: form.toString(),
      redirect: 'manual',
    });
    if (response.status !== 202) problems.push(`junk join ${n + 1} answered ${response.status}, not 202`);
    await response.text();
  }
  const states = await db('waitlist_entries').where({ event_id: event.id }).pluck<string[]>('state');
  if (states.some((state) => state !== 'UNCONFIRMED')) problems.push(`junk entries are ${[...new Set(states)].join(', ')}, not all UNCONFIRMED`);
  for (const id of taken.slice(0, 7)) await cancelRegistration(harness.ctx, { registration: id, actor: 'soak' });
  const placesLeft = placesLeftOn(await (await fetch(`${harness.server.url}/events/${event.slug}`)).text());
  if (placesLeft !== 7) problems.push(`with junk entries waiting the page says ${String(placesLeft)} places left, not 7`);
  const family = await postBankForm(harness.server.url, event.slug, '198.51.100.251', 7);
  if (family.status !== 303) problems.push(`a family of 7 registering beside the junk answered ${family.status}, not 303`);
  const pass = await runWaitlistPass(harness.ctx, { actor: 'soak' });
  if (pass.offered > 0) problems.push(`the offer pass made ${pass.offered} offer(s) to junk entries`);
  harness.ctx.clock.advance(24 * 3600_000);
  await runWaitlistPass(harness.ctx, { actor: 'soak' });
  const left = await db('waitlist_entries').where({ event_id: event.id }).whereNot('state', 'LAPSED').count<{ n: string }>({ n: '*' }).first();
  if (Number(left?.n ?? 0) > 0) problems.push(`${String(left?.n)} junk entries had not lapsed a day later`);
  return { sent: posts + 1, problems, placesLeft };
}

// ---------------------------------------------------------------- server: slow bodies, wrong bearers, control characters

export interface TrickleOutcome {
  /** Milliseconds from the first byte until the server closed the connection; undefined if it was still open at the end. */
  closedAfterMs: number | undefined;
  /** The status line the server answered with before closing, if any. */
  statusLine: string | undefined;
  bytesSent: number;
}

/**
 * Opens a raw socket, sends a request's headers (or only part of them) and then
 * one byte every `intervalMs`, as a slow-body (or slowloris) client does, and
 * reports when the server closed the connection. Gives up after `giveUpMs`.
 */
export function trickleRequest(
  baseUrl: string,
  options: { path: string; intervalMs: number; giveUpMs: number; headersOnly?: boolean },
): Promise<TrickleOutcome> {
  const target = new URL(baseUrl);
  const body = 'name=' + 'x'.repeat(95);
  const head = `POST ${options.path} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: ${body.length}\r\n`;
  // Slow body: the headers arrive whole, then the body a byte at a time. Slow headers: the headers never finish.
  const upfront = options.headersOnly ? head : `${head}\r\n`;
  const trickled = options.headersOnly ? 'X-Slow: ' + 'y'.repeat(1000) : body;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(target.port), target.hostname);
    const started = Date.now();
    let sent = 0;
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    const finish = (closedAfterMs: number | undefined) => {
      clearInterval(timer);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({ closedAfterMs, statusLine: received.split('\r\n')[0] || undefined, bytesSent: sent });
    };
    const giveUp = setTimeout(() => finish(undefined), options.giveUpMs);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('close', () => finish(Date.now() - started));
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? undefined : reject(error)));
    socket.on('connect', () => {
      socket.write(upfront + (trickled[0] ?? ''));
      sent = 1;
      timer = setInterval(() => {
        if (socket.destroyed || sent >= trickled.length) return;
        socket.write(trickled[sent] ?? '');
        sent += 1;
      }, options.intervalMs);
    });
  });
}

/** One POST from a chosen loopback source address; the status and Retry-After header of its answer. */
export function postFromAddress(
  url: string,
  localAddress: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; retryAfter: string | undefined }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', localAddress, agent: false, headers, timeout: 10_000 },
      (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'] }));
      },
    );
    request.on('timeout', () => request.destroy(new Error('cron request timed out')));
    request.on('error', reject);
    request.end();
  });
}

export interface WrongBearerReport {
  /** Statuses in order: 401 up to the limit, 429 after. */
  statuses: number[];
  /** Answers that were neither 401 (within the limit) nor 429 with Retry-After (past it). */
  problems: string[];
  /** The right bearer from the same address afterwards. */
  rightBearerStatus: number;
}

/** `count` wrong bearers at the cron endpoints from one address, then the right one from the same address. */
export async function sendWrongBearers(
  baseUrl: string,
  options: { count: number; localAddress: string; limit: number; rightSecret: string; random?: Random },
): Promise<WrongBearerReport> {
  const random = options.random ?? createRandom(1);
  const jobs = ['send-reminders', 'sweep-checkouts', 'send-celebrations', 'send-clearance-digest', 'error-issues', 'purge-answers'];
  const wrong = (n: number): Record<string, string> =>
    random.pick<Record<string, string>>([
      {},
      { authorization: `Bearer ${options.rightSecret}x` },
      { authorization: `Bearer ${options.rightSecret.slice(0, -1)}` },
      { authorization: options.rightSecret },
      { authorization: `Basic ${options.rightSecret}` },
      { authorization: `Bearer guess-${n}` },
      { authorization: `Bearer ${'\u00e9'.repeat(3)}` },
    ]);
  const statuses: number[] = [];
  const problems: string[] = [];
  for (let n = 0; n < options.count; n++) {
    const answer = await postFromAddress(`${baseUrl}/api/cron/${random.pick(jobs)}`, options.localAddress, wrong(n));
    statuses.push(answer.status);
    const expected = n < options.limit ? 401 : 429;
    if (answer.status !== expected) problems.push(`wrong bearer ${n + 1}: answered ${answer.status}, not ${expected}`);
    if (answer.status === 429 && !(Number(answer.retryAfter) > 0)) problems.push(`wrong bearer ${n + 1}: 429 without Retry-After`);
  }
  const right = await postFromAddress(`${baseUrl}/api/cron/sweep-checkouts`, options.localAddress, { authorization: `Bearer ${options.rightSecret}` });
  if (right.status !== 200) problems.push(`the right bearer after ${options.count} wrong ones: answered ${right.status}, not 200`);
  return { statuses, problems, rightBearerStatus: right.status };
}

/** Control characters that no public field accepts. */
export const CONTROL_CHARACTERS = ['\u0000', '\u0007', '\u0008', '\u001b', '\u007f', '\u0085', '\u009b', '\n', '\r', '\t', '\u202e', '\u2066'];

export const CONTROL_FIELD_MARKER = 'ctl-marker';

/** A valid JSON submission with one public field carrying a control character (and a marker to look for in the error log). */
export function controlCharacterSubmission(field: 'name' | 'email' | 'mobile' | 'attendees[0].name', control: string): JsonBody {
  const body: JsonBody = {
    name: 'Jordan Member',
    email: 'member@example.org',
    mobile: '+61 400 000 000',
    payment: 'bank',
    attendees: [{ name: 'Guest', tier: 'adult' }],
  };
  const poisoned = (value: string) => `${CONTROL_FIELD_MARKER}${control}${value}`;
  if (field === 'attendees[0].name') body.attendees = [{ name: poisoned('Guest'), tier: 'adult' }];
  else if (field === 'email') body.email = `${CONTROL_FIELD_MARKER}${control}@example.org`;
  else body[field] = poisoned(String(body[field]));
  return body;
}

export interface ControlCharacterReport {
  sent: number;
  problems: string[];
  /** error_logs rows carrying the marker. */
  loggedRows: number;
  registrationsCreated: number;
}

/** Posts every control character in every public field, as JSON and as the page's form: each a 400 naming the field. */
export async function sendControlCharacters(harness: PaymentsHarness): Promise<ControlCharacterReport> {
  const { db } = harness.tdb;
  const event = await insertEvent(db, { capacity: null });
  const fields = ['name', 'email', 'mobile', 'attendees[0].name'] as const;
  const problems: string[] = [];
  let sent = 0;
  for (const control of CONTROL_CHARACTERS) {
    for (const field of fields) {
      const body = controlCharacterSubmission(field, control);
      const asForm = new URLSearchParams([
        ['name', String(body.name)],
        ['email', String(body.email)],
        ['mobile', String(body.mobile)],
        ['payment', 'bank'],
        ...(body.attendees as Array<{ name: string; tier: string }>).flatMap((row): Array<[string, string]> => [
          ['attendee_name', row.name],
          ['attendee_tier', row.tier],
        ]),
      ]).toString();
      for (const [payload, contentType, asJson] of [
        [JSON.stringify(body), 'application/json', true],
        [asForm, 'application/x-www-form-urlencoded', false],
      ] as const) {
        sent += 1;
        const answer = await postRegistration(harness.server.url, event.slug, payload, contentType);
        const problem = judgeFormAnswer(answer, asJson, [field]);
        if (problem) problems.push(`${JSON.stringify(control)} in ${field} (${asJson ? 'json' : 'form'}): ${problem}`);
      }
    }
  }
  const loggedRows = await db('error_logs')
    .where((q) => q.whereLike('message', `%${CONTROL_FIELD_MARKER}%`).orWhereLike('stack', `%${CONTROL_FIELD_MARKER}%`).orWhereRaw('context::text LIKE ?', [`%${CONTROL_FIELD_MARKER}%`]))
    .count<{ n: string }>({ n: '*' })
    .first();
  const registrations = await db('registrations').where({ event_id: event.id }).count<{ n: string }>({ n: '*' }).first();
  return { sent, problems, loggedRows: Number(loggedRows?.n ?? 0), registrationsCreated: Number(registrations?.n ?? 0) };
}

// ---------------------------------------------------------------- configuration

/** Malformed values for each validated variable; every one must be refused naming the variable, never echoing the value. */
export const CONFIG_FUZZ: Record<string, string[]> = {
  DATABASE_URL: ['mysql://db/x', 'postgres://', 'not a url', 'postgres:///nohost'],
  DIRECT_URL: ['http://db.example.org/x', '://', 'postgresql//missing-colon'],
  MIGRATE_ON_START: ['yes', 'TRUE', '1', 'on'],
  AUTH_SECRET: ['short', 'x'.repeat(31)],
  NEXTAUTH_SECRET: ['tiny-legacy-secret'],
  AUTH_URL: ['church.example.org', 'ftp://church.example.org', 'javascript:alert(1)', '//evil.example.org'],
  NEXTAUTH_URL: ['not a url at all'],
  APP_URL: ['mailto:office@example.org', 'www.example.org'],
  ENCRYPTION_KEY: ['not-base64!!', Buffer.alloc(16, 7).toString('base64'), Buffer.alloc(33, 7).toString('base64'), 'c2hvcnQ='],
  ENCRYPTION_KEY_V1: [Buffer.alloc(32, 9).toString('base64')],
  ENCRYPTION_KEY_V2: ['%%%', Buffer.alloc(31, 1).toString('base64')],
  ENCRYPTION_KEY_ID: ['2', 'v0', 'version2', 'v2'],
  DISABLE_OTP: ['maybe'],
  MAIL_FROM: ['office', 'office@', '@example.org', '<script>@x'],
  MAILAPI_URL: ['api.resend.com'],
  SMTP_HOST: ['smtp.example.org/path', 'smtp example org', 'smtp;rm -rf'],
  SMTP_PORT: ['0', '65536', 'smtp', '-1', '4 65'],
  SMTP_SECURE: ['tls'],
  APP_FY_START_MONTH: ['0', '13', 'July', '7.5'],
  APP_TIMEZONE: ['Mars/Olympus', 'Sydney', 'UTC+25'],
  APP_LOCALE: ['en_AU!', '12345', 'en-AU-toolongsubtag'],
  APP_CURRENCY: ['aud', 'AUDD', 'XYZ', '$'],
  THEME_PRIMARY: ['blue', '#12345', '#GGGGGG', 'rgb(0,0,0)'],
  THEME_PRIMARY_DARK: ['#1234567'],
  THEME_ACCENT: ['red'],
  IN_APP_CRON: ['sometimes'],
  CLEARANCE_DIGEST: ['y'],
  ERROR_DIGEST: ['n'],
  PSP_API_BASE: ['api.stripe.com'],
  CAPTCHA_VERIFY_URL: ['challenges'],
  MEMBERSHIP_SECRETARY_EMAIL: ['secretary'],
  WEBSITE_SYNC_URL: ['website.example.org/hook'],
  TRACKER_REPO: ['just-a-name', 'owner/repo/extra', 'owner/<script>'],
  TRACKER_API_URL: ['github'],
  CONTAINER_APP_REPLICA_COUNT: ['-1', 'two', '1.5'],
  ALLOW_DEMO_SEED: ['please'],
  PORT: ['0', '99999', 'http'],
  HOST: ['127.0.0.1; rm -rf /', 'host name'],
  TRUST_PROXY: ['loopback'],
  CHURCH_NETWORKS: ['203.0.113.7/24', '0.0.0.0/0', 'church-wifi', '2001:db8::1/129', '203.0.113.7,,198.51.100.1'],
  CHURCH_NETWORK_FORM_POSTS_PER_MINUTE: ['0', 'lots', '10001'],
  LOG_LEVEL: ['verbose', 'INFO', 'all'],
};

/** Variables that need a partner set for the rule under test to be reached. */
const PARTNERS: Record<string, Record<string, string>> = {
  ENCRYPTION_KEY_V2: { ENCRYPTION_KEY_V1: TEST_KEYS.v1 },
  ENCRYPTION_KEY_ID: { ENCRYPTION_KEY_V1: TEST_KEYS.v1 },
  WEBSITE_SYNC_URL: { WEBSITE_SYNC_SECRET: 'website-sync-secret' },
};

export interface ConfigFuzzOutcome {
  variable: string;
  value: string;
  /** Variables the error named; empty when the value was accepted. */
  named: string[];
  /** The error message contains the value. */
  echoed: boolean;
}

export function fuzzConfigValue(variable: string, value: string): ConfigFuzzOutcome {
  const env = testEnv({ ...PARTNERS[variable], [variable]: value });
  try {
    loadConfig(env);
    return { variable, value, named: [], echoed: false };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    // The fixed sentence of what is expected may contain the value by coincidence ("Sydney", "postgres://").
    const withoutRules = error.problems.reduce((text, p) => text.split(p.expected).join(''), error.message);
    const echoed = value.length >= 4 && withoutRules.includes(value);
    return { variable, value, named: error.problems.map((p) => p.variable), echoed };
  }
}

/** Every listed malformed value, plus one trailing comment per variable. */
export function configFuzzCases(): Array<[string, string]> {
  const cases: Array<[string, string]> = [];
  for (const [variable, values] of Object.entries(CONFIG_FUZZ)) {
    for (const value of values) cases.push([variable, value]);
    cases.push([variable, `${values[0] ?? 'value'} # the office said so`]);
  }
  return cases;
}

// ---------------------------------------------------------------- soak

export async function run(options: { durationMs?: number; runs?: number } = {}) {
  const deadline = Date.now() + (options.durationMs ?? 120_000);
  const rounds = options.runs ?? Number.POSITIVE_INFINITY;
  let inputs = 0;
  let refusedWrongly = 0;
  let leaks = 0;
  let rows = 0;
  let round = 0;
  do {
    round += 1;
    const harness = await startPaymentsHarness({ captureLogs: true, env: { TRUST_PROXY: 'true' } });
    try {
      // The slow body runs beside the rest: a byte every 20 s must be cut off within 30 s.
      const slowEvent = await insertEvent(harness.tdb.db);
      const slow = trickleRequest(harness.server.url, { path: `/events/${slowEvent.slug}/register`, intervalMs: 20_000, giveUpMs: 45_000 });
      const webhook = await sendHostileWebhooks(harness, 2000);
      inputs += webhook.sent;
      refusedWrongly += webhook.unexpected.length + webhook.badBodies;
      leaks += webhook.leakedLogLines.length;
      rows += webhook.rowsWritten;
      const form = await fuzzRegistrationForm(harness, 400);
      inputs += form.sent;
      refusedWrongly += form.problems.length;
      leaks += form.leaks;
      const bearers = await sendWrongBearers(harness.server.url, {
        count: 30,
        localAddress: '127.0.0.9',
        limit: FAILED_BEARERS_PER_MINUTE,
        rightSecret: harness.ctx.config.jobs.cronSecret ?? '',
        random: createRandom(round),
      });
      inputs += bearers.statuses.length + 1;
      refusedWrongly += bearers.problems.length;
      const hoarding = await probeSeatHoarding(harness, { hoarder: `192.0.2.${100 + (round % 100)}` });
      inputs += hoarding.sent;
      refusedWrongly += hoarding.problems.length;
      const rotation = await probeSlash48Rotation(harness, { site: 0x4800 + round });
      inputs += rotation.sent;
      refusedWrongly += rotation.problems.length;
      const junk = await probeJunkWaitlistEntries(harness, { seed: round });
      inputs += junk.sent;
      refusedWrongly += junk.problems.length;
      const control = await sendControlCharacters(harness);
      inputs += control.sent;
      refusedWrongly += control.problems.length;
      rows += control.registrationsCreated;
      leaks += control.loggedRows;
      for (const gmail of [false, true]) {
        const plus = await sendPlusAddressedPosts(harness, 12, { gmail });
        inputs += plus.posts;
        if (!plusAddressingHeld(plus)) refusedWrongly += 1;
      }
      const trickled = await slow;
      inputs += 1;
      if (trickled.closedAfterMs === undefined || trickled.closedAfterMs >= 30_000) refusedWrongly += 1;
      const config = configFuzzCases().map(([variable, value]) => fuzzConfigValue(variable, value));
      inputs += config.length;
      refusedWrongly += config.filter((c) => !c.named.includes(c.variable)).length;
      leaks += config.filter((c) => c.echoed).length;
      // Last: these move the clock on by a day and more.
      for (const probe of [probeOfferExtensionLoop, probePayNowLoop, probeTwoCheckoutsFromOneOffer]) {
        const holds = await probe(harness);
        inputs += holds.sent;
        refusedWrongly += holds.problems.length;
      }
    } finally {
      await harness.close();
    }
  } while (Date.now() < deadline && round < rounds);
  return {
    case: 'hostile-input',
    load: `${round} round(s): 2,000 hostile webhook requests, 400 fuzzed registration posts, 96 posts with control characters, 24 posts naming one mailbox by plus tags and gmail spellings, 30 wrong cron bearers, 15 bank-transfer posts probing seat hoarding, 9 from /56 networks rotated inside one /48, 20 junk waiting-list joins of a sold-out camp, a slow body, ${configFuzzCases().length} malformed configuration values, and three hold-extension probes (a claim link opening a card checkout every 29 minutes for 26 hours, pay-now every 30 minutes past a one-day hold, two paid checkouts from one offer beside an innocent payer) each`,
    faults: 'no/wrong/stale/malformed signature, tampered body, bodies over 1 MB (sized and chunked), wrong content type; missing fields, wrong types, 0-400 attendees, injected HTML, control characters; one address holding every place unpaid; one /48 rotating through its /56 networks; junk waiting-list entries that never confirm; one mailbox behind plus tags and gmail dots; wrong bearers; a body trickled a byte every 20 s; malformed and commented variables; offers and unpaid holds kept open by reopening checkouts',
    inputs,
    lost: rows + refusedWrongly,
    duplicates: 0,
    passed: rows === 0 && refusedWrongly === 0 && leaks === 0,
  };
}

export interface FormFuzzReport {
  sent: number;
  /** Answers that were not a 400 naming the broken fields (or that were a 5xx). */
  problems: string[];
  /** Pages that echoed injected text unescaped. */
  leaks: number;
  registrationsCreated: number;
}

/** Posts `count` invalid submissions, half as JSON and half as the page's form; none may register anyone. */
export async function fuzzRegistrationForm(harness: PaymentsHarness, count: number): Promise<FormFuzzReport> {
  const { db } = harness.tdb;
  const event = await insertEvent(db, { capacity: 5 });
  const before = Number((await db('registrations').where({ event_id: event.id }).count<{ n: string }>({ n: '*' }).first())?.n ?? 0);
  const jsonSamples = fc.sample(invalidJsonSubmission, Math.ceil(count / 2));
  const formSamples = fc.sample(invalidFormSubmission, Math.floor(count / 2));
  const posts = [
    ...jsonSamples.map((s) => ({ asJson: true, body: JSON.stringify(s.body), fields: s.fields })),
    ...formSamples.map((s) => ({ asJson: false, body: new URLSearchParams(s.body).toString(), fields: s.fields })),
  ];
  const problems: string[] = [];
  let leaks = 0;
  let next = 0;
  const worker = async () => {
    while (next < posts.length) {
      const post = posts[next++] as (typeof posts)[number];
      const contentType = post.asJson ? 'application/json' : 'application/x-www-form-urlencoded';
      const answer = await postRegistration(harness.server.url, event.slug, post.body, contentType);
      const problem = judgeFormAnswer(answer, post.asJson, post.fields);
      if (problem) problems.push(`${post.asJson ? 'json' : 'form'} ${post.body.slice(0, 160)}: ${problem}`);
      if (!post.asJson && unescapedInjection(answer.text)) leaks += 1;
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const after = Number((await db('registrations').where({ event_id: event.id }).count<{ n: string }>({ n: '*' }).first())?.n ?? 0);
  return { sent: posts.length, problems, leaks, registrationsCreated: after - before };
}

/** undefined when the answer is the refusal the rules demand: 400 naming every broken field (413 only for oversized bodies). */
export function judgeFormAnswer(answer: FormAnswer, asJson: boolean, fields: string[]): string | undefined {
  if (answer.status >= 500) return `answered ${answer.status}`;
  if (answer.status !== 400) return `answered ${answer.status}, not 400`;
  const named = asJson ? jsonFields(answer.text) : htmlFields(answer.text);
  // A broken attendee row may be named as the row or as one of its parts.
  const missing = fields.filter((field) => !named.some((n) => n === field || n.startsWith(`${field}.`)));
  return missing.length > 0 ? `did not name ${missing.join(', ')} (named ${named.join(', ') || 'nothing'})` : undefined;
}

function jsonFields(text: string): string[] {
  try {
    const parsed = JSON.parse(text) as { error?: { fields?: Array<{ field: string }> } };
    return (parsed.error?.fields ?? []).map((f) => f.field);
  } catch {
    return [];
  }
}

function htmlFields(html: string): string[] {
  return [...html.matchAll(/data-field="([^"]*)"/g)].map((m) => m[1] ?? '');
}
