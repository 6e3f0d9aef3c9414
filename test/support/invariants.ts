import type { Db } from '../../src/db/connect.js';
import { registrationToken } from '../../src/payments/links.js';

/**
 * The promises card payments keep under any order of events, checked in the
 * database after a run (or after every step of a model run):
 * - at most one registration per checkout (one COMPLETED staging row per
 *   registration, every card registration made by exactly one COMPLETED row);
 * - seats never above capacity (attendees of PENDING and PAID registrations);
 * - every charged session is COMPLETED with a PAID or CANCELLED registration,
 *   or UNFULFILLED with exactly one alert of its reason; no UNFULFILLED row
 *   lacks its alert;
 * - a staged payload outlives its checkout only while a late payment may still
 *   be honoured: COMPLETED rows hold none, and an EXPIRED row none once scrubbed
 *   (72 hours after expiry, or when the provider confirmed it unpaid);
 * - with `pages`: no registration offers pay-now (nor says nothing was charged)
 *   while a card payment for it may still be confirmed;
 * - a refund or dispute that arrived before its payment is never left waiting once
 *   that payment has been handled (registered, or kept UNFULFILLED);
 * - with `waitlist`: no place counted twice (PENDING and PAID attendees plus the
 *   places of OFFERED waiting-list entries within capacity, except on events the
 *   office booked over capacity); no entry claimed twice or claimed after it
 *   expired; no offer open for an event that has started;
 * - zero calls to the provider's refund interface.
 */

export interface InvariantOptions {
  /** Provider Checkout Session ids whose payment the provider settled (paid) and whose completion was delivered. */
  charged?: Iterable<string>;
  /** The fake provider's refund calls; eventops must never make one. */
  refundCalls?: readonly unknown[];
  /**
   * The running server, AUTH_SECRET and the server's clock: the registration pages of payments in flight are
   * fetched and checked.
   */
  pages?: { baseUrl: string; authSecret: string; now: Date };
  /** The clock's now, and the events the office booked over capacity (where the place count may exceed it). */
  waitlist?: { now: Date; overCapacityEvents?: Iterable<string> };
}

export interface InvariantViolation {
  rule: string;
  detail: string;
}

interface CheckoutRow {
  id: string;
  event_id: string;
  status: 'OPEN' | 'COMPLETED' | 'EXPIRED' | 'UNFULFILLED';
  registration_id: string | null;
  payload_enc: string | null;
  provider_session_id: string | null;
  payment_intent_id: string | null;
  provider_url: string | null;
  expires_at: Date;
  unfulfilled_reason: string | null;
  scrubbed_at: Date | null;
  unpaid_confirmed_at: Date | null;
}

interface RegistrationRow {
  id: string;
  status: 'PENDING' | 'PAID' | 'CANCELLED';
  payment_method: string;
  payment_intent_id: string | null;
}

