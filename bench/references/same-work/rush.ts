import crypto from 'node:crypto';
import Stripe from 'stripe';
import type { Db } from '../../../src/db/connect.js';
import { eventPageData } from '../../../src/http/event-view.js';
import { registrationPath } from '../../../src/http/registration-view.js';
import { eventPage } from '../../../src/http/templates/event-page.js';
import { messagePage } from '../../../src/http/templates/message-page.js';
import { churchIdentityFrom } from '../../../src/mail/identity.js';
import { queuedMailRow } from '../../../src/mail/queue.js';
import { emailBrandingFrom } from '../../../src/mail/render.js';
import { registrationUrl } from '../../../src/payments/links.js';
import { encryptStagedRegistration } from '../../../src/payments/staging.js';
import { registrationConfirmationEmail } from '../../../src/signup/templates/confirmation.js';
import type { AppContext } from '../../../src/context.js';
import type { Question, RegistrationAnswers } from '../../../src/registrations/answers.js';
import { eventFromRow, type EventRecord, type EventRow } from '../../../src/registrations/event-record.js';
import { priceRegistration, type AttendeeChoice } from '../../../src/registrations/pricing.js';
import { paymentReference } from '../../../src/registrations/reference.js';
import { cappedTiers, registrationRow, tierPlacesOf } from '../../../src/registrations/registrations.js';
import { HELD_UNPAID } from '../../../src/payments/unpaid-seat-cap.js';
import { codeRefusal, codeTerms, type CodeRow } from '../../../src/registrations/codes.js';
import { planOffers, placesForList, type QueuedEntry } from '../../../src/registrations/waitlist/plan.js';
import { confirmEmail } from '../../../src/registrations/waitlist/mail.js';
import { mailboxHash } from '../../../src/registrations/waitlist/join.js';
import { confirmUrl } from '../../../src/registrations/waitlist/links.js';
import { localDay } from '../../../src/local-time.js';
import { CHECKOUT_EXPIRY_MS } from '../../../src/payments/staging.js';
import { mailboxKey } from '../../../src/canonical-mailbox.js';
import { clientOf, confirmationCapsSql, formPostRefused, type FloorClient } from './rush-limits.js';
import { DEFAULT_CARD_FEE, parseSettings } from '../../../src/settings.js';
import { inTransaction, insertSql, type FloorContext } from './floor-context.js';

/**
 * Case 9's same-work floor: the public event page, the registration form's post and the waiting list's
 * join, in raw `pg` beside the same templates. Per request: one statement reads the event, its places
 * (registrations, open offers, card holds), its waiting queue, the settings and whether it has a live code.
 * A post first counts the form's limit per address (PostgreSQL, the church's network its own) and looks up a
 * typed code. A bank transfer then locks the event, counts places (the list's share by the product's
 * planOffers), ticket-type places, the code's uses and the unpaid places per client and per mailbox, and in
 * one statement inserts the registration (attendees, answers, sensitive ones encrypted), counts the hourly
 * confirmation caps and queues the rendered confirmation within them; sends it after the commit. A card
 * payment holds its places under the same lock (with the per-client hold cap) before the provider's checkout
 * is opened. "Sold out" gives the page back with the reason. The offer pass runs every 30 s (offer-pass.ts).
 * Not done here, though ours does them: page-view counts, request logs, history rows, the unpaid-share
 * alert, security headers and fastify's hooks: what our layers add.
 */

const SETTING_KEYS = ['church.name', 'church.address', 'church.abn', 'church.website', 'cardFee.percent', 'cardFee.fixed', 'bank.accountName', 'bank.bsb', 'bank.accountNumber'];

interface EventWithCounts extends EventRow {
  registered: string;
  offered: string;
  in_checkout: string;
  queue: QueuedEntry[];
  settings: Record<string, unknown> | null;
  /** Unpaid places the posting client, and its mailbox, hold (registrations), and the client's card holds: 0 when not asked. */
  held_by_client: string;
  held_by_mailbox: string;
  card_held_by_client: string;
  /** The page's "Have a code?": the event has a code a family could use today. */
  live_codes: boolean;
}

