import fc from 'fast-check';
import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { addRegistration } from '../../src/office/registrations/add.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { AppError } from '../../src/errors.js';
import { reconcileCheckouts } from '../../src/jobs/reconcile.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { inFlightCheckoutsOf, startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import { PAYLOAD_KEPT_AFTER_EXPIRY_MS } from '../../src/payments/staging.js';
import { registerForEvent } from '../../src/signup/register.js';
import { cancelByRegistrant } from '../../src/family/cancel.js';
import { ManageRefusedError } from '../../src/family/managed-registration.js';
import { manageToken } from '../../src/payments/manage-link.js';
import { askToJoinWaitingList, confirmWaitlistEntry } from '../../src/registrations/waitlist/join.js';
import { runWaitlistPass } from '../../src/registrations/waitlist/offers.js';
import { claimToken, readClaimToken } from '../../src/registrations/waitlist/tokens.js';
import { creditRegistration, NotCreditableError, reverseCredit } from '../../src/office/registrations/credit.js';
import { CodeRefusedError, codeUses } from '../../src/registrations/codes.js';
import { cardPaymentMayArrive } from '../../src/registrations/ledger.js';
import { insertEvent } from '../../test/support/factories.js';
import { CODE_MAX_USES, checkCodesAndCredits, createModelCodes, type CodesCreditsModel } from '../support/codes-credits-model.js';
import { assertInvariants } from '../../test/support/invariants.js';
import { startPaymentsHarness, type PaymentsHarness } from '../../test/support/payments-harness.js';
import type { ProviderObject } from '../../test/support/provider-fixtures.js';

/**
 * Case 2, model-based interleavings: fast-check generates sequences of what
 * payers, the provider, the office and the jobs do — start a checkout, pay-now,
 * pay, pay with a delayed method that then succeeds or fails, pay during a
 * webhook outage and deliver the completion late, the provider's expiry, sweep
 * after time passes (releasing unpaid holds after a day), the scrub 72 hours
 * later, reconcile, full and partial refunds, disputes, refunds and disputes
 * whose webhook is lost (applied by reconcile), inquiries closed, escalated or
 * won, redeliveries, a completion racing its own refund, and the office recording a bank transfer,
 * cancelling and registering by hand (alone or racing a payment) — and runs
 * them against the real code on real PostgreSQL (deliveries through the real
 * server). After every step the shared invariants must hold (every charged
 * session registered PAID or CANCELLED, or UNFULFILLED with exactly one alert;
 * no registration offering pay-now while a card payment for it may be in
 * flight), plus each step's own promise.
 */

type ProviderState = 'open' | 'pending' | 'paid' | 'failed' | 'expired';

interface ModelSession {
  providerSessionId: string;
  checkoutId: string;
  /** Pay-now: the registration it pays. */
  registrationId?: string;
  provider: ProviderState;
}

export interface InterleavingModel extends CodesCreditsModel {
  sessions: ModelSession[];
  /** Bank-transfer registrations pay-now may be used on. */
  bankRegistrations: string[];
  /** Every event delivered, for redelivery. */
  delivered: ProviderObject[];
  /** Provider sessions whose payment the provider settled and that were delivered or reconciled since. */
  charged: Set<string>;
  /** Completions the provider could not deliver during an outage, oldest first. */
  withheld: Array<{ session: ModelSession; event: ProviderObject }>;
  /** Refunds and disputes made at the provider whose webhook never arrived: only reconcile's event replay can apply them. */
  lostReversals: Array<{ session: ModelSession; event: ProviderObject; takesMoney: boolean }>;
}

export interface InterleavingReal {
  harness: PaymentsHarness;
  events: EventRecord[];
  /** The codes with few uses created for this run, handed to the model. */
  codes: CodesCreditsModel['codes'];
  counters: InterleavingCounters;
}

export interface InterleavingCounters {
  runs: number;
  commands: number;
  /** How often each waiting-list and self-service step ran, and how often it changed something. */
  waitlist?: Record<string, number>;
}

function count(real: InterleavingReal, name: string): void {
  const tally = (real.counters.waitlist ??= {});
  tally[name] = (tally[name] ?? 0) + 1;
}

type Cmd = fc.AsyncCommand<InterleavingModel, InterleavingReal, false>;

async function settle(model: InterleavingModel, real: InterleavingReal): Promise<void> {
  real.counters.commands += 1;
  await assertInvariants(real.harness.tdb.db, {
    charged: model.charged,
    refundCalls: real.harness.provider.refundCalls,
    waitlist: { now: real.harness.ctx.clock.now() },
    pages: { baseUrl: real.harness.server.url, authSecret: real.harness.ctx.config.authSecret, now: real.harness.ctx.clock.now() },
  });
  await checkCodesAndCredits(real.harness.tdb.db, model, real.harness.ctx.clock.now());
}

async function deliver(model: InterleavingModel, real: InterleavingReal, event: ProviderObject): Promise<{ outcome?: string }> {
  const result = await real.harness.provider.deliverEvent(event);
  if (result.status !== 200) throw new Error(`delivery of ${String(event.type)} answered ${result.status}: ${result.body}`);
  const answer = JSON.parse(result.body) as { outcome?: string };
  // An event we do not act on (an inquiry closed, a dispute lost), or a notice about a payment not (yet) known as
  // ours (its completion still withheld), is not recorded, so it has no redelivery to check.
  if (answer.outcome !== 'ignored' && answer.outcome !== 'not_ours') model.delivered.push(event);
  return answer;
}

const pick = <T>(items: T[], index: number): T => items[index % items.length] as T;
const inState = (model: InterleavingModel, state: ProviderState) => model.sessions.filter((s) => s.provider === state);

const isRefusal = (error: unknown) =>
  error instanceof AppError && ['sold_out', 'registration_closed', 'not_payable', 'not_markable', 'already_cancelled', 'card_payment_may_arrive'].includes(error.code);

const isWaitlistRefusal = (error: unknown) =>
  error instanceof AppError && ['registration_closed', 'places_available', 'already_waiting', 'invalid_places', 'waitlist_off'].includes(error.code);

const OFFICE = { actor: 'model-office' };
const money = moneyFormatter({ locale: 'en-AU', currency: 'AUD' });

async function registrationIds(real: InterleavingReal): Promise<string[]> {
  return real.harness.tdb.db('registrations').orderBy([{ column: 'created_at' }, { column: 'id' }]).pluck('id');
}

async function statusOf(real: InterleavingReal, id: string): Promise<{ status: string; total_minor: number }> {
  return real.harness.tdb.db('registrations').where({ id }).first<{ status: string; total_minor: number }>('status', 'total_minor');
}

