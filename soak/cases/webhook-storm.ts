import { startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { registerForEvent } from '../../src/signup/register.js';
import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { AppError } from '../../src/errors.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { insertEvent } from '../../test/support/factories.js';
import { checkInvariants, type InvariantViolation } from '../../test/support/invariants.js';
import { startPaymentsHarness, type PaymentsHarness } from '../../test/support/payments-harness.js';
import type { ProviderObject } from '../../test/support/provider-fixtures.js';
import { queuedMessages } from '../../test/support/webhook-events.js';
import { createRandom, type Random } from '../../test/support/random.js';

/**
 * Case 1, webhook storm: checkouts staged through the real checkout code
 * against the local provider, over events with small capacities (one of them
 * deleted before payment arrives), then the provider's events for them —
 * paid, delayed success and failure, full and partial refunds, disputes, a
 * tampered amount — each possibly redelivered under the same event id, all
 * shuffled and sent concurrently to the real server. With an outage window, a
 * third of the deliveries cannot reach us: time passes, the sweep expires the
 * checkouts still open, and the provider's retries then arrive late, mixed
 * with the rest. Afterwards the shared invariants and what each scenario must
 * have ended as.
 */

export type StormScenario =
  | 'paid'
  | 'paid_redelivered_new_id'
  | 'async_success'
  | 'async_fail'
  | 'refund_full'
  | 'refund_partial'
  | 'dispute'
  | 'amount_mismatch'
  | 'abandoned';

const SCENARIOS: Array<[StormScenario, number]> = [
  ['paid', 26],
  ['paid_redelivered_new_id', 5],
  ['async_success', 14],
  ['async_fail', 10],
  ['refund_full', 12],
  ['refund_partial', 10],
  ['dispute', 10],
  ['amount_mismatch', 4],
  ['abandoned', 9],
];

/** Scenarios in which the provider ends up holding the payer's money (at least for a while). */
const CHARGED: ReadonlySet<StormScenario> = new Set([
  'paid',
  'paid_redelivered_new_id',
  'async_success',
  'refund_full',
  'refund_partial',
  'dispute',
  'amount_mismatch',
]);

export interface StormOptions {
  sessions: number;
  /** Total webhook requests, redeliveries included (at least one per built event). */
  deliveries: number;
  events?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  seed?: number;
  /** A webhook outage this long after the first third of the deliveries (the sweep runs during it). */
  outageMs?: number;
}

export interface StagedSession {
  providerSessionId: string;
  checkoutId: string;
  eventId: string;
  payNowRegistrationId?: string;
  scenario: StormScenario;
  email: string;
}

export interface StormReport {
  seed: number;
  sessions: StagedSession[];
  /** Distinct provider events built. */
  events: number;
  /** Webhook requests sent, redeliveries included. */
  deliveries: number;
  /** Requests that repeated an event id already sent. */
  redeliveries: number;
  statuses: Record<number, number>;
  violations: InvariantViolation[];
  /** Charged sessions that ended neither registered nor alerted. */
  lost: number;
  /** Second registrations or second receipts for one payment. */
  duplicates: number;
  refundCalls: number;
  /** Deliveries held back by the outage and sent after it. */
  withheld: number;
  /** Checkouts the sweep expired during the outage whose payment, arriving late, still registered or paid. */
  lateCompleted: number;
  /** Checkouts open before the outage that the sweep, asking the provider, found paid and completed at once. */
  completedBySweep: number;
}

export async function runWebhookStorm(harness: PaymentsHarness, options: StormOptions): Promise<StormReport> {
  const seed = options.seed ?? Math.floor(Math.random() * 2 ** 31);
  const random = createRandom(seed);
  const { ctx, provider } = harness;

  const events = await createEvents(harness, random, options.events ?? Math.max(4, Math.ceil(options.sessions / 4)));
  // Checkouts hold their places, so the payers are let in first and the capacities (1–4) set after, while
  // they are at the checkout: the payments then race for fewer places than were paid for, as they would
  // after an office lowered a capacity or paid after their checkout expired.
  const capacities = events.map(() => random.int(1, 4));
  const sessions = await stageSessions(harness, random, events, options.sessions);
  await setCapacities(harness, events, capacities);
  // One event is deleted while its payers are at the checkout: their payments must end UNFULFILLED with an alert.
  const deleted = events[events.length - 1] as EventRecord;
  await ctx.db('events').where({ id: deleted.id }).update({ deleted_at: ctx.clock.now() });

  const built = sessions.flatMap((session) => providerEventsFor(harness, session));
  const queue: ProviderObject[] = [...built];
  while (queue.length < options.deliveries && built.length > 0) queue.push(random.pick(built));
  random.shuffle(queue);

  const statuses: Record<number, number> = {};
  const deliverAll = async (batch: ProviderObject[]) => {
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const event = batch[next++] as ProviderObject;
        const { status } = await provider.deliverEvent(event);
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    };
    await Promise.all(Array.from({ length: options.concurrency ?? 16 }, worker));
  };
  let withheld: ProviderObject[] = [];
  let expiredBySweep: string[] = [];
  let completedBySweep = 0;
  if (options.outageMs) {
    const third = Math.floor(queue.length / 3);
    await deliverAll(queue.slice(0, third));
    withheld = queue.slice(third, 2 * third);
    const open = await ctx.db('checkout_sessions').where({ status: 'OPEN' }).pluck<string[]>('id');
    ctx.clock.advance(options.outageMs);
    await sweepExpiredCheckouts(ctx, { trigger: 'cli' });
    expiredBySweep = await ctx.db('checkout_sessions').whereIn('id', open).where({ status: 'EXPIRED' }).pluck<string[]>('id');
    completedBySweep = (await ctx.db('checkout_sessions').whereIn('id', open).where({ status: 'COMPLETED' }).pluck<string[]>('id')).length;
    // The provider's retries of what it could not deliver arrive among the rest.
    const after = [...withheld, ...queue.slice(2 * third)];
    random.shuffle(after);
    await deliverAll(after);
  } else {
    await deliverAll(queue);
  }
  const lateCompleted = expiredBySweep.length > 0 ? await ctx.db('checkout_sessions').whereIn('id', expiredBySweep).where({ status: 'COMPLETED' }).count<{ n: string }>({ n: '*' }).first() : undefined;

  const charged = sessions.filter((s) => CHARGED.has(s.scenario)).map((s) => s.providerSessionId);
  const violations = await checkInvariants(ctx.db, { charged, refundCalls: provider.refundCalls });
  violations.push(...(await checkScenarioOutcomes(harness, sessions, deleted.id)));
  const duplicates = await countDuplicates(harness, sessions);
  for (const [status, count] of Object.entries(statuses)) {
    if (status !== '200') violations.push({ rule: 'answered_200', detail: `${count} deliveries answered ${status}` });
  }
  const processed = await ctx.db('processed_webhook_events').whereIn('event_id', built.map((e) => e.id as string)).count<{ n: string }>({ n: '*' }).first();
  if (Number(processed?.n ?? 0) !== built.length) {
    violations.push({ rule: 'each_event_recorded_once', detail: `${processed?.n ?? 0} of ${built.length} events recorded` });
  }

  return {
    seed,
    sessions,
    events: built.length,
    deliveries: queue.length,
    redeliveries: queue.length - built.length,
    statuses,
    violations,
    lost: violations.filter((v) => v.rule === 'charged_accounted').length,
    duplicates,
    refundCalls: provider.refundCalls.length,
    withheld: withheld.length,
    lateCompleted: Number(lateCompleted?.n ?? 0),
    completedBySweep,
  };
}