type Reply = { status: number; headers?: Record<string, string>; body: string };

/** Who is asking, for the counts of what they hold (a page view asks for none). */
interface Holder {
  client?: string;
  mailbox?: string;
}

/**
 * The event by slug, its places (registrations, open offers, card holds), its waiting queue, the settings and
 * what the holder holds, in one statement; `lock` takes the row FOR UPDATE first (counted after the wait).
 */
async function readEvent(ctx: FloorContext, client: Pick<FloorContext['pool'], 'query'>, slug: string, now: Date, lock: boolean, holder: Holder = {}): Promise<EventWithCounts | undefined> {
  if (lock) {
    const locked = await client.query<{ id: string }>('SELECT id FROM events WHERE slug = $1 AND published AND deleted_at IS NULL FOR UPDATE', [slug]);
    if (!locked.rows[0]) return undefined;
  }
  const { rows } = await client.query<EventWithCounts>(
    `SELECT e.*,
            (SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE event_id = e.id AND status IN ('PENDING','PAID')) AS registered,
            (SELECT COALESCE(sum(places), 0) FROM waitlist_entries WHERE event_id = e.id AND state = 'OFFERED') AS offered,
            (SELECT COALESCE(sum(c.places), 0) FROM checkout_sessions c
              WHERE c.event_id = e.id AND c.places > 0 AND c.status = 'OPEN' AND c.expires_at > $3) AS in_checkout,
            (SELECT COALESCE(json_agg(json_build_object('id', id, 'places', places, 'skips', skips, 'tier', tier) ORDER BY position), '[]'::json)
               FROM waitlist_entries WHERE event_id = e.id AND state = 'WAITING') AS queue,
            (SELECT json_object_agg(key, value) FROM app_settings WHERE key = ANY($2::text[])) AS settings,
            (SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE $4::text IS NOT NULL AND event_id = e.id AND client_key = $4 AND ${HELD_UNPAID}) AS held_by_client,
            (SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE $5::text IS NOT NULL AND event_id = e.id AND mailbox_key = $5 AND ${HELD_UNPAID}) AS held_by_mailbox,
            (SELECT COALESCE(sum(c.places), 0) FROM checkout_sessions c
              WHERE $4::text IS NOT NULL AND c.event_id = e.id AND c.client_key = $4 AND c.status = 'OPEN' AND c.expires_at > $3) AS card_held_by_client,
            EXISTS (SELECT 1 FROM discount_codes d WHERE d.event_id = e.id AND d.disabled_at IS NULL AND (d.valid_until IS NULL OR d.valid_until >= $6)) AS live_codes
       FROM events e WHERE e.slug = $1 AND e.published AND e.deleted_at IS NULL`,
    [slug, SETTING_KEYS, now, holder.client ?? null, holder.mailbox ?? null, localDay(now, ctx.config.regional.timeZone)],
  );
  return rows[0];
}

/** Places the public may take now (publicSeatsLeft's rule: less what the waiting list takes under the order rule). */
function publicLeft(row: EventWithCounts, event: EventRecord): number | null {
  if (event.capacity === null) return null;
  const left = Math.max(0, event.capacity - Number(row.registered) - Number(row.offered) - Number(row.in_checkout));
  if (!event.waitingList.enabled || row.queue.length === 0) return left;
  return Math.max(0, left - placesForList(planOffers(left, row.queue)));
}

/**
 * The ticket types with places of their own that these attendees would overfill (counted under the lock, one
 * statement, only for events that have such types, as ours does). Empty when all fit.
 */