class StartCheckout implements Cmd {
  constructor(readonly event: number, readonly attendees: number) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const event = pick(real.events, this.event);
    const n = model.sessions.length;
    try {
      const attendees = Array.from({ length: this.attendees }, (_, i) => ({ name: `Guest ${n}.${i}`, tier: 'adult' }));
      const started = await startEventCheckout(real.harness.ctx, {
        event,
        contact: { name: `Payer ${n}`, email: `payer-${n}@example.org` },
        attendees,
        family: false,
      });
      model.sessions.push({ ...(await providerIdsOf(real, started.checkoutId)), provider: 'open' });
    } catch (error) {
      if (!isRefusal(error)) throw error;
    }
    await settle(model, real);
  }
  toString = () => `startCheckout(event ${this.event}, ${this.attendees} seat(s))`;
}

class PayNow implements Cmd {
  constructor(readonly event: number, readonly existing: number | null) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const { ctx } = real.harness;
    let registrationId: string | undefined;
    if (this.existing !== null && model.bankRegistrations.length > 0) {
      registrationId = pick(model.bankRegistrations, this.existing);
    } else {
      const n = model.bankRegistrations.length;
      try {
        const registered = await registerForEvent(ctx, pick(real.events, this.event), {
          contact: { name: `Bank Payer ${n}`, email: `bank-${n}@example.org` },
          attendees: [{ name: `Bank Guest ${n}`, tier: 'adult' }],
          family: false,
          payment: 'bank',
        });
        if (registered.kind === 'registered') registrationId = registered.registrationId;
      } catch (error) {
        if (!isRefusal(error)) throw error;
      }
      if (registrationId) model.bankRegistrations.push(registrationId);
    }
    if (registrationId) {
      const live = model.sessions.filter((s) => s.registrationId === registrationId);
      try {
        const started = await startExistingRegistrationCheckout(ctx, { registrationId });
        if (started.reused) {
          // Reuse hands back a live session of this registration: open, or already paid during a webhook outage (the
          // provider's page then shows it paid; a session takes one payment, so nothing can be charged twice).
          const reused = live.find((s) => s.checkoutId === started.checkoutId);
          if (!reused || (reused.provider !== 'open' && reused.provider !== 'paid')) {
            throw new Error(`pay-now reused ${started.checkoutId}, not a live session of this registration`);
          }
        } else {
          const others = (await inFlightCheckoutsOf(real.harness.tdb.db, registrationId)).filter((row) => row.id !== started.checkoutId);
          if (others.length > 0) throw new Error(`pay-now opened a second checkout while ${others[0]?.id ?? '?'} may still be paid`);
          // A live session it did not hand out again (too little time left, or another amount) was expired at the provider.
          for (const session of live) {
            if (session.provider === 'open' && real.harness.provider.sessions.get(session.providerSessionId)?.status === 'expired') session.provider = 'expired';
          }
          model.sessions.push({ ...(await providerIdsOf(real, started.checkoutId)), registrationId, provider: 'open' });
        }
      } catch (error) {
        if (!isRefusal(error)) throw error;
      }
    }
    await settle(model, real);
  }
  toString = () => `payNow(${this.existing === null ? `new bank registration on event ${this.event}` : `bank registration #${this.existing}`})`;
}

class CompletePaid implements Cmd {
  constructor(readonly session: number) {}
  check = (model: InterleavingModel) => inState(model, 'open').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'open'), this.session);
    session.provider = 'paid';
    model.charged.add(session.providerSessionId);
    await deliver(model, real, real.harness.provider.buildEvent('checkout.session.completed', session.providerSessionId));
    await settle(model, real);
  }
  toString = () => `completePaid(#${this.session})`;
}

/** The payer pays while our webhook endpoint is down: the provider keeps the completion to deliver later. */
class CompletePaidDuringOutage implements Cmd {
  constructor(readonly session: number) {}
  check = (model: InterleavingModel) => inState(model, 'open').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'open'), this.session);
    session.provider = 'paid';
    model.withheld.push({ session, event: real.harness.provider.buildEvent('checkout.session.completed', session.providerSessionId) });
    await settle(model, real);
  }
  toString = () => `completePaidDuringOutage(#${this.session})`;
}

/** The outage is over: the provider's retry delivers one withheld completion. Kept payloads are honoured. */
class DeliverLate implements Cmd {
  constructor(readonly index: number) {}
  check = (model: InterleavingModel) => model.withheld.length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const [late] = model.withheld.splice(this.index % model.withheld.length, 1);
    if (!late) return;
    const { db } = real.harness.tdb;
    const before = await db('checkout_sessions').where({ id: late.session.checkoutId }).first<{ status: string; scrubbed_at: Date | null }>();
    model.charged.add(late.session.providerSessionId);
    await deliver(model, real, late.event);
    const after = await db('checkout_sessions').where({ id: late.session.checkoutId }).first<{ status: string; unfulfilled_reason: string | null }>();
    if (before.status === 'EXPIRED' && before.scrubbed_at === null && after.unfulfilled_reason === 'checkout_expired') {
      throw new Error(`a late completion of ${late.session.checkoutId} was refused as expired although its payload was kept`);
    }
    await settle(model, real);
  }
  toString = () => `deliverLate(#${this.index})`;
}

/** The provider expires an unpaid session whose time is up and says so (checkout.session.expired). */
class ExpireAtProvider implements Cmd {
  constructor(readonly session: number) {}
  check = (model: InterleavingModel) => inState(model, 'open').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const { provider, ctx, tdb } = real.harness;
    const nowSeconds = Math.floor(ctx.clock.now().getTime() / 1000);
    const due = inState(model, 'open').filter((s) => (provider.sessions.get(s.providerSessionId)?.expires_at as number) <= nowSeconds);
    if (due.length === 0) return settle(model, real);
    const session = pick(due, this.session);
    session.provider = 'expired';
    await deliver(model, real, provider.buildEvent('checkout.session.expired', session.providerSessionId));
    const row = await tdb.db('checkout_sessions').where({ id: session.checkoutId }).first<{ status: string }>();
    if (row.status !== 'EXPIRED') throw new Error(`the provider's expiry left checkout ${session.checkoutId} ${row.status}`);
    await settle(model, real);
  }
  toString = () => `expireAtProvider(#${this.session})`;
}

/** 73 hours later: the sweep scrubs every payload kept past the redelivery window. */
class Scrub implements Cmd {
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    real.harness.ctx.clock.advance(PAYLOAD_KEPT_AFTER_EXPIRY_MS + 60 * 60_000);
    await sweepExpiredCheckouts(real.harness.ctx, { trigger: 'cli' });
    // Kept only within the window after its own expiry: a delayed payment's 14-day checkout may expire during this advance.
    const windowStart = new Date(real.harness.ctx.clock.now().getTime() - PAYLOAD_KEPT_AFTER_EXPIRY_MS);
    const kept = await real.harness.tdb.db('checkout_sessions')
      .where({ status: 'EXPIRED' })
      .whereNull('scrubbed_at')
      .where('expires_at', '<', windowStart)
      .count<{ n: string }>({ n: '*' })
      .first();
    if (Number(kept?.n ?? 0) > 0) throw new Error(`${String(kept?.n)} expired checkout(s) still kept after the redelivery window`);
    await settle(model, real);
  }
  toString = () => 'scrub(after 73 h)';
}

