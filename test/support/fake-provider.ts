import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  buildCharge,
  buildCheckoutSession,
  buildDispute,
  buildPaymentIntent,
  buildProviderEvent,
  providerFixture,
  providerId,
  type ProviderObject,
} from './provider-fixtures.js';

/**
 * A local stand-in for the card payment provider that speaks its wire format
 * for what eventops uses: form-encoded POST /v1/checkout/sessions (nested keys
 * as the `stripe` package sends them), GET and expire of a session, the session
 * list (created[gte], limit, starting_after, has_more, newest first, and
 * expand[] of data.payment_intent and data.payment_intent.latest_charge), GET of
 * a PaymentIntent (expand[]=latest_charge) whose latest charge shows the
 * refunds and disputes made so far, bearer secret key, Idempotency-Key replay,
 * provider-shaped JSON objects and errors.
 * Any /v1/refunds call is refused and recorded: eventops never refunds.
 * Its hosted page /pay/:id has a Pay button that completes the session, sends
 * the signed checkout.session.completed to the webhook URL and redirects (303)
 * to the success URL. deliver() sends any other signed event.
 */

export const FAKE_PROVIDER_SECRET_KEY = 'sk_test_eventops_fake_provider_key';

export interface FakeProviderRequest {
  method: string;
  /** Path without the query string, e.g. /v1/checkout/sessions. */
  path: string;
  idempotencyKey: string | undefined;
  /** The Stripe-Version header the client sent. */
  apiVersion: string | undefined;
  /** Form body (POST) or query (GET), parsed into nested objects and arrays. */
  body: Record<string, unknown>;
  /** The bearer key matched the fake's secret key. */
  authorized: boolean;
}

export interface WebhookDelivery {
  type: string;
  eventId: string;
  status: number;
  body: string;
}

export interface DeliverOptions {
  /** Sign with this secret instead of the webhook secret (a forged delivery). */
  secret?: string;
  /** Signature timestamp, unix seconds (default now). */
  timestamp?: number;
  /** Overrides of the event envelope (e.g. a fixed id for a redelivery). */
  event?: ProviderObject;
}

export interface DeliveryResult {
  status: number;
  body: string;
  event: ProviderObject;
}

export interface FakeProvider {
  /** PSP_API_BASE for the application under test. */
  apiBase: string;
  secretKey: string;
  webhookSecret: string;
  /** Checkout Sessions by id, as the provider would return them now. */
  sessions: Map<string, ProviderObject>;
  /** payment_intent_data.metadata of each session (the provider keeps it on the PaymentIntent), by session id. */
  paymentIntentMetadata: Map<string, Record<string, string>>;
  /** Every API call, in order, including refused ones. */
  requests: FakeProviderRequest[];
  /** Every call to the refund interface. eventops must never make one. */
  refundCalls: FakeProviderRequest[];
  /** Every webhook delivery made, with the application's answer. */
  deliveries: WebhookDelivery[];
  /** The authorised POST /v1/checkout/sessions calls. */
  sessionCreateCalls(): FakeProviderRequest[];
  /** The authorised GET /v1/checkout/sessions (list) calls, one per page. */
  sessionListCalls(): FakeProviderRequest[];
  /** The authorised POST /v1/checkout/sessions/:id/expire calls. */
  sessionExpireCalls(): FakeProviderRequest[];
  /** Every event the provider made through buildEvent (delivered, withheld or never sent), oldest first: what GET /v1/events lists. */
  events: ProviderObject[];
  /** The authorised GET /v1/events (list) calls, one per page. */
  eventListCalls(): FakeProviderRequest[];
  /** The account's webhook endpoints, as GET /v1/webhook_endpoints lists them (none until a test adds some). */
  webhookEndpoints: ProviderObject[];
  /** PSP_* variables that point the application at this provider. */
  configEnv(): Record<string, string>;
  setWebhookUrl(url: string): void;
  /** The next `count` API calls are answered with `status` and a provider api_error. */
  failNext(count: number, status?: number): void;
  /** Every call to exactly this path is answered with `status` and a provider api_error (retries included), until `undefined` is given. */
  failPath(path: string, status: number | undefined): void;
  /**
   * The least a Checkout Session may total, in minor units (default 50, the provider's minimum in most
   * currencies); below it a session is refused with 400 `amount_too_small`, as the provider does.
   */
  setMinimumCharge(minor: number): void;
  /** The next authorised call to exactly this path waits, once `reached`, until `release()` (a slow provider). */
  pauseNext(path: string): { reached: Promise<void>; release(): void };
  /**
   * Marks a session as the provider would after the payer pays: complete, paid,
   * with a PaymentIntent (kept if it already has one). Overrides win.
   */
  completeSession(sessionId: string, overrides?: ProviderObject): ProviderObject;
  /**
   * The signed event the provider would send. For checkout.session.* types the
   * session's state moves first (completed → paid unless overridden,
   * async_payment_succeeded → paid, async_payment_failed → unpaid with its PaymentIntent back to
   * requires_payment_method, expired);
   * charge.refunded builds a fully refunded charge and charge.dispute.created a
   * dispute of the session's PaymentIntent. `overrides` apply to data.object.
   * `session` may also be any provider object, sent as data.object as it is.
   */
  buildEvent(type: string, session: string | ProviderObject, overrides?: ProviderObject, eventOverrides?: ProviderObject): ProviderObject;
  deliver(type: string, session: string | ProviderObject, overrides?: ProviderObject, options?: DeliverOptions): Promise<DeliveryResult>;
  /** Signs and posts an already built event (a redelivery sends the same event again). */
  deliverEvent(event: ProviderObject, options?: DeliverOptions): Promise<DeliveryResult>;
  /**
   * A webhook outage: while on, the events the hosted page would deliver are
   * kept instead (the provider retries for up to 3 days); deliverWithheld()
   * sends them once it is over.
   */
  setWebhookOutage(on: boolean): void;
  /** The payer pays this session at the very moment it is expired: the expire call then finds it complete. */
  payAtExpiry(sessionId: string): void;
  /** Events kept during an outage, oldest first. */
  withheld: ProviderObject[];
  /** Ends the outage and delivers every kept event, in order. */
  deliverWithheld(): Promise<DeliveryResult[]>;
  close(): Promise<void>;
}