/** Each event's capacity, but never below the places its bank-transfer registrations already took. */
async function setCapacities(harness: PaymentsHarness, events: EventRecord[], capacities: number[]): Promise<void> {
  for (const [index, event] of events.entries()) {
    const taken = await harness.tdb.db('registrations').where({ event_id: event.id }).whereIn('status', ['PENDING', 'PAID']).sum({ n: 'attendee_count' }).first();
    await harness.tdb.db('events').where({ id: event.id }).update({ capacity: Math.max(capacities[index] ?? 1, Number(taken?.n ?? 0)) });
  }
}

async function createEvents(harness: PaymentsHarness, random: Random, count: number): Promise<EventRecord[]> {
  const events: EventRecord[] = [];
  for (let i = 0; i < count; i++) {
    const { slug } = await insertEvent(harness.tdb.db, {
      capacity: 1000,
      online_payment: true,
      pass_card_fee: random.chance(0.5),
      pricing: JSON.stringify({
        tiers: [
          { id: 'adult', label: 'Adult', price: 2500 },
          { id: 'child', label: 'Child', price: 1200 },
        ],
      }),
    });
    events.push((await getEventBySlug(harness.tdb.db, slug)) as EventRecord);
  }
  return events;
}

/** New-registration checkouts, and some pay-now checkouts of bank-transfer registrations, through the real code. */
async function stageSessions(harness: PaymentsHarness, random: Random, events: EventRecord[], count: number): Promise<StagedSession[]> {
  const { ctx } = harness;
  const sessions: StagedSession[] = [];
  for (let i = 0; sessions.length < count && i < count * 4; i++) {
    const event = random.pick(events);
    const email = `storm-${i}-${random.int(0, 1e6)}@example.org`;
    const contact = { name: `Storm Payer ${i}`, email };
    const attendees = Array.from({ length: random.int(1, 2) }, (_, n) => ({ name: `Guest ${i}.${n}`, tier: random.chance(0.7) ? 'adult' : 'child' }));
    const scenario = random.weighted(SCENARIOS);
    try {
      if (random.chance(0.2)) {
        const registered = await registerForEvent(ctx, event, { contact, attendees, family: false, payment: 'bank' });
        if (registered.kind !== 'registered') throw new Error('a bank registration must not open a checkout');
        const started = await startExistingRegistrationCheckout(ctx, { registrationId: registered.registrationId });
        sessions.push({ ...(await sessionIds(harness, started.checkoutId)), scenario, email, payNowRegistrationId: registered.registrationId });
      } else {
        const started = await startEventCheckout(ctx, { event, contact, attendees, family: false });
        sessions.push({ ...(await sessionIds(harness, started.checkoutId)), scenario, email });
      }
    } catch (error) {
      // Bank registrations fill small events: the checkout is refused up front, as a payer would see it.
      if (error instanceof AppError && error.code === 'sold_out') continue;
      throw error;
    }
  }
  return sessions;
}