/** eventops reconcile --apply: every session paid at the provider in its window ends accounted for, and nothing stays unresolved. */
class Reconcile implements Cmd {
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const { ctx, provider } = real.harness;
    const summary = await reconcileCheckouts(ctx, { trigger: 'cli' });
    if (summary.unresolved !== 0) throw new Error(`reconcile left ${String(summary.unresolved)} difference(s): ${JSON.stringify(summary.rows?.filter((r) => r.unresolved))}`);
    const windowStart = Math.floor(ctx.clock.now().getTime() / 1000) - 72 * 3600;
    for (const session of model.sessions) {
      const atProvider = provider.sessions.get(session.providerSessionId);
      if (session.provider === 'paid' && (atProvider?.created as number) >= windowStart) model.charged.add(session.providerSessionId);
      if (atProvider?.status === 'expired') session.provider = 'expired';
    }
    // Every lost refund or dispute the provider still lists (30 days) was applied: its registration is cancelled,
    // and the event is now handled, so its late delivery is a duplicate (Redeliver checks that).
    const listedFrom = Math.floor(ctx.clock.now().getTime() / 1000) - 30 * 24 * 3600;
    for (const lost of model.lostReversals.splice(0)) {
      if ((lost.event.created as number) < listedFrom) continue;
      const handled = await real.harness.tdb.db('processed_webhook_events').where({ event_id: lost.event.id }).first('event_id');
      if (!handled) throw new Error(`reconcile left the lost ${String(lost.event.type)} ${String(lost.event.id)} unhandled`);
      model.delivered.push(lost.event);
      if (lost.takesMoney) await expectCancelledIfRegistered(real, lost.session, `the lost ${String(lost.event.type)} replayed by reconcile`);
    }
    await settle(model, real);
  }
  toString = () => 'reconcile(--apply)';
}

class CompleteUnpaid implements Cmd {
  constructor(readonly session: number) {}
  check = (model: InterleavingModel) => inState(model, 'open').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'open'), this.session);
    session.provider = 'pending';
    await deliver(model, real, real.harness.provider.buildEvent('checkout.session.completed', session.providerSessionId, { payment_status: 'unpaid' }));
    await settle(model, real);
  }
  toString = () => `completeUnpaid(#${this.session})`;
}

class AsyncSuccess implements Cmd {
  constructor(readonly session: number) {}
  check = (model: InterleavingModel) => inState(model, 'pending').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'pending'), this.session);
    session.provider = 'paid';
    model.charged.add(session.providerSessionId);
    await deliver(model, real, real.harness.provider.buildEvent('checkout.session.async_payment_succeeded', session.providerSessionId));
    await settle(model, real);
  }
  toString = () => `asyncSuccess(#${this.session})`;
}

class AsyncFail implements Cmd {
  constructor(readonly session: number) {}
  check = (model: InterleavingModel) => inState(model, 'pending').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'pending'), this.session);
    session.provider = 'failed';
    await deliver(model, real, real.harness.provider.buildEvent('checkout.session.async_payment_failed', session.providerSessionId));
    const row = await real.harness.tdb.db('checkout_sessions').where({ id: session.checkoutId }).first<{ status: string }>();
    if (row.status === 'OPEN' || row.status === 'COMPLETED') throw new Error(`a failed delayed payment left checkout ${session.checkoutId} ${row.status}`);
    await settle(model, real);
  }
  toString = () => `asyncFail(#${this.session})`;
}

class Sweep implements Cmd {
  constructor(readonly minutes: number) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    real.harness.ctx.clock.advance(this.minutes * 60_000);
    await sweepExpiredCheckouts(real.harness.ctx, { trigger: 'cli' });
    // The sweep expires at the provider a session still open there past our expiry: nobody can pay it any more.
    for (const session of model.sessions) {
      if (session.provider === 'open' && real.harness.provider.sessions.get(session.providerSessionId)?.status === 'expired') session.provider = 'expired';
    }
    const releasedButPaid = await real.harness.tdb.db('registrations')
      .where({ cancel_reason: 'unpaid_hold' })
      .where((q) => q.whereExists((sub) => sub.select(1).from('registration_payments as p').whereRaw('p.registration_id = registrations.id')).orWhereNotNull('paid_at').orWhereNot('payment_method', 'bank'))
      .first('id');
    if (releasedButPaid) throw new Error(`the unpaid-hold release cancelled registration ${String(releasedButPaid.id)}, which was paid`);
    await settle(model, real);
  }
  toString = () => `sweep(after ${this.minutes} min)`;
}

class Reverse implements Cmd {
  constructor(
    readonly kind: 'refund_full' | 'refund_partial' | 'dispute',
    readonly session: number,
  ) {}
  check = (model: InterleavingModel) => inState(model, 'paid').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'paid'), this.session);
    const { provider, tdb } = real.harness;
    const amount = (provider.sessions.get(session.providerSessionId)?.amount_total as number) ?? 0;
    const event =
      this.kind === 'dispute'
        ? provider.buildEvent('charge.dispute.created', session.providerSessionId)
        : provider.buildEvent(
            'charge.refunded',
            session.providerSessionId,
            this.kind === 'refund_partial' ? { amount_refunded: Math.floor(amount / 3), refunded: false } : {},
          );
    await deliver(model, real, event);
    if (this.kind !== 'refund_partial') {
      const registration = await completedRegistrationOf(real, session);
      if (registration && registration.status !== 'CANCELLED') throw new Error(`a ${this.kind} left registration ${registration.id} ${registration.status}`);
      // Whoever cancelled it, money the bank took no longer counts as held; only a refund had already given it back.
      if (registration && this.kind === 'dispute' && registration.cancel_reason !== 'dispute' && registration.cancel_reason !== 'refund') {
        throw new Error(`a dispute left registration ${registration.id} cancelled as ${registration.cancel_reason ?? 'null'}, counting the money the bank took as paid`);
      }
    }
    await settle(model, real);
  }
  toString = () => `${this.kind}(#${this.session})`;
}

/** The registration a completed checkout made or paid; none while the checkout is not COMPLETED. */
async function completedRegistrationOf(real: InterleavingReal, session: ModelSession): Promise<{ id: string; status: string; cancel_reason: string | null } | undefined> {
  const { db } = real.harness.tdb;
  const row = await db('checkout_sessions').where({ id: session.checkoutId }).first<{ status: string; registration_id: string | null }>();
  if (row.status !== 'COMPLETED' || !row.registration_id) return undefined;
  return db('registrations').where({ id: row.registration_id }).first<{ id: string; status: string; cancel_reason: string | null }>('id', 'status', 'cancel_reason');
}

/** A full refund or a dispute taking the money must leave a completed checkout's registration CANCELLED. */
async function expectCancelledIfRegistered(real: InterleavingReal, session: ModelSession, what: string): Promise<void> {
  const registration = await completedRegistrationOf(real, session);
  if (registration && registration.status !== 'CANCELLED') throw new Error(`${what} left registration ${registration.id} ${registration.status}`);
}