export async function checkInvariants(db: Db, options: InvariantOptions = {}): Promise<InvariantViolation[]> {
  const violations: InvariantViolation[] = [];
  const violate = (rule: string, detail: string) => violations.push({ rule, detail });

  const checkouts = await db('checkout_sessions').select<CheckoutRow[]>(
    'id',
    'event_id',
    'status',
    'registration_id',
    'payload_enc',
    'provider_session_id',
    'payment_intent_id',
    'provider_url',
    'expires_at',
    'unfulfilled_reason',
    'scrubbed_at',
    'unpaid_confirmed_at',
  );
  const registrations = new Map(
    (await db('registrations').select<RegistrationRow[]>('id', 'status', 'payment_method', 'payment_intent_id')).map((r) => [r.id, r]),
  );
  const alerts = await db('operations_alerts').select<Array<{ kind: string; checkout_session_id: string | null }>>('kind', 'checkout_session_id');

  // At most one registration per checkout.
  const completedByRegistration = new Map<string, string[]>();
  for (const row of checkouts.filter((c) => c.status === 'COMPLETED')) {
    if (!row.registration_id) {
      violate('one_registration_per_checkout', `checkout ${row.id} is COMPLETED without a registration`);
      continue;
    }
    completedByRegistration.set(row.registration_id, [...(completedByRegistration.get(row.registration_id) ?? []), row.id]);
    const registration = registrations.get(row.registration_id);
    if (registration && row.payment_intent_id && registration.payment_intent_id !== row.payment_intent_id) {
      violate(
        'one_registration_per_checkout',
        `checkout ${row.id} was paid with ${row.payment_intent_id} but its registration records ${registration.payment_intent_id ?? 'none'}`,
      );
    }
  }
  for (const [registrationId, rows] of completedByRegistration) {
    if (rows.length > 1) violate('one_registration_per_checkout', `registration ${registrationId} was completed by ${rows.length} checkouts`);
  }
  for (const registration of registrations.values()) {
    if (registration.payment_method === 'card' && !completedByRegistration.has(registration.id)) {
      violate('one_registration_per_checkout', `card registration ${registration.id} has no COMPLETED checkout`);
    }
  }

  // Seats never above capacity.
  const overbooked = await db('events as e')
    .join('registrations as r', 'r.event_id', 'e.id')
    .whereNotNull('e.capacity')
    .whereIn('r.status', ['PENDING', 'PAID'])
    .groupBy('e.id', 'e.capacity')
    .havingRaw('SUM(r.attendee_count) > e.capacity')
    .select<Array<{ id: string; capacity: number; taken: string }>>('e.id', 'e.capacity', db.raw('SUM(r.attendee_count) AS taken'));
  for (const event of overbooked) violate('capacity', `event ${event.id} holds ${event.taken} seats of ${event.capacity}`);

  // Every UNFULFILLED row carries exactly one alert of its reason.
  for (const row of checkouts.filter((c) => c.status === 'UNFULFILLED')) {
    const own = alerts.filter((a) => a.checkout_session_id === row.id && a.kind === row.unfulfilled_reason);
    if (own.length !== 1) violate('unfulfilled_alert', `UNFULFILLED checkout ${row.id} (${row.unfulfilled_reason ?? '?'}) has ${own.length} alerts of its reason`);
  }

  // Every charged session ends registered or UNFULFILLED.
  const byProviderSession = new Map(checkouts.filter((c) => c.provider_session_id).map((c) => [c.provider_session_id as string, c]));
  for (const sessionId of options.charged ?? []) {
    const row = byProviderSession.get(sessionId);
    if (!row) {
      violate('charged_accounted', `charged session ${sessionId} has no checkout row`);
      continue;
    }
    if (row.status === 'COMPLETED') {
      const registration = row.registration_id ? registrations.get(row.registration_id) : undefined;
      if (!registration || (registration.status !== 'PAID' && registration.status !== 'CANCELLED')) {
        violate('charged_accounted', `charged session ${sessionId} is COMPLETED with registration ${registration?.status ?? 'missing'}`);
      }
    } else if (row.status !== 'UNFULFILLED') {
      violate('charged_accounted', `charged session ${sessionId} is ${row.status}: money taken without a registration or an alert`);
    }
  }

  // Staged data lives only as long as it is needed.
  for (const row of checkouts) {
    if (row.status === 'EXPIRED' && row.scrubbed_at !== null && row.payload_enc !== null) {
      violate('payload_scrubbed', `EXPIRED checkout ${row.id} was scrubbed but still holds its payload`);
    }
    if (row.unpaid_confirmed_at !== null && (row.status !== 'EXPIRED' || row.scrubbed_at === null)) {
      violate('payload_scrubbed', `checkout ${row.id} confirmed unpaid is ${row.status}${row.scrubbed_at ? '' : ' and not scrubbed'}`);
    }
    if (row.status === 'COMPLETED' && row.payload_enc !== null) violate('payload_scrubbed', `COMPLETED checkout ${row.id} still holds its payload`);
  }

  // Early reversals are applied (or reported) when their payment is handled, never forgotten.
  const waiting = await db('pending_reversals').select<Array<{ payment_intent_id: string; kind: string }>>('payment_intent_id', 'kind');
  for (const reversal of waiting) {
    const handled = checkouts.find((c) => c.payment_intent_id === reversal.payment_intent_id && (c.status === 'COMPLETED' || c.status === 'UNFULFILLED'));
    if (handled) {
      violate('reversal_not_forgotten', `a ${reversal.kind} of ${reversal.payment_intent_id} still waits although its checkout ${handled.id} is ${handled.status}`);
    }
  }

  if (options.waitlist) await checkWaitlist(db, options.waitlist, violate);

  if (options.pages) {
    const inFlight = checkouts.filter((c) => c.registration_id && (c.status === 'OPEN' || (c.status === 'EXPIRED' && c.scrubbed_at === null)));
    const pendingIds = new Set(inFlight.map((c) => c.registration_id as string).filter((id) => registrations.get(id)?.status === 'PENDING'));
    // The one exception: a live session that has taken no payment is handed out again, which cannot charge twice.
    const now = options.pages.now;
    const resumable = (registrationId: string) => {
      const rows = inFlight.filter((c) => c.registration_id === registrationId);
      const [row] = rows;
      return rows.length === 1 && row !== undefined && row.status === 'OPEN' && row.expires_at > now && row.provider_url !== null && row.payment_intent_id === null;
    };
    for (const registrationId of pendingIds) {
      const token = registrationToken(options.pages.authSecret, registrationId, 1);
      const response = await fetch(`${options.pages.baseUrl}/registrations/${registrationId}?token=${token}`);
      const html = await response.text();
      if (response.status !== 200) violate('no_pay_now_in_flight', `registration ${registrationId} page answered ${response.status}`);
      if (html.includes('id="pay-now"') && !resumable(registrationId)) violate('no_pay_now_in_flight', `registration ${registrationId} offers pay-now while a card payment for it may still be confirmed`);
      if (html.includes('nothing was charged')) violate('no_pay_now_in_flight', `registration ${registrationId} says nothing was charged while a card payment may still be confirmed`);
    }
  }

  if (options.refundCalls && options.refundCalls.length > 0) {
    violate('no_refunds', `${options.refundCalls.length} call(s) to the provider's refund interface`);
  }
  return violations;
}