async function sessionIds(harness: PaymentsHarness, checkoutId: string): Promise<{ checkoutId: string; providerSessionId: string; eventId: string }> {
  const row = await harness.tdb.db('checkout_sessions').where({ id: checkoutId }).first<{ provider_session_id: string; event_id: string }>();
  return { checkoutId, providerSessionId: row.provider_session_id, eventId: row.event_id };
}

/** The provider's events for one session, built in the order the provider would send them (the storm shuffles them). */
function providerEventsFor(harness: PaymentsHarness, session: StagedSession): ProviderObject[] {
  const { provider } = harness;
  const id = session.providerSessionId;
  const completed = () => provider.buildEvent('checkout.session.completed', id);
  switch (session.scenario) {
    case 'paid':
      return [completed()];
    case 'paid_redelivered_new_id': {
      const first = completed();
      // The same completion again under a new event id (a provider-side replay): not a second payment.
      return [first, provider.buildEvent('checkout.session.completed', id)];
    }
    case 'async_success':
      return [
        provider.buildEvent('checkout.session.completed', id, { payment_status: 'unpaid' }),
        provider.buildEvent('checkout.session.async_payment_succeeded', id),
      ];
    case 'async_fail':
      return [
        provider.buildEvent('checkout.session.completed', id, { payment_status: 'unpaid' }),
        provider.buildEvent('checkout.session.async_payment_failed', id),
      ];
    case 'refund_full':
      return [completed(), provider.buildEvent('charge.refunded', id)];
    case 'refund_partial': {
      const event = completed();
      const amount = (provider.sessions.get(id)?.amount_total as number) ?? 0;
      return [event, provider.buildEvent('charge.refunded', id, { amount_refunded: Math.floor(amount / 2), refunded: false })];
    }
    case 'dispute':
      return [completed(), provider.buildEvent('charge.dispute.created', id)];
    case 'amount_mismatch': {
      const amount = (provider.sessions.get(id)?.amount_total as number) ?? 0;
      return [provider.buildEvent('checkout.session.completed', id, { amount_total: amount - 100 })];
    }
    case 'abandoned':
      return [];
  }
}

interface OutcomeRow {
  status: string;
  unfulfilled_reason: string | null;
  registration_id: string | null;
  payment_intent_id: string | null;
  event_id: string;
}