/** A refund or dispute made at the provider days after the payment, its webhook lost for good. */
class ReverseLost implements Cmd {
  constructor(
    readonly kind: 'refund_full' | 'dispute',
    readonly days: number,
    readonly session: number,
  ) {}
  check = (model: InterleavingModel) => inState(model, 'paid').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'paid'), this.session);
    real.harness.ctx.clock.advance(this.days * 24 * 3600_000);
    const event = real.harness.provider.buildEvent(this.kind === 'dispute' ? 'charge.dispute.created' : 'charge.refunded', session.providerSessionId);
    model.lostReversals.push({ session, event, takesMoney: true });
    await settle(model, real);
  }
  toString = () => `${this.kind}Lost(#${this.session}, after ${this.days} day(s))`;
}

/**
 * The cardholder's bank asks about a payment (an inquiry: no money moves, the registration stands). Then it
 * closes it, or escalates it to a chargeback (`funds_withdrawn`, delivered or lost), or the chargeback is won.
 */
class Inquiry implements Cmd {
  constructor(
    readonly then: 'closed' | 'escalated' | 'escalated_lost' | 'escalated_won',
    readonly session: number,
  ) {}
  check = (model: InterleavingModel) => inState(model, 'paid').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'paid'), this.session);
    const { provider, tdb } = real.harness;
    const registrationOf = async () => {
      const row = await tdb.db('checkout_sessions').where({ id: session.checkoutId }).first<{ registration_id: string | null }>();
      return row.registration_id ? tdb.db('registrations').where({ id: row.registration_id }).first<{ status: string; cancel_reason: string | null }>() : undefined;
    };
    const before = await registrationOf();
    await deliver(model, real, provider.buildEvent('charge.dispute.created', session.providerSessionId, { status: 'warning_needs_response' }));
    const asked = await registrationOf();
    if (before && asked && asked.status !== before.status) throw new Error(`an inquiry moved a registration from ${before.status} to ${asked.status}`);
    if (this.then === 'closed') {
      await deliver(model, real, provider.buildEvent('charge.dispute.closed', session.providerSessionId, { status: 'warning_closed' }));
    } else {
      const withdrawn = provider.buildEvent('charge.dispute.funds_withdrawn', session.providerSessionId);
      if (this.then === 'escalated_lost') {
        model.lostReversals.push({ session, event: withdrawn, takesMoney: true });
      } else {
        const completedBefore = await completedRegistrationOf(real, session);
        await deliver(model, real, withdrawn);
        await expectCancelledIfRegistered(real, session, 'an inquiry escalated to a chargeback');
        if (this.then === 'escalated_won') {
          await deliver(model, real, provider.buildEvent('charge.dispute.closed', session.providerSessionId, { status: 'won' }));
          await expectReasonAfterWon(real, session, completedBefore);
        }
      }
    }
    await settle(model, real);
  }
  toString = () => `inquiry(#${this.session}, then ${this.then})`;
}

/**
 * After a chargeback the church won, a registration it found cancelled has its reason from before (the money is
 * back; one cancelled for a refund or an earlier dispute keeps it), and one it cancelled stays cancelled for it.
 */
async function expectReasonAfterWon(real: InterleavingReal, session: ModelSession, before: { status: string; cancel_reason: string | null } | undefined): Promise<void> {
  const after = await completedRegistrationOf(real, session);
  if (!before || !after) return;
  const expected = before.status === 'CANCELLED' ? before.cancel_reason : 'dispute';
  if (after.status !== 'CANCELLED' || after.cancel_reason !== expected) {
    throw new Error(`a won chargeback left registration ${after.id} ${after.status} (${after.cancel_reason ?? 'null'}), expected CANCELLED (${expected ?? 'null'})`);
  }
}

/** A refund made in the dashboard that then fails at the provider (delivered, or lost for reconcile to find). */
class RefundFails implements Cmd {
  constructor(
    readonly lost: boolean,
    readonly session: number,
  ) {}
  check = (model: InterleavingModel) => inState(model, 'paid').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'paid'), this.session);
    const { provider, tdb } = real.harness;
    await deliver(model, real, provider.buildEvent('charge.refunded', session.providerSessionId));
    await expectCancelledIfRegistered(real, session, 'a full refund');
    const failed = provider.buildEvent('refund.failed', session.providerSessionId);
    if (this.lost) {
      model.lostReversals.push({ session, event: failed, takesMoney: false });
    } else {
      await deliver(model, real, failed);
      const paymentIntent = provider.sessions.get(session.providerSessionId)?.payment_intent as string;
      const told = await tdb.db('operations_alerts').where({ kind: 'refund_failed', payment_intent_id: paymentIntent }).whereRaw(`details->>'refundId' = ?`, [(failed.data as { object: { id: string } }).object.id]);
      if (told.length !== 1) throw new Error(`a failed refund raised ${told.length} refund_failed alert(s), not one`);
    }
    await settle(model, real);
  }
  toString = () => `refundFails(#${this.session}${this.lost ? ', its webhook lost' : ''})`;
}

class Redeliver implements Cmd {
  constructor(readonly delivery: number) {}
  check = (model: InterleavingModel) => model.delivered.length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const event = pick(model.delivered, this.delivery);
    const before = await snapshot(real);
    const { outcome } = await deliver(model, real, event);
    if (outcome !== 'duplicate_event') throw new Error(`redelivery of ${String(event.id)} was handled again (${String(outcome)})`);
    const after = await snapshot(real);
    if (after !== before) throw new Error(`redelivery of ${String(event.id)} changed the database:\n${before}\n${after}`);
    await settle(model, real);
  }
  toString = () => `redeliver(#${this.delivery})`;
}

/** A payment and its refund (or dispute) arriving at the same moment. */
class RaceCompletionAndReversal implements Cmd {
  constructor(
    readonly session: number,
    readonly dispute: boolean,
  ) {}
  check = (model: InterleavingModel) => inState(model, 'open').length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const session = pick(inState(model, 'open'), this.session);
    const { provider, tdb } = real.harness;
    session.provider = 'paid';
    model.charged.add(session.providerSessionId);
    const completed = provider.buildEvent('checkout.session.completed', session.providerSessionId);
    const reversal = provider.buildEvent(this.dispute ? 'charge.dispute.created' : 'charge.refunded', session.providerSessionId);
    await Promise.all([deliver(model, real, completed), deliver(model, real, reversal)]);
    const row = await tdb.db('checkout_sessions').where({ id: session.checkoutId }).first<{ status: string; registration_id: string | null }>();
    if (row.status === 'COMPLETED' && row.registration_id) {
      const registration = await tdb.db('registrations').where({ id: row.registration_id }).first<{ status: string }>();
      if (registration.status !== 'CANCELLED') throw new Error(`a payment raced by its reversal left registration ${registration.status}`);
    }
    await settle(model, real);
  }
  toString = () => `race(completion, ${this.dispute ? 'dispute' : 'refund'}, #${this.session})`;
}

