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
import { registrationRow } from '../../../src/registrations/registrations.js';
import { DEFAULT_CARD_FEE, parseSettings } from '../../../src/settings.js';
import { inTransaction, insertSql, type FloorContext } from './floor-context.js';

/**
 * Case 9's same-work floor: the public event page, the registration form's post and the waiting list's
 * join, in raw `pg` beside the same templates. Per request: one statement reads the event, its places and
 * the settings the page shows; a bank transfer locks the event, counts places, inserts the registration
 * with its attendees and answers (sensitive ones encrypted, as the questions contract stores them) and
 * queues its confirmation rendered with the product's template, in one transaction, then sends it; a card
 * payment stages the encrypted registration and opens the provider's checkout with the `stripe` client;
 * "sold out" gives the page back with the reason. Not done here, though ours does them: rate limits,
 * the unpaid-places cap, hourly confirmation caps, page-view counts, request logs, history rows and the
 * waiting list's own email.
 */

const SETTING_KEYS = ['church.name', 'church.address', 'church.abn', 'church.website', 'cardFee.percent', 'cardFee.fixed', 'bank.accountName', 'bank.bsb', 'bank.accountNumber'];

interface EventWithCounts extends EventRow {
  registered: string;
  offered: string;
  waiting: string;
  settings: Record<string, unknown> | null;
}

type Reply = { status: number; headers?: Record<string, string>; body: string };

/** The event by slug, its places and waiting list, and the settings, in one statement; `lock` takes the row FOR UPDATE first. */
async function readEvent(client: Pick<FloorContext['pool'], 'query'>, slug: string, lock: boolean): Promise<EventWithCounts | undefined> {
  if (lock) {
    const locked = await client.query<{ id: string }>('SELECT id FROM events WHERE slug = $1 AND published AND deleted_at IS NULL FOR UPDATE', [slug]);
    if (!locked.rows[0]) return undefined;
  }
  const { rows } = await client.query<EventWithCounts>(
    `SELECT e.*,
            (SELECT COALESCE(sum(attendee_count), 0) FROM registrations WHERE event_id = e.id AND status IN ('PENDING','PAID')) AS registered,
            (SELECT COALESCE(sum(places), 0) FROM waitlist_entries WHERE event_id = e.id AND state = 'OFFERED') AS offered,
            (SELECT count(*) FROM waitlist_entries WHERE event_id = e.id AND state = 'WAITING') AS waiting,
            (SELECT json_object_agg(key, value) FROM app_settings WHERE key = ANY($2::text[])) AS settings
       FROM events e WHERE e.slug = $1 AND e.published AND e.deleted_at IS NULL`,
    [slug, SETTING_KEYS],
  );
  return rows[0];
}

/** Places the public may take now (publicSeatsLeft's rule: none while anyone waits). */
function publicLeft(row: EventWithCounts, event: EventRecord): number | null {
  if (event.capacity === null) return null;
  const left = Math.max(0, event.capacity - Number(row.registered) - Number(row.offered));
  return event.waitingList.enabled && Number(row.waiting) > 0 ? 0 : left;
}

/**
 * The product's page data over what readEvent already read: eventPageData asks its db for the seat counts
 * and the card fee, which this stand-in answers from the row instead of querying again.
 */