async function checkWaitlist(db: Db, options: NonNullable<InvariantOptions['waitlist']>, violate: (rule: string, detail: string) => void): Promise<void> {
  const overCapacity = new Set(options.overCapacityEvents ?? []);
  // No place counted twice: registrations and open offers share the one capacity.
  const held = await db('events as e')
    .whereNotNull('e.capacity')
    .select<Array<{ id: string; capacity: number; registered: string; offered: string }>>(
      'e.id',
      'e.capacity',
      db.raw(`(SELECT COALESCE(SUM(r.attendee_count), 0) FROM registrations r WHERE r.event_id = e.id AND r.status IN ('PENDING', 'PAID')) AS registered`),
      db.raw(`(SELECT COALESCE(SUM(w.places), 0) FROM waitlist_entries w WHERE w.event_id = e.id AND w.state = 'OFFERED') AS offered`),
    );
  for (const event of held) {
    const taken = Number(event.registered) + Number(event.offered);
    if (taken > event.capacity && !overCapacity.has(event.id)) {
      violate('no_seat_counted_twice', `event ${event.id} holds ${event.registered} registered + ${event.offered} offered places of ${event.capacity}`);
    }
  }
  // An entry is claimed at most once, never after it expired.
  const history = await db('waitlist_history').orderBy('id').select<Array<{ entry_id: string; action: string }>>('entry_id', 'action');
  const seen = new Map<string, string[]>();
  for (const row of history) {
    const before = seen.get(row.entry_id) ?? [];
    if (row.action === 'claimed' && before.includes('claimed')) violate('claimed_once', `waiting-list entry ${row.entry_id} was claimed twice`);
    if (row.action === 'claimed' && before.includes('expired')) violate('claimed_once', `waiting-list entry ${row.entry_id} was claimed after its offer expired`);
    seen.set(row.entry_id, [...before, row.action]);
  }
  const claimedRows = await db('waitlist_entries').where({ state: 'CLAIMED' }).select<Array<{ id: string; registration_id: string | null }>>('id', 'registration_id');
  for (const row of claimedRows) {
    if (!row.registration_id) violate('claimed_once', `CLAIMED waiting-list entry ${row.id} names no registration`);
    if ((seen.get(row.id) ?? []).filter((action) => action === 'claimed').length !== 1) violate('claimed_once', `CLAIMED waiting-list entry ${row.id} lacks its one claim in the history`);
  }
  // No offer open once the event has started (registration has closed).
  const openAfterStart = await db('waitlist_entries as w')
    .join('events as e', 'e.id', 'w.event_id')
    .where('w.state', 'OFFERED')
    .andWhere('w.offer_expires_at', '>', options.now)
    .andWhere('e.starts_at', '<=', options.now)
    .select<Array<{ id: string }>>('w.id');
  for (const row of openAfterStart) violate('no_offer_after_start', `waiting-list entry ${row.id} has an open offer for an event that has started`);
}

/** Throws one error listing every violation. */
export async function assertInvariants(db: Db, options: InvariantOptions = {}): Promise<void> {
  const violations = await checkInvariants(db, options);
  if (violations.length > 0) {
    throw new Error(`${violations.length} invariant violation(s):\n${violations.map((v) => `  - ${v.rule}: ${v.detail}`).join('\n')}`);
  }
}