/** What each scenario must have ended as, beyond the shared invariants. */
async function checkScenarioOutcomes(harness: PaymentsHarness, sessions: StagedSession[], deletedEventId: string): Promise<InvariantViolation[]> {
  const { db } = harness.tdb;
  const violations: InvariantViolation[] = [];
  for (const session of sessions) {
    const row = await db('checkout_sessions').where({ id: session.checkoutId }).first<OutcomeRow>();
    const registration = row.registration_id
      ? await db('registrations').where({ id: row.registration_id }).first<{ status: string; payment_intent_id: string | null }>()
      : undefined;
    const fail = (detail: string) => violations.push({ rule: `scenario_${session.scenario}`, detail: `${session.providerSessionId}: ${detail}` });
    const onDeletedEvent = row.event_id === deletedEventId;
    switch (session.scenario) {
      case 'abandoned':
        // EXPIRED once an outage window let the sweep pass; never anything that claims a payment.
        if (row.status !== 'OPEN' && row.status !== 'EXPIRED') fail(`abandoned checkout is ${row.status}`);
        break;
      case 'async_fail':
        if (row.status !== 'EXPIRED') fail(`failed delayed payment left the checkout ${row.status}`);
        if (!session.payNowRegistrationId && row.registration_id) fail('failed delayed payment created a registration');
        break;
      case 'amount_mismatch':
        if (row.status !== 'UNFULFILLED') fail(`tampered amount ended ${row.status}`);
        break;
      case 'refund_full':
      case 'dispute':
        if (row.status === 'COMPLETED' && registration?.status !== 'CANCELLED') fail(`reversed payment left the registration ${registration?.status ?? 'missing'}`);
        if (row.status !== 'COMPLETED' && row.status !== 'UNFULFILLED') fail(`reversed payment ended ${row.status}`);
        break;
      default:
        if (row.status === 'COMPLETED' && registration?.status !== 'PAID') fail(`paid checkout left the registration ${registration?.status ?? 'missing'}`);
        if (row.status !== 'COMPLETED' && row.status !== 'UNFULFILLED') fail(`paid checkout ended ${row.status}`);
    }
    if (onDeletedEvent && CHARGED.has(session.scenario) && row.status === 'COMPLETED') fail('paid for a deleted event and registered');
    if (row.status === 'UNFULFILLED' && session.payNowRegistrationId) {
      const bank = await db('registrations').where({ id: session.payNowRegistrationId }).first<{ status: string }>();
      if (bank.status === 'PAID') fail('UNFULFILLED pay-now checkout but its registration is PAID');
    }
  }
  return violations;
}

/** Registrations beyond one per paid checkout, and receipts beyond one per payer. */
async function countDuplicates(harness: PaymentsHarness, sessions: StagedSession[]): Promise<number> {
  const receipts = await queuedMessages(harness.ctx, 'receipt');
  let duplicates = 0;
  for (const session of sessions) {
    const sent = receipts.filter((m) => m.to.includes(session.email)).length;
    if (sent > 1) duplicates += sent - 1;
  }
  const perIntent = await harness.tdb.db('checkout_sessions')
    .where({ status: 'COMPLETED' })
    .whereNotNull('registration_id')
    .groupBy('registration_id')
    .havingRaw('COUNT(*) > 1')
    .select<Array<{ n: string }>>(harness.tdb.db.raw('COUNT(*) AS n'));
  for (const group of perIntent) duplicates += Number(group.n) - 1;
  return duplicates;
}

/** A webhook outage longer than the 31-minute checkout, well inside the provider's 3-day retries. */
export const OUTAGE_MS = 3 * 60 * 60_000;

/** Soak form: a larger storm, repeated until the time budget is spent. */
export async function run(options: { durationMs?: number; runs?: number } = {}) {
  const deadline = Date.now() + (options.durationMs ?? 120_000);
  const maxRuns = options.runs ?? Number.POSITIVE_INFINITY;
  let inputs = 0;
  let lost = 0;
  let duplicates = 0;
  let passed = true;
  let sessions = 0;
  let rounds = 0;
  const problems: string[] = [];
  do {
    const harness = await startPaymentsHarness();
    try {
      const report = await runWebhookStorm(harness, { sessions: 200, deliveries: 1200, events: 30, concurrency: 24, outageMs: OUTAGE_MS });
      rounds += 1;
      sessions += report.sessions.length;
      inputs += report.deliveries;
      lost += report.lost;
      duplicates += report.duplicates;
      if (report.violations.length > 0) {
        passed = false;
        problems.push(`seed ${report.seed}: ${report.violations.slice(0, 5).map((v) => `${v.rule}: ${v.detail}`).join('; ')}`);
      }
    } finally {
      await harness.close();
    }
  } while (Date.now() < deadline && rounds < maxRuns);
  for (const problem of problems) process.stderr.write(`webhook-storm: ${problem}\n`);
  return {
    case: 'webhook-storm',
    load: `${rounds} storm(s): ${sessions} staged checkouts over events of capacity 1-4, ${inputs} signed deliveries, 24 concurrent`,
    faults: 'redeliveries (same event id), shuffled order, a 3-hour webhook outage with the sweep running and late retries, delayed success/failure, full/partial refunds, disputes, tampered amounts, event deleted mid-checkout',
    inputs,
    lost,
    duplicates,
    passed: passed && lost === 0 && duplicates === 0,
  };
}