function preloadedDb(row: EventWithCounts): Db {
  const settingsRows = Object.entries(row.settings ?? {}).map(([key, value]) => ({ key, value }));
  const table = () => ({ whereIn: () => ({ select: async () => settingsRows }) });
  return Object.assign(table, { raw: async () => ({ rows: [{ registered: row.registered, offered: row.offered, waiting: row.waiting }] }) }) as unknown as Db;
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
  const row = await readEvent(ctx.pool, slug, false);
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

export async function register(ctx: FloorContext, slug: string, rawBody: Buffer, provider: Stripe): Promise<Reply> {
  const body = new URLSearchParams(rawBody.toString('utf8'));
  if (body.get('payment') === 'card') return startCardCheckout(ctx, slug, body, provider);
  let mail: { id: number; message: Parameters<FloorContext['sendQueued']>[1] } | undefined;
  const reply = await inTransaction(ctx.pool, async (client): Promise<Reply> => {
    const row = await readEvent(client, slug, true);
    if (!row) return { status: 404, body: 'not found' };
    const event = eventFromRow(row);
    const form = readForm(body, event.questions);
    const left = publicLeft(row, event);
    if (left !== null && left < form.attendees.length) {
      return renderEventPage(ctx, row, 409, left === 0 ? 'Sorry, this event is sold out.' : `Sorry, only ${left} places are left for this event.`);
    }
    const priced = priceRegistration(event.pricing, { attendees: form.attendees, family: form.family });
    const now = new Date();
    const id = crypto.randomUUID();
    const settings = parseSettings(row.settings ?? {}) as Record<string, string | undefined>;
    const bank =
      settings['bank.accountName'] && settings['bank.bsb'] && settings['bank.accountNumber']
        ? { accountName: settings['bank.accountName'], bsb: settings['bank.bsb'], accountNumber: settings['bank.accountNumber'] }
        : undefined;
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
        bank,
        registrationUrl: registrationUrl(ctx.config, id, 1),
        otherRegistrations: [],
      } as Parameters<typeof registrationConfirmationEmail>[0],
      emailBrandingFrom(churchIdentityFrom(parseSettings(row.settings ?? {}), ctx.config), ctx.config),
    );
    const message = { kind: 'registration-confirmation', registrationId: id, message: { to: [form.contact.email], ...rendered, idempotencyKey: `confirmation-${id}` } };
    const registration = insertSql(
      'registrations',
      registrationRow(ctx.cipher, {
        id,
        eventId: event.id,
        status: priced.free ? 'PAID' : 'PENDING',
        method: priced.free ? 'free' : 'bank',
        contact: form.contact,
        attendees: form.attendees,
        family: form.family,
        priced,
        answers: { questions: event.questions, values: form.answers },
        now,
      }),
    );
    const queue = insertSql('queued_mail', queuedMailRow(ctx.cipher, message, now), 1 + registration.values.length);
    const written = await client.query<{ id: string }>(`WITH registration AS (${registration.sql}) ${queue.sql} RETURNING id`, [
      ...registration.values,
      ...queue.values,
    ]);
    mail = { id: Number(written.rows[0]?.id), message };
    return { status: 303, headers: { location: registrationPath(ctx.config.authSecret, id, 1) }, body: '' };
  });
  if (mail) ctx.sendQueued(mail.id, mail.message);
  return reply;
}

/** A card payment: priced with the passed-on fee, staged encrypted, the provider's checkout opened, 303 to it. */
async function startCardCheckout(ctx: FloorContext, slug: string, body: URLSearchParams, provider: Stripe): Promise<Reply> {
  const row = await readEvent(ctx.pool, slug, false);
  if (!row) return { status: 404, body: 'not found' };
  const event = eventFromRow(row);
  const form = readForm(body, event.questions);
  const left = publicLeft(row, event);
  if (left !== null && left < form.attendees.length) {
    return renderEventPage(ctx, row, 409, left === 0 ? 'Sorry, this event is sold out.' : `Sorry, only ${left} places are left for this event.`);
  }
  const settings = parseSettings(row.settings ?? {});
  const cardFee = event.passCardFee
    ? { percent: settings['cardFee.percent'] ?? DEFAULT_CARD_FEE.percent, fixed: settings['cardFee.fixed'] ?? DEFAULT_CARD_FEE.fixed }
    : undefined;
  const priced = priceRegistration(event.pricing, { attendees: form.attendees, family: form.family }, { cardFee });
  const now = new Date();
  const payload = encryptStagedRegistration(ctx.cipher, { version: 1, contact: form.contact, attendees: form.attendees, family: form.family, priced, answers: form.answers });
  const staged = await ctx.pool.query<{ id: string }>(
    `INSERT INTO checkout_sessions (event_id, status, expires_at, payload_enc, net_minor, surcharge_minor, created_at, updated_at)
     VALUES ($1, 'OPEN', $2, $3, $4, $5, $6, $6) RETURNING id`,
    [event.id, new Date(now.getTime() + 31 * 60_000), payload, priced.net, priced.surcharge, now],
  );
  const checkoutId = staged.rows[0]?.id as string;
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

/** The waiting list's join: under the event's lock, the entry with its contact encrypted; 201 with the message page. */
export async function joinWaitlist(ctx: FloorContext, slug: string, rawBody: Buffer): Promise<Reply> {
  const body = new URLSearchParams(rawBody.toString('utf8'));
  return inTransaction(ctx.pool, async (client): Promise<Reply> => {
    const row = await readEvent(client, slug, true);
    if (!row) return { status: 404, body: 'not found' };
    const now = new Date();
    const email = body.get('email') ?? '';
    const name = body.get('name') ?? '';
    const places = Number(body.get('places') ?? '1');
    const entry = await client.query<{ id: string }>(
      `INSERT INTO waitlist_entries (event_id, name_enc, email_enc, email_hash, places, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
      [row.id, ctx.cipher.encrypt(name), ctx.cipher.encrypt(email), ctx.cipher.lookupHash('email', email), places, now],
    );
    const data = { title: 'On the waiting list', heading: 'You are on the waiting list', message: `Entry ${String(entry.rows[0]?.id)} for ${places} places.` };
    return { status: 201, body: renderPage(ctx, row, messagePage, data as Parameters<typeof messagePage>[0]) };
  });
}