/** The office records a bank transfer for the whole amount, optionally at the same moment as a pay-now payment lands. */
class MarkPaid implements Cmd {
  constructor(
    readonly registration: number,
    readonly racePayment: number | null,
  ) {}
  check = (model: InterleavingModel) => model.bankRegistrations.length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const id = pick(model.bankRegistrations, this.registration);
    const before = await statusOf(real, id);
    const racing = this.racePayment === null ? undefined : model.sessions.find((s) => s.registrationId === id && s.provider === 'open');
    const markPaid = markRegistrationPaid(real.harness.ctx, { registration: id, amountMinor: before.total_minor, method: 'bank', ...OFFICE }, money).then(
      () => true,
      (error: unknown) => {
        if (!isRefusal(error)) throw error;
        return false;
      },
    );
    if (racing) {
      racing.provider = 'paid';
      model.charged.add(racing.providerSessionId);
    }
    const [recorded] = await Promise.all([
      markPaid,
      racing ? deliver(model, real, real.harness.provider.buildEvent('checkout.session.completed', racing.providerSessionId)) : undefined,
    ]);
    const after = await statusOf(real, id);
    if (recorded && before.status !== 'PENDING') throw new Error(`mark-paid recorded a payment for a ${before.status} registration ${id}`);
    if (recorded && after.status !== 'PAID' && after.status !== 'CANCELLED') throw new Error(`mark-paid left registration ${id} ${after.status}`);
    await settle(model, real);
  }
  toString = () => `markPaid(bank registration #${this.registration}${this.racePayment === null ? '' : ', racing its pay-now payment'})`;
}

/** The office cancels any registration (bank or card, paid or not). */
class OfficeCancel implements Cmd {
  constructor(readonly registration: number) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const ids = await registrationIds(real);
    if (ids.length > 0) {
      const id = pick(ids, this.registration);
      const before = await statusOf(real, id);
      try {
        await cancelRegistration(real.harness.ctx, { registration: id, ...OFFICE });
        if (before.status === 'CANCELLED') throw new Error(`cancel succeeded twice on registration ${id}`);
      } catch (error) {
        if (!isRefusal(error)) throw error;
        if (before.status !== 'CANCELLED') throw new Error(`cancel of a ${before.status} registration was refused: ${String(error)}`);
      }
      if ((await statusOf(real, id)).status !== 'CANCELLED') throw new Error(`cancel left registration ${id} not CANCELLED`);
    }
    await settle(model, real);
  }
  toString = () => `officeCancel(registration #${this.registration})`;
}

/** The office registers someone by hand (within the capacity), unpaid or paid by bank transfer. */
class OfficeAdd implements Cmd {
  constructor(
    readonly event: number,
    readonly attendees: number,
    readonly paid: boolean,
  ) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const event = pick(real.events, this.event);
    const n = model.bankRegistrations.length;
    try {
      const added = await addRegistration(real.harness.ctx, {
        eventSlug: event.slug,
        contact: { name: `Office Guest ${n}`, email: `office-${n}@example.org` },
        attendees: Array.from({ length: this.attendees }, (_, i) => ({ name: `Office Guest ${n}.${i}`, tier: 'adult' })),
        family: false,
        paid: this.paid ? 'bank' : 'none',
        overCapacity: false,
        ...OFFICE,
      });
      if (added.status === 'PENDING') model.bankRegistrations.push(added.registrationId);
    } catch (error) {
      if (!isRefusal(error)) throw error;
    }
    await settle(model, real);
  }
  toString = () => `officeAdd(event ${this.event}, ${this.attendees} seat(s), ${this.paid ? 'paid by bank' : 'unpaid'})`;
}

/** A registrant cancels on their manage page (free or unpaid bank transfer only), as the manage route does. */
class SelfCancel implements Cmd {
  constructor(readonly registration: number) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const ids = await registrationIds(real);
    if (ids.length > 0) {
      const id = pick(ids, this.registration);
      const { db } = real.harness.tdb;
      const before = await db('registrations').where({ id }).first<{ status: string; manage_link_version: number }>('status', 'manage_link_version');
      const token = manageToken(real.harness.ctx.config.authSecret, { registrationId: id, version: before.manage_link_version });
      count(real, 'selfCancel');
      try {
        const freed = await cancelByRegistrant(real.harness.ctx, token, '203.0.113.9');
        if (freed) {
          count(real, 'selfCancel.cancelled');
          if (before.status !== 'PENDING') throw new Error(`a registrant cancelled a ${before.status} registration ${id} themselves`);
          if ((await statusOf(real, id)).status !== 'CANCELLED') throw new Error(`self-cancel left registration ${id} not CANCELLED`);
        }
      } catch (error) {
        if (!(error instanceof ManageRefusedError)) throw error;
        if ((await statusOf(real, id)).status !== before.status) throw new Error(`a refused self-cancel changed registration ${id}`);
      }
    }
    await settle(model, real);
  }
  toString = () => `selfCancel(registration #${this.registration})`;
}

/** Someone joins an event's waiting list through the public form's function, and confirms it from the email's link. */
class JoinWaitlist implements Cmd {
  constructor(
    readonly event: number,
    readonly mailbox: number,
    readonly places: number,
  ) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const event = pick(real.events, this.event);
    count(real, 'joinWaitlist');
    try {
      const asked = await askToJoinWaitingList(
        real.harness.ctx,
        event,
        { contact: { name: `Waiting ${this.mailbox}`, email: `waiting-${this.mailbox}@example.org` }, places: this.places },
        { actor: 'waiting-list form' },
      );
      if (asked.kind === 'asked' && (await confirmWaitlistEntry(real.harness.ctx, asked.entryId, { actor: 'confirm link' })).kind === 'confirmed') {
        count(real, 'joinWaitlist.joined');
      }
    } catch (error) {
      if (!isWaitlistRefusal(error)) throw error;
    }
    await settle(model, real);
  }
  toString = () => `joinWaitlist(event ${this.event}, waiting-${this.mailbox}, ${this.places} place(s))`;
}

/** The offer pass on its own (the sweep runs it too): expires offers past their time and offers freed places. */
class WaitlistPass implements Cmd {
  constructor(readonly minutes: number) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    real.harness.ctx.clock.advance(this.minutes * 60_000);
    count(real, 'waitlistPass');
    const counts = await runWaitlistPass(real.harness.ctx, { actor: 'model-pass' });
    if (counts.offered > 0) count(real, 'waitlistPass.offered');
    if (counts.expired > 0) count(real, 'waitlistPass.expired');
    await settle(model, real);
  }
  toString = () => `waitlistPass(after ${this.minutes} min)`;
}

interface EntrySeen {
  id: string;
  event_id: string;
  state: string;
  places: number;
  offer_seq: number;
  offer_expires_at: Date | null;
}

/**
 * The person offered places registers through the claim link by bank transfer (the register route's path with the
 * offer's token), or an old link (claimed, expired, superseded) is used again: only an open offer is taken.
 */