async function tiersShort(client: Pick<FloorContext['pool'], 'query'>, event: EventRecord, attendees: readonly AttendeeChoice[], now: Date, waiting: boolean): Promise<string[]> {
  const capped = cappedTiers(event.pricing);
  if (capped.length === 0) return [];
  const { rows } = await client.query<{ tier: string; places: number }>(
    `SELECT tier, sum(places)::int AS places FROM (
       SELECT a->>'tier' AS tier, count(*)::int AS places FROM registrations r CROSS JOIN jsonb_array_elements(r.attendees) a
        WHERE r.event_id = $1 AND r.status IN ('PENDING','PAID') GROUP BY 1
       UNION ALL
       SELECT t.key, sum(t.value::int)::int FROM checkout_sessions c CROSS JOIN jsonb_each_text(c.tier_places) t
        WHERE c.event_id = $1 AND c.status = 'OPEN' AND c.expires_at > $2 GROUP BY 1
       UNION ALL
       SELECT w.tier, sum(w.places)::int FROM waitlist_entries w WHERE w.event_id = $1 AND w.state = 'OFFERED' AND w.tier IS NOT NULL GROUP BY 1
     ) taken GROUP BY tier`,
    [event.id, now],
  );
  const taken = new Map(rows.map((row) => [row.tier, Number(row.places)]));
  const wanted = tierPlacesOf(event.pricing, attendees);
  return capped.filter((tier) => (wanted[tier.id] ?? 0) > (waiting ? 0 : tier.capacity - (taken.get(tier.id) ?? 0))).map((tier) => tier.id);
}

/** A typed code, looked up before the lock to price with (lower(code) as ours); undefined when none was typed. */
async function lookUpCode(ctx: FloorContext, slug: string, text: string | null): Promise<CodeRow | undefined | 'unknown'> {
  if (!text) return undefined;
  const { rows } = await ctx.pool.query<CodeRow>('SELECT * FROM discount_codes WHERE event_id = (SELECT id FROM events WHERE slug = $1) AND lower(code) = lower($2) LIMIT 1', [slug, text]);
  return rows[0] ?? 'unknown';
}

/** The code judged under the event's lock with its live uses (registrations and open card holds): the refusal, if any. */
async function codeRefusedUnderLock(client: Pick<FloorContext['pool'], 'query'>, code: CodeRow, day: string, attendees: readonly AttendeeChoice[], now: Date): Promise<string | undefined> {
  const { rows } = await client.query<{ uses: string }>(
    `SELECT (SELECT count(*) FROM registrations r WHERE r.code_id = $1 AND r.status IN ('PENDING','PAID'))
          + (SELECT count(*) FROM checkout_sessions c WHERE c.code_id = $1 AND c.status = 'OPEN' AND c.expires_at > $2) AS uses`,
    [code.id, now],
  );
  return codeRefusal(code, { day, tiers: attendees.map((attendee) => attendee.tier), uses: Number(rows[0]?.uses ?? 0) });
}

/**
 * The product's page data over what readEvent already read: eventPageData asks its db for the seat counts
 * and the card fee, which this stand-in answers from the row instead of querying again.
 */
function preloadedDb(row: EventWithCounts): Db {
  const settingsRows = Object.entries(row.settings ?? {}).map(([key, value]) => ({ key, value }));
  // Any chain of where…() on a table, ending in select() (the card-fee settings) or first() (the live-codes check).
  const table = (name: string) => {
    const chain: Record<string, unknown> = {
      select: async () => settingsRows,
      first: async () => (name === 'discount_codes' && row.live_codes ? { id: 'live' } : undefined),
    };
    for (const method of ['where', 'whereIn', 'whereNull', 'orWhere']) chain[method] = () => chain;
    return chain;
  };
  const counts = { seats_registered: row.registered, seats_offered: row.offered, seats_in_checkout: row.in_checkout, seats_queue: row.queue };
  return Object.assign(table, { raw: async () => ({ rows: [counts] }) }) as unknown as Db;
}

async function renderEventPage(ctx: FloorContext, row: EventWithCounts, status: number, formError?: string): Promise<Reply> {
  const event = eventFromRow(row);
  const appCtx = { config: ctx.config, clock: { now: () => new Date() }, db: preloadedDb(row) } as unknown as AppContext;
  const data = await eventPageData(appCtx, event, { formError });
  return { status, body: renderPage(ctx, row, eventPage, data) };
}