export interface FakeProviderOptions {
  webhookSecret: string;
  webhookUrl?: string;
  secretKey?: string;
  /** The least a Checkout Session may total (minor units, default 50); see setMinimumCharge. */
  minimumCharge?: number;
  /** When given, sessions are created at this time and expires_at must lie 30 minutes to 24 hours after it, as the provider demands. */
  now?: () => Date;
}

class ProviderHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: { type: string; code?: string; message: string; param?: string },
  ) {
    super(body.message);
  }
}

export async function startFakeProvider(options: FakeProviderOptions): Promise<FakeProvider> {
  const { default: Stripe } = await import('stripe');
  const secretKey = options.secretKey ?? FAKE_PROVIDER_SECRET_KEY;
  const sessions = new Map<string, ProviderObject>();
  const paymentIntentMetadata = new Map<string, Record<string, string>>();
  const chargeOfIntent = new Map<string, string>();
  /** What has happened to each PaymentIntent's charge at the provider (refunded amount, disputed), whether delivered or not. */
  const chargeHistory = new Map<string, { amountRefunded: number; disputed: boolean }>();
  /** Each PaymentIntent's disputes as they stand now (an inquiry, then closed; a dispute, then won or lost). */
  const disputesOfIntent = new Map<string, ProviderObject[]>();
  const createdAt = () => Math.floor((options.now?.() ?? new Date()).getTime() / 1000);
  const requests: FakeProviderRequest[] = [];
  const paidAtExpiry = new Set<string>();
  /** PaymentIntents whose delayed payment failed: back to requires_payment_method, as the provider leaves them. */
  const failedIntents = new Set<string>();
  const refundCalls: FakeProviderRequest[] = [];
  const deliveries: WebhookDelivery[] = [];
  const idempotent = new Map<string, { rawBody: string; status: number; body: unknown }>();
  const failures: number[] = [];
  const failingPaths = new Map<string, number>();
  const pauses = new Map<string, Array<{ arrive: () => void; released: Promise<void> }>>();
  let webhookUrl = options.webhookUrl;
  let minimumCharge = options.minimumCharge ?? 50;
  let webhookOutage = false;
  const withheld: ProviderObject[] = [];
  const events: ProviderObject[] = [];
  const webhookEndpoints: ProviderObject[] = [];
  let apiBase = '';

  function createSession(body: Record<string, unknown>): ProviderObject {
    if (body.mode !== 'payment') invalid('mode', 'only mode=payment is supported by this provider stand-in');
    const currency = typeof body.currency === 'string' ? body.currency : undefined;
    const lineItems = body.line_items;
    if (!Array.isArray(lineItems) || lineItems.length === 0) invalid('line_items', 'line_items is required in payment mode');
    let total = 0;
    lineItems.forEach((item: unknown, index) => {
      const param = `line_items[${index}]`;
      const entry = asRecord(item);
      const priceData = asRecord(entry.price_data);
      const quantity = integer(entry.quantity, `${param}[quantity]`);
      const unitAmount = integer(priceData.unit_amount, `${param}[price_data][unit_amount]`);
      if (quantity < 1) invalid(`${param}[quantity]`, 'quantity must be at least 1');
      if (unitAmount < 0) invalid(`${param}[price_data][unit_amount]`, 'unit_amount must be a non-negative integer');
      if (typeof priceData.currency !== 'string' || !/^[a-z]{3}$/.test(priceData.currency)) {
        invalid(`${param}[price_data][currency]`, 'a lower-case ISO currency code is required');
      }
      if (currency && priceData.currency !== currency) {
        invalid(`${param}[price_data][currency]`, 'all line items must use the currency of the session');
      }
      const name = asRecord(priceData.product_data).name;
      if (typeof name !== 'string' || name.length === 0) invalid(`${param}[price_data][product_data][name]`, 'a product name is required');
      total += unitAmount * quantity;
    });
    if (total < minimumCharge) {
      throw new ProviderHttpError(400, {
        type: 'invalid_request_error',
        code: 'amount_too_small',
        message: `The Checkout Session's total amount due must add up to at least ${minimumCharge} minor units ${String(currency ?? '')}`.trim(),
        param: 'line_items',
      });
    }
    if (typeof body.success_url !== 'string') invalid('success_url', 'success_url is required');
    let expiresAt: number | null = null;
    if (body.expires_at !== undefined) {
      expiresAt = integer(body.expires_at, 'expires_at');
      if (options.now) {
        const now = Math.floor(options.now().getTime() / 1000);
        if (expiresAt < now + 30 * 60 || expiresAt > now + 24 * 3600) {
          invalid('expires_at', 'expires_at must be between 30 minutes and 24 hours from creation');
        }
      }
    }
    const id = providerId('cs_test');
    const session = buildCheckoutSession({
      id,
      created: createdAt(),
      url: `${apiBase}/pay/${id}`,
      amount_subtotal: total,
      amount_total: total,
      currency: currency ?? (asRecord(asRecord(asRecord(lineItems[0]).price_data)).currency as string),
      metadata: stringRecord(body.metadata),
      expires_at: expiresAt ?? Math.floor(Date.now() / 1000) + 24 * 3600,
      success_url: body.success_url,
      cancel_url: typeof body.cancel_url === 'string' ? body.cancel_url : null,
      client_reference_id: typeof body.client_reference_id === 'string' ? body.client_reference_id : null,
      customer_email: typeof body.customer_email === 'string' ? body.customer_email : null,
    });
    sessions.set(id, session);
    paymentIntentMetadata.set(id, stringRecord(asRecord(body.payment_intent_data).metadata));
    return session;
  }

  function existingSession(id: string): ProviderObject {
    const session = sessions.get(id);
    if (!session) {
      throw new ProviderHttpError(404, {
        type: 'invalid_request_error',
        code: 'resource_missing',
        message: `No such checkout.session: '${id}'`,
        param: 'session',
      });
    }
    return session;
  }

  function expireSession(id: string): ProviderObject {
    if (paidAtExpiry.delete(id)) completeSession(id);
    const session = existingSession(id);
    if (session.status !== 'open') {
      throw new ProviderHttpError(400, {
        type: 'invalid_request_error',
        message: `Only Checkout Sessions with a status of open can be expired. This Checkout Session has a status of ${String(session.status)}.`,
      });
    }
    const expired = { ...session, status: 'expired' };
    sessions.set(id, expired);
    return expired;
  }

  function completeSession(sessionId: string, overrides: ProviderObject = {}): ProviderObject {
    const session = existingSession(sessionId);
    const completed: ProviderObject = {
      ...session,
      status: 'complete',
      payment_status: 'paid',
      payment_intent: (session.payment_intent as string | null) ?? providerId('pi_test'),
      customer_details: { ...asRecord(providerFixture('checkout.session').customer_details), email: session.customer_email },
      ...overrides,
    };
    sessions.set(sessionId, completed);
    return completed;
  }

  function intentMetadataOf(session: ProviderObject): Record<string, string> {
    return paymentIntentMetadata.get(session.id as string) ?? {};
  }

  function chargeIdFor(paymentIntent: string): string {
    let chargeId = chargeOfIntent.get(paymentIntent);
    if (!chargeId) {
      chargeId = providerId('ch_test');
      chargeOfIntent.set(paymentIntent, chargeId);
    }
    return chargeId;
  }

  function buildEvent(
    type: string,
    target: string | ProviderObject,
    overrides: ProviderObject = {},
    eventOverrides: ProviderObject = {},
  ): ProviderObject {
    const sessionId = typeof target === 'string' ? target : target.object === 'checkout.session' && sessions.has(target.id as string) ? (target.id as string) : undefined;
    if (sessionId === undefined) {
      return buildProviderEvent(type, { ...(target as ProviderObject), ...overrides }, eventOverrides);
    }
    let object: ProviderObject;
    switch (type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        object = completeSession(sessionId, overrides);
        break;
      case 'checkout.session.async_payment_failed':
        object = completeSession(sessionId, { payment_status: 'unpaid', ...overrides });
        failedIntents.add(object.payment_intent as string);
        break;
      case 'checkout.session.expired':
        object = { ...existingSession(sessionId), status: 'expired', ...overrides };
        sessions.set(sessionId, object);
        break;
      case 'charge.refunded': {
        const session = paidSession(sessionId);
        const amount = session.amount_total as number;
        const paymentIntent = session.payment_intent as string;
        object = buildCharge({
          id: chargeIdFor(paymentIntent),
          amount,
          amount_captured: amount,
          amount_refunded: amount,
          refunded: true,
          currency: session.currency,
          payment_intent: paymentIntent,
          metadata: intentMetadataOf(session),
          ...overrides,
        });
        recordCharge(paymentIntent, { amountRefunded: object.amount_refunded as number });
        break;
      }
      case 'charge.dispute.created': {
        const session = paidSession(sessionId);
        const paymentIntent = session.payment_intent as string;
        object = buildDispute({
          amount: session.amount_total,
          currency: session.currency,
          charge: chargeIdFor(paymentIntent),
          payment_intent: paymentIntent,
          ...overrides,
        });
        recordCharge(paymentIntent, { disputed: true });
        recordDispute(paymentIntent, object);
        break;
      }
      case 'refund.failed': {
        // The session's refund failed (a closed card, say): the money went back to the balance.
        const session = paidSession(sessionId);
        const paymentIntent = session.payment_intent as string;
        object = {
          ...providerFixture('refund'),
          id: providerId('re_test'),
          amount: session.amount_total,
          currency: session.currency,
          charge: chargeIdFor(paymentIntent),
          payment_intent: paymentIntent,
          status: 'failed',
          failure_reason: 'expired_or_canceled_card',
          metadata: {},
          ...overrides,
        };
        chargeHistory.set(paymentIntent, { ...(chargeHistory.get(paymentIntent) ?? { disputed: false }), amountRefunded: 0 });
        break;
      }
      case 'charge.dispute.funds_withdrawn': {
        // The session's latest dispute with the money taken: a chargeback's, or an inquiry escalated to one.
        const paymentIntent = paidSession(sessionId).payment_intent as string;
        const latest = disputesOfIntent.get(paymentIntent)?.at(-1);
        if (!latest) throw new Error(`no dispute of ${sessionId} to withdraw funds for`);
        object = { ...latest, status: 'needs_response', ...overrides };
        recordCharge(paymentIntent, { disputed: true });
        recordDispute(paymentIntent, object);
        break;
      }
      case 'charge.dispute.closed': {
        // The session's latest dispute, closed as `overrides` say (status won, lost or warning_closed).
        const paymentIntent = paidSession(sessionId).payment_intent as string;
        const latest = disputesOfIntent.get(paymentIntent)?.at(-1);
        if (!latest) throw new Error(`no dispute of ${sessionId} to close`);
        object = { ...latest, ...overrides };
        recordDispute(paymentIntent, object);
        break;
      }
      default:
        object = { ...existingSession(sessionId), ...overrides };
    }
    const event = buildProviderEvent(type, object, { created: createdAt(), ...eventOverrides });
    events.push(event);
    return event;
  }

  /** GET /v1/webhook_endpoints: the account's endpoints, newest first, paged with `limit` and `starting_after`. */
  function listWebhookEndpoints(query: Record<string, unknown>): ProviderObject {
    const limit = query.limit === undefined ? 10 : integer(query.limit, 'limit');
    if (limit < 1 || limit > 100) invalid('limit', 'limit must be between 1 and 100');
    const all = [...webhookEndpoints].reverse();
    let start = 0;
    if (typeof query.starting_after === 'string') {
      start = all.findIndex((endpoint) => endpoint.id === query.starting_after) + 1;
      if (start === 0) invalid('starting_after', `No such webhook endpoint: '${query.starting_after}'`);
    }
    return { object: 'list', data: all.slice(start, start + limit), has_more: start + limit < all.length, url: '/v1/webhook_endpoints' };
  }

  /**
   * GET /v1/events: newest first, filtered by `type` or `types[]` and `created[gte]`, paged with
   * `limit` and `starting_after`, as the provider lists the last 30 days of an account's events.
   */
  function listEvents(query: Record<string, unknown>): ProviderObject {
    const limit = query.limit === undefined ? 10 : integer(query.limit, 'limit');
    if (limit < 1 || limit > 100) invalid('limit', 'limit must be between 1 and 100');
    if (query.type !== undefined && query.types !== undefined) invalid('types', 'You may pass either `type` or `types`, but not both.');
    const types = Array.isArray(query.types) ? query.types.map(String) : typeof query.type === 'string' ? [query.type] : undefined;
    if (types && types.length > 20) invalid('types', 'types may contain at most 20 event types');
    const gte = asRecord(query.created).gte === undefined ? undefined : integer(asRecord(query.created).gte, 'created[gte]');
    const matching = [...events]
      .reverse()
      .filter((event) => (!types || types.includes(event.type as string)) && (gte === undefined || (event.created as number) >= gte));
    let start = 0;
    if (typeof query.starting_after === 'string') {
      const index = matching.findIndex((event) => event.id === query.starting_after);
      if (index < 0) invalid('starting_after', `No such event: '${query.starting_after}'`);
      start = index + 1;
    }
    return { object: 'list', data: matching.slice(start, start + limit), has_more: start + limit < matching.length, url: '/v1/events' };
  }

  function recordCharge(paymentIntent: string, change: Partial<{ amountRefunded: number; disputed: boolean }>): void {
    const before = chargeHistory.get(paymentIntent) ?? { amountRefunded: 0, disputed: false };
    chargeHistory.set(paymentIntent, {
      amountRefunded: Math.max(before.amountRefunded, change.amountRefunded ?? 0),
      disputed: before.disputed || (change.disputed ?? false),
    });
  }

  function recordDispute(paymentIntent: string, dispute: ProviderObject): void {
    const others = (disputesOfIntent.get(paymentIntent) ?? []).filter((d) => d.id !== dispute.id);
    disputesOfIntent.set(paymentIntent, [...others, dispute]);
  }

  /** GET /v1/disputes?payment_intent=…: that PaymentIntent's disputes, newest first (one page). */
  function listDisputes(query: Record<string, unknown>): ProviderObject {
    const paymentIntent = typeof query.payment_intent === 'string' ? query.payment_intent : undefined;
    const all = paymentIntent ? (disputesOfIntent.get(paymentIntent) ?? []) : [...disputesOfIntent.values()].flat();
    return { object: 'list', data: [...all].reverse(), has_more: false, url: '/v1/disputes' };
  }

  function sessionOfIntent(paymentIntent: string): ProviderObject | undefined {
    return [...sessions.values()].find((session) => session.payment_intent === paymentIntent);
  }

  /** The latest (only) charge of a paid session's PaymentIntent, showing the refunds and disputes made so far. */
  function latestChargeOf(session: ProviderObject): ProviderObject {
    const paymentIntent = session.payment_intent as string;
    const amount = session.amount_total as number;
    const history = chargeHistory.get(paymentIntent) ?? { amountRefunded: 0, disputed: false };
    const chargeId = chargeIdFor(paymentIntent);
    return buildCharge({
      id: chargeId,
      amount,
      amount_captured: amount,
      amount_refunded: history.amountRefunded,
      refunded: history.amountRefunded >= amount,
      disputed: history.disputed,
      currency: session.currency,
      payment_intent: paymentIntent,
      metadata: intentMetadataOf(session),
      refunds: {
        object: 'list',
        data: history.amountRefunded > 0 ? [{ ...providerFixture('refund'), id: providerId('re_test'), amount: history.amountRefunded, charge: chargeId, payment_intent: paymentIntent, status: 'succeeded' }] : [],
        has_more: false,
        url: `/v1/charges/${chargeId}/refunds`,
      },
    });
  }

  function paymentIntentOf(session: ProviderObject, expandCharge: boolean): ProviderObject {
    const paymentIntent = session.payment_intent as string;
    const amount = session.amount_total as number;
    const paid = session.payment_status === 'paid';
    const failed = !paid && failedIntents.has(paymentIntent);
    return buildPaymentIntent({
      id: paymentIntent,
      amount,
      amount_received: paid ? amount : 0,
      currency: session.currency,
      status: paid ? 'succeeded' : failed ? 'requires_payment_method' : 'processing',
      canceled_at: null,
      last_payment_error: failed ? { type: 'card_error', code: 'debit_not_authorized', message: 'The customer notified their bank that this payment was unauthorized.' } : null,
      next_action: null,
      metadata: intentMetadataOf(session),
      latest_charge: paid ? (expandCharge ? latestChargeOf(session) : chargeIdFor(paymentIntent)) : null,
    });
  }

  /** GET /v1/checkout/sessions: newest first, `limit` per page (default 10, at most 100), after `starting_after`. */
  function listSessions(query: Record<string, unknown>): ProviderObject {
    const limit = query.limit === undefined ? 10 : integer(query.limit, 'limit');
    if (limit < 1 || limit > 100) invalid('limit', 'limit must be between 1 and 100');
    const created = asRecord(query.created);
    const gte = created.gte === undefined ? undefined : integer(created.gte, 'created[gte]');
    const expand = Array.isArray(query.expand) ? query.expand.map(String) : typeof query.expand === 'string' ? [query.expand] : [];
    for (const path of expand) {
      if (path !== 'data.payment_intent' && path !== 'data.payment_intent.latest_charge') invalid('expand', `This property cannot be expanded (${path}).`);
    }
    const ordered = [...sessions.values()].reverse().sort((a, b) => (b.created as number) - (a.created as number));
    const matching = ordered.filter((session) => gte === undefined || (session.created as number) >= gte);
    let start = 0;
    if (typeof query.starting_after === 'string') {
      const index = matching.findIndex((session) => session.id === query.starting_after);
      if (index < 0) invalid('starting_after', `No such checkout.session: '${query.starting_after}'`);
      start = index + 1;
    }
    const page = matching.slice(start, start + limit).map((session) => {
      if (expand.length === 0 || typeof session.payment_intent !== 'string') return session;
      return { ...session, payment_intent: paymentIntentOf(session, expand.includes('data.payment_intent.latest_charge')) };
    });
    return { object: 'list', data: page, has_more: start + limit < matching.length, url: '/v1/checkout/sessions' };
  }

  /** GET /v1/checkout/sessions/:id, with expand[] of payment_intent and payment_intent.latest_charge. */
  function retrieveSession(id: string, query: Record<string, unknown>): ProviderObject {
    const session = existingSession(id);
    const expand = Array.isArray(query.expand) ? query.expand.map(String) : typeof query.expand === 'string' ? [query.expand] : [];
    for (const path of expand) {
      if (path !== 'payment_intent' && path !== 'payment_intent.latest_charge') invalid('expand', `This property cannot be expanded (${path}).`);
    }
    if (expand.length === 0 || typeof session.payment_intent !== 'string') return session;
    return { ...session, payment_intent: paymentIntentOf(session, expand.includes('payment_intent.latest_charge')) };
  }

  function retrievePaymentIntent(id: string, query: Record<string, unknown>): ProviderObject {
    const session = sessionOfIntent(id);
    if (!session) {
      throw new ProviderHttpError(404, { type: 'invalid_request_error', code: 'resource_missing', message: `No such payment_intent: '${id}'`, param: 'intent' });
    }
    const expand = Array.isArray(query.expand) ? query.expand.map(String) : [];
    return paymentIntentOf(session, expand.includes('latest_charge'));
  }

  function paidSession(sessionId: string): ProviderObject {
    const session = existingSession(sessionId);
    return session.payment_intent ? session : completeSession(sessionId);
  }

  async function deliverEvent(event: ProviderObject, deliverOptions: DeliverOptions = {}): Promise<DeliveryResult> {
    if (!webhookUrl) throw new Error('the fake provider has no webhook URL: pass webhookUrl or call setWebhookUrl()');
    const payload = JSON.stringify(event, null, 2);
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: deliverOptions.secret ?? options.webhookSecret,
      ...(deliverOptions.timestamp === undefined ? {} : { timestamp: deliverOptions.timestamp }),
    });
    const response = await fetch(webhookUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/json; charset=utf-8',
        'stripe-signature': signature,
        'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      },
      body: payload,
    });
    const body = await response.text();
    deliveries.push({ type: event.type as string, eventId: event.id as string, status: response.status, body });
    return { status: response.status, body, event };
  }

  async function handleApi(req: http.IncomingMessage, rawBody: string, record: FakeProviderRequest): Promise<{ status: number; body: unknown }> {
    if (!record.authorized) {
      throw new ProviderHttpError(401, { type: 'invalid_request_error', message: 'Invalid API Key provided.' });
    }
    const failure = failures.shift() ?? failingPaths.get(record.path);
    if (failure !== undefined) throw new ProviderHttpError(failure, { type: 'api_error', message: 'An unknown error occurred.' });
    const pause = pauses.get(record.path)?.shift();
    if (pause) {
      pause.arrive();
      await pause.released;
    }
    if (record.path.startsWith('/v1/refunds') || /^\/v1\/charges\/[^/]+\/refunds?$/.test(record.path)) {
      refundCalls.push(record);
      throw new ProviderHttpError(400, {
        type: 'invalid_request_error',
        message: 'Refunds are refused by the eventops test provider: eventops must never refund.',
      });
    }
    const key = record.method === 'POST' ? record.idempotencyKey : undefined;
    if (key) {
      const earlier = idempotent.get(key);
      if (earlier) {
        if (earlier.rawBody !== rawBody) {
          throw new ProviderHttpError(400, {
            type: 'idempotency_error',
            message: `Keys for idempotent requests can only be used with the same parameters they were first used with. Try using a key other than '${key}' if you meant to execute a different request.`,
          });
        }
        return { status: earlier.status, body: earlier.body };
      }
    }
    const answer = route(req.method ?? 'GET', record.path, record.body);
    if (key) idempotent.set(key, { rawBody, ...answer });
    return answer;
  }

  function route(method: string, path: string, body: Record<string, unknown>): { status: number; body: unknown } {
    if (method === 'POST' && path === '/v1/checkout/sessions') return { status: 200, body: createSession(body) };
    if (method === 'GET' && path === '/v1/checkout/sessions') return { status: 200, body: listSessions(body) };
    if (method === 'GET' && path === '/v1/disputes') return { status: 200, body: listDisputes(body) };
    if (method === 'GET' && path === '/v1/events') return { status: 200, body: listEvents(body) };
    if (method === 'GET' && path === '/v1/webhook_endpoints') return { status: 200, body: listWebhookEndpoints(body) };
    const intent = /^\/v1\/payment_intents\/([^/]+)$/.exec(path);
    if (method === 'GET' && intent) return { status: 200, body: retrievePaymentIntent(decodeURIComponent(intent[1] as string), body) };
    const get = /^\/v1\/checkout\/sessions\/([^/]+)$/.exec(path);
    if (method === 'GET' && get) return { status: 200, body: retrieveSession(decodeURIComponent(get[1] as string), body) };
    const expire = /^\/v1\/checkout\/sessions\/([^/]+)\/expire$/.exec(path);
    if (method === 'POST' && expire) return { status: 200, body: expireSession(decodeURIComponent(expire[1] as string)) };
    throw new ProviderHttpError(404, { type: 'invalid_request_error', message: `Unrecognized request URL (${method}: ${path}).` });
  }

  async function handleHostedPage(req: http.IncomingMessage, res: http.ServerResponse, sessionId: string): Promise<void> {
    const session = sessions.get(sessionId);
    if (!session) return sendHtml(res, 404, '<h1>Checkout session not found</h1>');
    if (req.method === 'GET') {
      if (session.status === 'expired') return sendHtml(res, 410, '<h1>This checkout session has expired</h1>');
      return sendHtml(res, 200, hostedPage(session));
    }
    if (session.status === 'expired') return sendHtml(res, 410, '<h1>This checkout session has expired</h1>');
    if (session.status === 'open') {
      completeSession(sessionId);
      const completed = buildProviderEvent('checkout.session.completed', existingSession(sessionId));
      if (webhookOutage) withheld.push(completed);
      else if (webhookUrl) await deliverEvent(completed);
    }
    const successUrl = String(session.success_url).replace('{CHECKOUT_SESSION_ID}', sessionId);
    res.writeHead(303, { location: successUrl });
    res.end();
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', 'http://fake-provider.local');
      const hosted = /^\/pay\/([^/]+)$/.exec(url.pathname);
      if (hosted && (req.method === 'GET' || req.method === 'POST')) {
        handleHostedPage(req, res, decodeURIComponent(hosted[1] as string)).catch((error: unknown) => {
          sendHtml(res, 500, `<h1>Provider stand-in failure</h1><p>${escapeHtml(String(error))}</p>`);
        });
        return;
      }
      const record: FakeProviderRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        idempotencyKey: headerValue(req.headers['idempotency-key']),
        apiVersion: headerValue(req.headers['stripe-version']),
        body: parseProviderForm(req.method === 'GET' ? url.search.slice(1) : rawBody),
        authorized: req.headers.authorization === `Bearer ${secretKey}`,
      };
      requests.push(record);
      handleApi(req, rawBody, record)
        .then((answer) => sendJson(res, answer.status, answer.body))
        .catch((error: unknown) => {
          if (error instanceof ProviderHttpError) return sendJson(res, error.status, { error: error.body });
          sendJson(res, 500, { error: { type: 'api_error', message: String(error) } });
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  apiBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  let closed = false;

  return {
    apiBase,
    secretKey,
    webhookSecret: options.webhookSecret,
    sessions,
    paymentIntentMetadata,
    requests,
    refundCalls,
    deliveries,
    sessionCreateCalls: () => requests.filter((r) => r.authorized && r.method === 'POST' && r.path === '/v1/checkout/sessions'),
    sessionListCalls: () => requests.filter((r) => r.authorized && r.method === 'GET' && r.path === '/v1/checkout/sessions'),
    sessionExpireCalls: () => requests.filter((r) => r.authorized && r.method === 'POST' && /^\/v1\/checkout\/sessions\/[^/]+\/expire$/.test(r.path)),
    events,
    webhookEndpoints,
    eventListCalls: () => requests.filter((r) => r.authorized && r.method === 'GET' && r.path === '/v1/events'),
    configEnv: () => ({ PSP_SECRET_KEY: secretKey, PSP_WEBHOOK_SECRET: options.webhookSecret, PSP_API_BASE: apiBase }),
    setWebhookUrl(url) {
      webhookUrl = url;
    },
    failNext(count, status = 500) {
      for (let i = 0; i < count; i += 1) failures.push(status);
    },
    failPath(path, status) {
      if (status === undefined) failingPaths.delete(path);
      else failingPaths.set(path, status);
    },
    setMinimumCharge(minor) {
      minimumCharge = minor;
    },
    pauseNext(path) {
      let arrive = () => {};
      let release = () => {};
      const reached = new Promise<void>((resolve) => (arrive = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      pauses.set(path, [...(pauses.get(path) ?? []), { arrive, released }]);
      return { reached, release };
    },
    completeSession,
    payAtExpiry(sessionId) {
      paidAtExpiry.add(sessionId);
    },
    buildEvent,
    async deliver(type, session, overrides, deliverOptions) {
      return deliverEvent(buildEvent(type, session, overrides, deliverOptions?.event), deliverOptions);
    },
    deliverEvent,
    setWebhookOutage(on) {
      webhookOutage = on;
    },
    withheld,
    async deliverWithheld() {
      webhookOutage = false;
      const results: DeliveryResult[] = [];
      for (const event of withheld.splice(0)) results.push(await deliverEvent(event));
      return results;
    },
    async close() {
      if (closed) return;
      closed = true;
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/**
 * Parses a form body the way the provider reads what the `stripe` package
 * sends: `a[b][0][c]=v` becomes { a: { b: [ { c: 'v' } ] } }; values stay strings.
 */
export function parseProviderForm(body: string): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    if (!match) continue;
    const path = [match[1] as string, ...Array.from((match[2] ?? '').matchAll(/\[([^[\]]*)\]/g), (m) => m[1] as string)];
    let node = root;
    path.forEach((segment, index) => {
      if (index === path.length - 1) {
        node[segment] = value;
        return;
      }
      const next = node[segment];
      if (!next || typeof next !== 'object') node[segment] = {};
      node = node[segment] as Record<string, unknown>;
    });
  }
  return arraysFromIndexedObjects(root) as Record<string, unknown>;
}

function arraysFromIndexedObjects(value: unknown): unknown {
  if (!value || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, arraysFromIndexedObjects(v)] as const);
  const indexed = entries.length > 0 && entries.every(([k]) => /^\d+$/.test(k));
  if (indexed) {
    return entries.sort(([a], [b]) => Number(a) - Number(b)).map(([, v]) => v);
  }
  return Object.fromEntries(entries);
}

function invalid(param: string, message: string): never {
  throw new ProviderHttpError(400, { type: 'invalid_request_error', code: 'parameter_invalid', message, param });
}

function integer(value: unknown, param: string): number {
  const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(n)) invalid(param, `${param} must be an integer`);
  return n;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function stringRecord(value: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(asRecord(value)).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${crypto.randomBytes(7).toString('hex')}` });
  res.end(JSON.stringify(body));
}

function sendHtml(res: http.ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
  res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Test checkout</title></head><body>${body}</body></html>`);
}

function hostedPage(session: ProviderObject): string {
  const amount = session.amount_total as number;
  const currency = String(session.currency).toUpperCase();
  return [
    '<h1>Test checkout</h1>',
    `<p id="amount" data-amount-minor="${amount}">Total: ${(amount / 100).toFixed(2)} ${escapeHtml(currency)}</p>`,
    `<form method="post" action="/pay/${encodeURIComponent(String(session.id))}"><button type="submit" id="pay">Pay</button></form>`,
  ].join('\n');
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