class ClaimOffer implements Cmd {
  constructor(
    readonly entry: number,
    readonly fewer: boolean,
  ) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const { ctx, tdb } = real.harness;
    const offered = await tdb.db('waitlist_entries').where('offer_seq', '>', 0).orderBy('id').select<EntrySeen[]>('id', 'event_id', 'state', 'places', 'offer_seq', 'offer_expires_at');
    if (offered.length > 0) {
      const entry = pick(offered, this.entry);
      const event = real.events.find((e) => e.id === entry.event_id) as EventRecord;
      const now = ctx.clock.now();
      const open = entry.state === 'OFFERED' && entry.offer_expires_at !== null && entry.offer_expires_at > now;
      const waitlistOffer = readClaimToken(ctx.config.keyring, claimToken(ctx.config.keyring, { entryId: entry.id, offerSeq: entry.offer_seq }));
      const attendees = this.fewer && entry.places > 1 ? 1 : entry.places;
      count(real, 'claimOffer');
      let claimed = false;
      try {
        const registered = await registerForEvent(ctx, event, {
          contact: { name: `Claimer ${entry.id.slice(0, 8)}`, email: `claimer-${entry.id.slice(0, 8)}@example.org` },
          attendees: Array.from({ length: attendees }, (_, i) => ({ name: `Claimed Guest ${i}`, tier: 'adult' })),
          family: false,
          payment: 'bank',
          waitlistOffer,
        });
        if (registered.kind === 'registered') {
          claimed = true;
          model.bankRegistrations.push(registered.registrationId);
        }
      } catch (error) {
        if (!(isRefusal(error) || (error instanceof AppError && error.code === 'offer_not_open'))) throw error;
      }
      if (claimed) count(real, 'claimOffer.claimed');
      if (claimed && !open) throw new Error(`an offer that was ${entry.state} (expiring ${String(entry.offer_expires_at?.toISOString())}) was claimed`);
      if (!claimed && open && event.startsAt > now) throw new Error(`an open offer ${entry.id} could not be claimed`);
      const after = await tdb.db('waitlist_entries').where({ id: entry.id }).first<{ state: string }>('state');
      if (claimed !== (after.state === 'CLAIMED' && entry.state === 'OFFERED')) throw new Error(`a claim left entry ${entry.id} ${after.state} (was ${entry.state})`);
    }
    await settle(model, real);
  }
  toString = () => `claimOffer(entry #${this.entry}${this.fewer ? ', fewer attendees' : ''})`;
}

type CodePath = 'card' | 'bank' | 'office';

/**
 * A family registers with an event's code of few uses: by card (the open checkout holds the use), by bank transfer,
 * or the office by hand. Refused as used up exactly when its live uses already reach the limit; taken otherwise.
 * The uses come back through the other steps: cancels, self-cancels, refunds, disputes, the checkout's expiry and
 * the release of unpaid holds (the event with room for 2 releases them after a day).
 */
class CodeRegister implements Cmd {
  constructor(
    readonly code: number,
    readonly path: CodePath,
    readonly attendees: number,
  ) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const { ctx, tdb } = real.harness;
    const code = pick(model.codes, this.code);
    const event = real.events.find((e) => e.id === code.eventId) as EventRecord;
    const n = model.sessions.length + model.bankRegistrations.length;
    const contact = { name: `Code Payer ${n}`, email: `code-${n}@example.org` };
    const attendees = Array.from({ length: this.attendees }, (_, i) => ({ name: `Code Guest ${n}.${i}`, tier: 'adult' }));
    // Typed in another case: codes are compared without regard to it.
    const typed = code.text.toLowerCase();
    const usesBefore = await codeUses(tdb.db, code.id, ctx.clock.now());
    count(real, `codeRegister.${this.path}`);
    try {
      if (this.path === 'card') {
        const started = await startEventCheckout(ctx, { event, contact, attendees, family: false, code: typed });
        model.sessions.push({ ...(await providerIdsOf(real, started.checkoutId)), provider: 'open' });
        code.checkouts.push(started.checkoutId);
      } else if (this.path === 'bank') {
        const registered = await registerForEvent(ctx, event, { contact, attendees, family: false, payment: 'bank', code: typed });
        if (registered.kind !== 'registered') throw new Error(`a bank registration with code ${code.text} answered ${registered.kind}`);
        model.bankRegistrations.push(registered.registrationId);
        code.registrations.push(registered.registrationId);
      } else {
        const added = await addRegistration(ctx, { eventSlug: event.slug, contact, attendees, family: false, paid: 'none', overCapacity: false, code: typed, ...OFFICE });
        model.bankRegistrations.push(added.registrationId);
        code.registrations.push(added.registrationId);
      }
      if (usesBefore >= CODE_MAX_USES) throw new Error(`code ${code.text} was used with ${usesBefore} live uses of ${CODE_MAX_USES}`);
      count(real, `codeRegister.${this.path}.taken`);
    } catch (error) {
      // The form's and the checkout's one refusal (its reason kept), or the office's message naming the uses.
      const usedUp = (error instanceof CodeRefusedError && error.reason === 'used_up') || (error instanceof AppError && error.code === 'code_refused' && error.message.includes('has been used'));
      if (usedUp) {
        if (usesBefore < CODE_MAX_USES) throw new Error(`code ${code.text} was refused (${String(error)}) with ${usesBefore} live uses of ${CODE_MAX_USES}`);
        count(real, 'codeRegister.usedUp');
      } else if (!isRefusal(error)) {
        throw error;
      }
    }
    await settle(model, real);
  }
  toString = () => `codeRegister(code #${this.code}, ${this.path}, ${this.attendees} seat(s))`;
}

/**
 * The office records help with the cost on a registration: part of the balance, or all of it (which makes it
 * PAID). Never money received: what the ledger counts as paid does not move. Refused for what owes nothing.
 */
class OfficeCredit implements Cmd {
  constructor(
    readonly registration: number,
    readonly share: number,
  ) {}
  check = () => true;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const ids = await registrationIds(real);
    if (ids.length > 0) {
      const { db } = real.harness.tdb;
      const id = pick(ids, this.registration);
      const before = await db('registration_money').where({ registration_id: id }).first<{ paid_minor: number; balance_minor: number }>();
      // A share of the balance, at least one cent: 4 is all of it.
      const amount = Math.max(1, Math.floor((Number(before.balance_minor) * this.share) / 4));
      count(real, 'officeCredit');
      try {
        const credited = await creditRegistration(real.harness.ctx, { registration: id, amountMinor: amount, fund: 'Camp scholarships', again: true, ...OFFICE }, money);
        model.credits.push({ registrationId: id, creditId: credited.creditId, amountMinor: amount, reversed: false });
        count(real, credited.status === 'PAID' ? 'officeCredit.settled' : 'officeCredit.part');
        if (Number(before.balance_minor) < amount) throw new Error(`a credit of ${amount} was recorded on registration ${id} owing ${before.balance_minor}`);
      } catch (error) {
        if (!(error instanceof NotCreditableError)) throw error;
        if (Number(before.balance_minor) >= amount && (await statusOf(real, id)).status === 'PENDING' && !(await cardMayArrive(real, id))) {
          throw new Error(`a credit of ${amount} on registration ${id} owing ${before.balance_minor} was refused: ${error.message}`);
        }
      }
      const after = await db('registration_money').where({ registration_id: id }).first<{ paid_minor: number }>();
      if (Number(after.paid_minor) !== Number(before.paid_minor)) throw new Error(`help with the cost moved what registration ${id} paid from ${before.paid_minor} to ${after.paid_minor}`);
    }
    await settle(model, real);
  }
  toString = () => `officeCredit(registration #${this.registration}, ${this.share}/4 of the balance)`;
}