function renderPage<D extends object>(
  ctx: FloorContext,
  row: EventWithCounts,
  render: (data: D & { title: string }, shell: Parameters<typeof eventPage>[1]) => string,
  data: D & { title: string },
): string {
  const identity = churchIdentityFrom(parseSettings(row.settings ?? {}), ctx.config);
  const nonce = crypto.randomBytes(16).toString('base64');
  return render(data, { churchName: identity.name, theme: ctx.config.theme, lang: ctx.config.regional.locale, cspNonce: { script: nonce, style: nonce } });
}

export async function showEvent(ctx: FloorContext, slug: string): Promise<Reply> {
  const row = await readEvent(ctx, ctx.pool, slug, new Date(), false);
  if (!row) return { status: 404, body: 'not found' };
  return renderEventPage(ctx, row, 200);
}

interface FormPost {
  contact: { name: string; email: string; mobile?: string };
  attendees: AttendeeChoice[];
  family: boolean;
  payment: string;
  answers: RegistrationAnswers;
}

/** The form's fields (questions contract: `q.<id>`, `q.<row>.<id>`), read just enough for the bench's posts. */
function readForm(body: URLSearchParams, questions: readonly Question[]): FormPost {
  const names = body.getAll('attendee_name');
  const tiers = body.getAll('attendee_tier');
  const attendees = names.flatMap((name, i) => (name.trim() ? [{ name: name.trim(), tier: tiers[i] ?? '' }] : []));
  const value = (question: Question, raw: string | null) => (raw === null || raw === '' ? undefined : question.type === 'yesno' ? raw === 'yes' : raw);
  const answers: RegistrationAnswers = { registration: {}, attendees: attendees.map(() => ({})) };
  for (const question of questions) {
    if (question.appliesTo === 'registration') {
      const answer = value(question, body.get(`q.${question.id}`));
      if (answer !== undefined) answers.registration[question.id] = answer;
      continue;
    }
    names.forEach((_, row) => {
      const answer = value(question, body.get(`q.${row}.${question.id}`));
      const attendee = answers.attendees[row];
      if (answer !== undefined && attendee) attendee[question.id] = answer;
    });
  }
  const mobile = body.get('mobile') ?? '';
  return {
    contact: { name: body.get('name') ?? '', email: body.get('email') ?? '', ...(mobile ? { mobile } : {}) },
    attendees,
    family: body.get('family') === 'on',
    payment: body.get('payment') ?? 'bank',
    answers,
  };
}

const soldOut = (left: number) => (left === 0 ? 'Sorry, this event is sold out.' : `Sorry, only ${left} places are left for this event.`);

function rateLimited(retryAfter: number): Reply {
  return { status: 429, headers: { 'retry-after': String(retryAfter) }, body: `Too many requests; try again in ${retryAfter} seconds.` };
}

/** The bank-settings the confirmation names, from the settings row. */
function bankOf(row: EventWithCounts) {
  const settings = parseSettings(row.settings ?? {}) as Record<string, string | undefined>;
  return settings['bank.accountName'] && settings['bank.bsb'] && settings['bank.accountNumber']
    ? { accountName: settings['bank.accountName'], bsb: settings['bank.bsb'], accountNumber: settings['bank.accountNumber'] }
    : undefined;
}

/**
 * The registration form's post. Before any transaction: the form's rate limit per address (the church's
 * network its own), the typed code's look-up. A bank transfer then, under the event's lock: the places
 * (registrations, offers, card holds, the waiting list's share), the ticket types' places, the code's live
 * uses, the unpaid places per client and per mailbox; then one statement writes the registration, counts
 * the confirmation caps and queues the rendered confirmation if within them. Sent after the commit.
 */
export async function register(ctx: FloorContext, slug: string, rawBody: Buffer, provider: Stripe, remoteAddress: string): Promise<Reply> {
  const now = new Date();
  const client = clientOf(ctx, remoteAddress);
  const retryAfter = await formPostRefused(ctx, client, 'POST /events/:slug/register', now);
  if (retryAfter !== undefined) return rateLimited(retryAfter);
  const body = new URLSearchParams(rawBody.toString('utf8'));
  const code = await lookUpCode(ctx, slug, body.get('code'));
  if (code === 'unknown') return { status: 422, body: 'That code is not one this event has.' };
  if (body.get('payment') === 'card') return startCardCheckout(ctx, slug, body, provider, client, code, now);
  const email = body.get('email') ?? '';
  const mailbox = mailboxKey(ctx.cipher, email);
  const holder = { client: client.churchNetwork ? undefined : client.key, mailbox };
  let mail: { id: number; message: Parameters<FloorContext['sendQueued']>[1] } | undefined;
  const reply = await inTransaction(ctx.pool, async (trx): Promise<Reply> => {
    const row = await readEvent(ctx, trx, slug, now, true, holder);
    if (!row) return { status: 404, body: 'not found' };
    const event = eventFromRow(row);
    const form = readForm(body, event.questions);
    const left = publicLeft(row, event);
    const wanted = form.attendees.length;
    if (left !== null && left < wanted) return renderEventPage(ctx, row, 409, soldOut(left));
    if ((await tiersShort(trx, event, form.attendees, now, row.queue.length > 0)).length > 0) return renderEventPage(ctx, row, 409, 'Sorry, those tickets are sold out.');
    const day = localDay(now, ctx.config.regional.timeZone);
    if (code && (await codeRefusedUnderLock(trx, code, day, form.attendees, now))) return { status: 422, body: 'That code cannot be used.' };
    const priced = priceRegistration(event.pricing, { attendees: form.attendees, family: form.family, ...(code ? { code: codeTerms(code) } : {}) }, { day });
    const overCap = (held: string) => Number(held) + wanted > event.maxUnpaidSeatsPerClient;
    if ((holder.client !== undefined && overCap(row.held_by_client)) || overCap(row.held_by_mailbox)) {
      return renderEventPage(ctx, row, 409, `Unpaid places are limited to ${event.maxUnpaidSeatsPerClient}: pay for them first.`);
    }
    const id = crypto.randomUUID();
    const rendered = registrationConfirmationEmail(
      {
        name: form.contact.name,
        eventTitle: event.title,
        eventStartsAt: event.startsAt,
        eventEndsAt: event.endsAt,
        location: event.location,
        lines: priced.lines.map(({ label, amount }) => ({ label, amount })),
        totalMinor: priced.total,
        balanceMinor: priced.total,
        paidMinor: 0,
        cardPaymentInFlight: false,
        severalPlaces: priced.attendeeCount > 1,
        free: priced.free,
        reference: paymentReference(id),
        bank: bankOf(row),
        registrationUrl: registrationUrl(ctx.config, id, 1),
        otherRegistrations: [],
      } as Parameters<typeof registrationConfirmationEmail>[0],
      emailBrandingFrom(churchIdentityFrom(parseSettings(row.settings ?? {}), ctx.config), ctx.config),
    );
    const message = { kind: 'registration-confirmation', registrationId: id, message: { to: [form.contact.email], ...rendered, idempotencyKey: `confirmation-${id}` } };
    const registration = insertSql(
      'registrations',
      {
        ...registrationRow(ctx.cipher, {
          id,
          eventId: event.id,
          status: priced.free ? 'PAID' : 'PENDING',
          method: priced.free ? 'free' : 'bank',
          contact: form.contact,
          attendees: form.attendees,
          family: form.family,
          priced,
          pricedOn: day,
          codeId: code?.id,
          clientKey: client.key,
          mailboxKey: mailbox,
          answers: { questions: event.questions, values: form.answers },
          now,
        }),
      },
    );
    const queue = queuedMailRow(ctx.cipher, message, now);
    const columns = Object.keys(queue);
    const first = 1 + registration.values.length;
    const caps = confirmationCapsSql(ctx, client, email, now, first + columns.length);
    const written = await trx.query<{ id: string }>(
      `WITH registration AS (${registration.sql}), ${caps.ctes}
       INSERT INTO queued_mail (${columns.join(', ')}) SELECT ${columns.map((_, i) => `$${first + i}`).join(', ')} WHERE ${caps.within} RETURNING id`,
      [...registration.values, ...Object.values(queue), ...caps.values],
    );
    if (written.rows[0]) mail = { id: Number(written.rows[0].id), message };
    return { status: 303, headers: { location: registrationPath(ctx.config.authSecret, id, 1) }, body: '' };
  });
  if (mail) ctx.sendQueued(mail.id, mail.message);
  return reply;
}