/** The office reverses a credit; reversing it again is refused, so help is given back once. */
class ReverseCredit implements Cmd {
  constructor(readonly credit: number) {}
  check = (model: InterleavingModel) => model.credits.length > 0;
  async run(model: InterleavingModel, real: InterleavingReal) {
    const credit = pick(model.credits, this.credit);
    count(real, 'reverseCredit');
    try {
      await reverseCredit(real.harness.ctx, { registration: credit.registrationId, creditId: credit.creditId, ...OFFICE });
      if (credit.reversed) throw new Error(`credit #${credit.creditId} was reversed twice`);
      credit.reversed = true;
      count(real, 'reverseCredit.reversed');
    } catch (error) {
      if (!(error instanceof NotCreditableError)) throw error;
      if (!credit.reversed) throw new Error(`the reversal of standing credit #${credit.creditId} was refused: ${error.message}`);
    }
    await settle(model, real);
  }
  toString = () => `reverseCredit(#${this.credit})`;
}

/** A card payment for the registration may still arrive (the credit command refuses then, by its own rule). */
async function cardMayArrive(real: InterleavingReal, registrationId: string): Promise<boolean> {
  const now = real.harness.ctx.clock.now();
  return (await real.harness.tdb.db.transaction((trx) => cardPaymentMayArrive(trx, registrationId, now))) !== undefined;
}

async function providerIdsOf(real: InterleavingReal, checkoutId: string): Promise<{ checkoutId: string; providerSessionId: string }> {
  const row = await real.harness.tdb.db('checkout_sessions').where({ id: checkoutId }).first<{ provider_session_id: string }>();
  return { checkoutId, providerSessionId: row.provider_session_id };
}

/** Everything a redelivery must leave as it was. */
async function snapshot(real: InterleavingReal): Promise<string> {
  const { db } = real.harness.tdb;
  const [registrations, checkouts, alerts, mail, reversals] = await Promise.all([
    db('registrations').orderBy('id').select('id', 'status', 'payment_intent_id'),
    db('checkout_sessions').orderBy('id').select('id', 'status', 'registration_id', 'expires_at', 'payment_intent_id'),
    db('operations_alerts').count<{ n: string }>({ n: '*' }).first(),
    db('queued_mail').count<{ n: string }>({ n: '*' }).first(),
    db('pending_reversals').orderBy(['payment_intent_id', 'kind']).select('payment_intent_id', 'kind'),
  ]);
  return JSON.stringify({ registrations, checkouts, alerts: alerts?.n, mail: mail?.n, reversals });
}

const startCheckout = fc
  .record({ event: fc.nat(3), attendees: fc.integer({ min: 1, max: 2 }) })
  .map(({ event, attendees }) => new StartCheckout(event, attendees));
const payNow = fc.tuple(fc.nat(3), fc.option(fc.nat(), { nil: null })).map(([event, existing]) => new PayNow(event, existing));
const completePaid = fc.nat().map((s) => new CompletePaid(s));
const selfCancel = fc.nat().map((r) => new SelfCancel(r));
// Mostly the event with room for one, which fills first.
const joinWaitlist = fc
  .tuple(fc.constantFrom(0, 0, 1, 2), fc.nat(5), fc.integer({ min: 1, max: 2 }))
  .map(([event, mailbox, places]) => new JoinWaitlist(event, mailbox, places));
const waitlistPass = fc.constantFrom(0, 30, 25 * 60).map((minutes) => new WaitlistPass(minutes));
const claimOffer = fc.tuple(fc.nat(), fc.boolean()).map(([entry, fewer]) => new ClaimOffer(entry, fewer));

const codeRegister = fc
  .tuple(fc.nat(1), fc.constantFrom<CodePath>('card', 'bank', 'office'), fc.integer({ min: 1, max: 2 }))
  .map(([code, path, attendees]) => new CodeRegister(code, path, attendees));
const officeCredit = fc.tuple(fc.nat(), fc.integer({ min: 1, max: 4 })).map(([r, share]) => new OfficeCredit(r, share));
const reverseCreditCmd = fc.nat().map((c) => new ReverseCredit(c));

/** Starting and paying are listed more than once so generated runs build up enough checkouts to interleave. */
export const interleavingCommands = [
  startCheckout,
  startCheckout,
  startCheckout,
  payNow,
  payNow,
  completePaid,
  completePaid,
  fc.nat().map((s) => new CompleteUnpaid(s)),
  fc.nat().map((s) => new AsyncSuccess(s)),
  fc.nat().map((s) => new AsyncFail(s)),
  // A day and a minute: the event with an unpaid hold of one day releases its bank-transfer registrations.
  fc.constantFrom(0, 5, 20, 32, 45, 24 * 60 + 1).map((minutes) => new Sweep(minutes)),
  fc.nat().map((s) => new CompletePaidDuringOutage(s)),
  fc.nat().map((i) => new DeliverLate(i)),
  fc.nat().map((i) => new DeliverLate(i)),
  fc.nat().map((s) => new ExpireAtProvider(s)),
  fc.constant(new Scrub()),
  fc.constant(new Reconcile()),
  fc.nat().map((s) => new Reverse('refund_full', s)),
  fc.nat().map((s) => new Reverse('refund_partial', s)),
  fc.nat().map((s) => new Reverse('dispute', s)),
  fc.tuple(fc.constantFrom('refund_full' as const, 'dispute' as const), fc.constantFrom(0, 4, 12), fc.nat()).map(([kind, days, s]) => new ReverseLost(kind, days, s)),
  fc.tuple(fc.constantFrom('closed' as const, 'escalated' as const, 'escalated_lost' as const, 'escalated_won' as const), fc.nat()).map(([then, s]) => new Inquiry(then, s)),
  fc.tuple(fc.boolean(), fc.nat()).map(([lost, s]) => new RefundFails(lost, s)),
  fc.nat().map((d) => new Redeliver(d)),
  fc.tuple(fc.nat(), fc.boolean()).map(([s, dispute]) => new RaceCompletionAndReversal(s, dispute)),
  fc.tuple(fc.nat(), fc.option(fc.nat(), { nil: null })).map(([r, race]) => new MarkPaid(r, race)),
  fc.nat().map((r) => new OfficeCancel(r)),
  fc.tuple(fc.nat(3), fc.integer({ min: 1, max: 2 }), fc.boolean()).map(([event, attendees, paid]) => new OfficeAdd(event, attendees, paid)),
  // The waiting list: listed several times, so runs fill an event, queue people, free places, offer and claim them.
  selfCancel,
  selfCancel,
  joinWaitlist,
  joinWaitlist,
  joinWaitlist,
  waitlistPass,
  waitlistPass,
  claimOffer,
  claimOffer,
  claimOffer,
  // Codes with few uses and help with the cost, among everything above.
  codeRegister,
  codeRegister,
  officeCredit,
  reverseCreditCmd,
];

/** A mix weighted to the waiting list: places filled, freed, offered, claimed and let expire, beside payments and the office. */
export const waitlistCommands = [
  startCheckout,
  payNow,
  completePaid,
  fc.tuple(fc.constantFrom(0, 0, 1, 2), fc.integer({ min: 1, max: 2 }), fc.boolean()).map(([event, attendees, paid]) => new OfficeAdd(event, attendees, paid)),
  fc.nat().map((r) => new OfficeCancel(r)),
  fc.constantFrom(0, 24 * 60 + 1).map((minutes) => new Sweep(minutes)),
  selfCancel,
  joinWaitlist,
  joinWaitlist,
  waitlistPass,
  claimOffer,
  claimOffer,
];

/** A mix weighted to codes with few uses and to help with the cost: uses taken, refused at the limit and given back, credits recorded and reversed. */
export const codesCreditsCommands = [
  codeRegister,
  codeRegister,
  codeRegister,
  completePaid,
  fc.nat().map((s) => new CompleteUnpaid(s)),
  fc.nat().map((s) => new ExpireAtProvider(s)),
  fc.constantFrom(0, 32, 24 * 60 + 1).map((minutes) => new Sweep(minutes)),
  fc.nat().map((s) => new Reverse('refund_full', s)),
  fc.nat().map((s) => new Reverse('dispute', s)),
  fc.tuple(fc.nat(), fc.option(fc.nat(), { nil: null })).map(([r, race]) => new MarkPaid(r, race)),
  fc.nat().map((r) => new OfficeCancel(r)),
  selfCancel,
  officeCredit,
  officeCredit,
  reverseCreditCmd,
  reverseCreditCmd,
];

/** The issue asks for at least 200 generated runs in the soak: one round is that many. */
const RUNS_PER_ROUND = 200;

// rate_limits too: the clock starts each run at the same instant, so a count of an earlier run (the hourly email
// caps a waiting-list join is counted under) would still be in its window.
const TABLES = ['registration_credits', 'discount_codes', 'rate_limits', 'waitlist_history', 'waitlist_entries', 'registration_history', 'registration_payments', 'processed_webhook_events', 'operations_alerts', 'pending_reversals', 'queued_mail', 'job_runs', 'checkout_sessions', 'registrations', 'events'];

/** TRUNCATE takes every table's lock at once; a server request still finishing its reads may deadlock it, so it is retried. */
async function truncateRetryingDeadlock(db: PaymentsHarness['tdb']['db']): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await db.raw(`TRUNCATE ${TABLES.join(', ')} CASCADE`);
      return;
    } catch (error) {
      if ((error as { code?: string }).code !== '40P01' || attempt >= 5) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
    }
  }
}

/** Starts each generated run from an empty set of events, checkouts, registrations and alerts (users are kept). */
async function freshReal(harness: PaymentsHarness, counters: InterleavingCounters): Promise<InterleavingReal> {
  const { db } = harness.tdb;
  await truncateRetryingDeadlock(db);
  // The provider forgets earlier runs too, so reconcile sees only this run's sessions and events.
  harness.provider.sessions.clear();
  harness.provider.events.length = 0;
  harness.ctx.clock.set(new Date('2026-11-22T00:00:00Z'));
  const events: EventRecord[] = [];
  for (const [capacity, passCardFee] of [
    [1, false],
    [2, true],
    [3, false],
    [null, false],
  ] as const) {
    // The event with room for 2 also releases unpaid bank-transfer holds after a day.
    // Every event with a capacity keeps a waiting list whose offers hold places for a day.
    const { slug } = await insertEvent(db, {
      capacity,
      online_payment: true,
      pass_card_fee: passCardFee,
      unpaid_hold_days: capacity === 2 ? 1 : null,
      waitlist_enabled: capacity !== null,
      waitlist_offer_hours: 24,
    });
    events.push((await getEventBySlug(db, slug)) as EventRecord);
  }
  counters.runs += 1;
  return { harness, events, counters, codes: await createModelCodes(harness, events) };
}

export function interleavingProperty(harness: PaymentsHarness, counters: InterleavingCounters, maxCommands: number, commandMix = interleavingCommands) {
  return fc.asyncProperty(fc.commands(commandMix, { maxCommands, size: 'max' }), async (commands) => {
    const real = await freshReal(harness, counters);
    const model: InterleavingModel = { sessions: [], bankRegistrations: [], delivered: [], charged: new Set(), withheld: [], lostReversals: [], codes: real.codes, credits: [] };
    await fc.asyncModelRun(() => ({ model, real }), commands);
  });
}

/** Soak form: rounds of 200 generated runs with longer command sequences, until the time budget or `runs` rounds are spent. */
export async function run(options: { durationMs?: number; runs?: number } = {}) {
  const deadline = Date.now() + (options.durationMs ?? 120_000);
  const maxRounds = options.runs ?? Number.POSITIVE_INFINITY;
  const counters: InterleavingCounters = { runs: 0, commands: 0 };
  const harness = await startPaymentsHarness();
  let passed = true;
  let lost = 0;
  let duplicates = 0;
  let rounds = 0;
  try {
    do {
      rounds += 1;
      const details = await fc.check(interleavingProperty(harness, counters, 40), { numRuns: RUNS_PER_ROUND });
      if (details.failed) {
        passed = false;
        const report = fc.defaultReportMessage(details) ?? 'failed';
        lost = report.includes('charged_accounted') ? 1 : 0;
        duplicates = report.includes('one_registration_per_checkout') ? 1 : 0;
        process.stderr.write(`model-interleavings: ${report}\n`);
        break;
      }
    } while (rounds < maxRounds && Date.now() < deadline);
  } finally {
    await harness.close();
  }
  return {
    case: 'model-interleavings',
    load: `${counters.runs} generated runs (fast-check commands, up to 40 steps), ${counters.commands} steps on real PostgreSQL; waiting-list steps ${JSON.stringify(counters.waitlist ?? {})}`,
    faults:
      'any order of checkout, pay-now, paid/unpaid completion, payment during a webhook outage delivered late, provider expiry, delayed success/failure, sweep after time passes (releasing unpaid holds after a day), scrub after 72 h, reconcile, full/partial refund, dispute, a refund or dispute days later with its webhook lost (applied by the event replay of reconcile), an inquiry closed, escalated (delivered or lost) or escalated and won, a refund that then fails (delivered or lost), redelivery, completion racing its reversal, office mark-paid (alone or racing a payment), cancel and add, a registrant cancelling on the manage page, joining the waiting list, the offer pass and claiming an offer by bank transfer (fresh or stale link)',
    inputs: counters.commands,
    lost,
    duplicates,
    passed,
  };
}