/**
 * A card payment: priced with the passed-on fee and staged encrypted; under the event's lock the places are
 * counted and held (with the client's card-hold cap, the ticket types' places and the code's uses), as ours
 * holds them while the payer is at the provider; then the provider's checkout is opened, 303 to it.
 */
async function startCardCheckout(ctx: FloorContext, slug: string, body: URLSearchParams, provider: Stripe, client: FloorClient, code: CodeRow | undefined, now: Date): Promise<Reply> {
  const holder = { client: client.churchNetwork ? undefined : client.key };
  const staged = await inTransaction(ctx.pool, async (trx): Promise<Reply | { checkoutId: string; event: EventRecord; form: FormPost; priced: ReturnType<typeof priceRegistration> }> => {
    const row = await readEvent(ctx, trx, slug, now, true, holder);
    if (!row) return { status: 404, body: 'not found' };
    const event = eventFromRow(row);
    const form = readForm(body, event.questions);
    const wanted = form.attendees.length;
    const left = publicLeft(row, event);
    if (left !== null && left < wanted) return renderEventPage(ctx, row, 409, soldOut(left));
    if ((await tiersShort(trx, event, form.attendees, now, row.queue.length > 0)).length > 0) return renderEventPage(ctx, row, 409, 'Sorry, those tickets are sold out.');
    if (event.capacity !== null && holder.client !== undefined && Number(row.card_held_by_client) + wanted > event.maxUnpaidSeatsPerClient) {
      return renderEventPage(ctx, row, 409, 'This connection holds as many places as it may while paying.');
    }
    const day = localDay(now, ctx.config.regional.timeZone);
    if (code && (await codeRefusedUnderLock(trx, code, day, form.attendees, now))) return { status: 422, body: 'That code cannot be used.' };
    const settings = parseSettings(row.settings ?? {});
    const cardFee = event.passCardFee
      ? { percent: settings['cardFee.percent'] ?? DEFAULT_CARD_FEE.percent, fixed: settings['cardFee.fixed'] ?? DEFAULT_CARD_FEE.fixed }
      : undefined;
    const priced = priceRegistration(event.pricing, { attendees: form.attendees, family: form.family, ...(code ? { code: codeTerms(code) } : {}) }, { cardFee, day });
    const payload = encryptStagedRegistration(ctx.cipher, { version: 1, contact: form.contact, attendees: form.attendees, family: form.family, priced, answers: form.answers });
    const places = event.capacity === null ? 0 : wanted;
    const inserted = await trx.query<{ id: string }>(
      `INSERT INTO checkout_sessions (event_id, status, expires_at, payload_enc, net_minor, surcharge_minor, places, tier_places, code_id, client_key, created_at, updated_at)
       VALUES ($1, 'OPEN', $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id`,
      [event.id, new Date(now.getTime() + CHECKOUT_EXPIRY_MS), payload, priced.net, priced.surcharge, places, JSON.stringify(tierPlacesOf(event.pricing, form.attendees)), code?.id ?? null, places > 0 ? (holder.client ?? null) : null, now],
    );
    return { checkoutId: inserted.rows[0]?.id as string, event, form, priced };
  });
  if ('status' in staged) return staged;
  const { checkoutId, event, form, priced } = staged;
  const session = await provider.checkout.sessions.create({
    mode: 'payment',
    currency: ctx.config.regional.currency.toLowerCase(),
    line_items: priced.lines.map((line) => ({
      quantity: 1,
      price_data: { currency: ctx.config.regional.currency.toLowerCase(), unit_amount: line.amount, product_data: { name: line.label } },
    })),
    success_url: `${ctx.config.authUrl ?? 'https://events.example.org'}/events/${slug}/success?session_id={CHECKOUT_SESSION_ID}`,
    customer_email: form.contact.email,
    client_reference_id: checkoutId,
    metadata: { eventops_checkout_id: checkoutId, eventops_event_id: event.id },
  });
  await ctx.pool.query('UPDATE checkout_sessions SET provider_session_id = $2, provider_url = $3 WHERE id = $1', [checkoutId, session.id, session.url]);
  return { status: 303, headers: { location: session.url ?? '' }, body: '' };
}

/**
 * The waiting list's join, as ours asks it (no event lock: an unconfirmed entry takes nothing): the form's
 * rate limit; the event and its places read (a join while places are free is refused); then one statement
 * counts the confirmation caps, checks the mailbox is not on the list already, stores the UNCONFIRMED entry
 * and queues its confirm-link email; 202 with the message page (ours answers 202: nobody is on the list until they confirm).
 */
export async function joinWaitlist(ctx: FloorContext, slug: string, rawBody: Buffer, remoteAddress: string): Promise<Reply> {
  const now = new Date();
  const client = clientOf(ctx, remoteAddress);
  const retryAfter = await formPostRefused(ctx, client, 'POST /events/:slug/waitlist', now);
  if (retryAfter !== undefined) return rateLimited(retryAfter);
  const body = new URLSearchParams(rawBody.toString('utf8'));
  const row = await readEvent(ctx, ctx.pool, slug, now, false);
  if (!row) return { status: 404, body: 'not found' };
  const event = eventFromRow(row);
  const email = body.get('email') ?? '';
  const name = body.get('name') ?? '';
  const places = Number(body.get('places') ?? '1');
  const left = publicLeft(row, event);
  if (!event.waitingList.enabled || !Number.isInteger(places) || places < 1 || places > event.maxAttendeesPerRegistration) return { status: 400, body: 'no' };
  if (left !== null && left >= places) return { status: 409, body: `${left} places are still free: please register instead.` };
  const entryId = crypto.randomUUID();
  const rendered = confirmEmail(
    { name, eventTitle: event.title, eventStartsAt: event.startsAt, places, severalPlaces: places > 1, confirmUrl: confirmUrl(ctx.config, entryId) },
    emailBrandingFrom(churchIdentityFrom(parseSettings(row.settings ?? {}), ctx.config), ctx.config),
  );
  const message = { kind: 'waitlist-confirm', message: { to: [email], ...rendered, idempotencyKey: `waitlist-confirm-${entryId}` } };
  const queue = queuedMailRow(ctx.cipher, message, now);
  const columns = Object.keys(queue);
  const hash = mailboxHash(ctx.cipher, email);
  const caps = confirmationCapsSql(ctx, client, email, now, 8 + columns.length);
  const written = await ctx.pool.query<{ id: string }>(
    `WITH ${caps.ctes},
     allowed AS (SELECT (${caps.within}) AND NOT EXISTS (SELECT 1 FROM waitlist_entries WHERE event_id = $2 AND email_hash = $5 AND state IN ('WAITING','OFFERED')) AS ok),
     entry AS (INSERT INTO waitlist_entries (id, event_id, name_enc, email_enc, email_hash, places, state, created_at, updated_at)
               SELECT $1, $2, $3, $4, $5, $6, 'UNCONFIRMED', $7, $7 FROM allowed WHERE ok RETURNING id)
     INSERT INTO queued_mail (${columns.join(', ')}) SELECT ${columns.map((_, i) => `$${8 + i}`).join(', ')} FROM entry RETURNING id`,
    [entryId, row.id, ctx.cipher.encrypt(name), ctx.cipher.encrypt(email), hash, places, now, ...Object.values(queue), ...caps.values],
  );
  if (written.rows[0]) ctx.sendQueued(Number(written.rows[0].id), message);
  const data = { title: 'Check your email', heading: 'Check your email', message: `We sent a link to confirm your place on the waiting list for ${places} places.` };
  return { status: 202, body: renderPage(ctx, row, messagePage, data as Parameters<typeof messagePage>[0]) };
}
