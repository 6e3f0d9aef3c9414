import fc from 'fast-check';
import { AppError } from '../../src/errors.js';
import { addExtrasByRegistrant } from '../../src/family/add-extras.js';
import { managePath } from '../../src/payments/manage-link.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { getEventBySlug } from '../../src/office/events.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { countAddonStock } from '../../src/registrations/addon-stock.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import type { AttendeeChoice } from '../../src/registrations/pricing.js';
import { registerForEvent } from '../../src/signup/register.js';
import { insertEvent } from '../../test/support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../../test/support/payments-harness.js';

/**
 * Add-ons in the model-based interleavings: fast-check generates sequences of families choosing a bus seat (stock
 * 3) and T-shirts, by bank transfer or by card, card payments completed on time or after their checkout expired,
 * sweeps after time passes, refunds, disputes and office cancellations, against the real code on real PostgreSQL.
 * After every step: the bus seats held (rows of PENDING and PAID registrations plus open card checkouts' holds)
 * never exceed the stock; every registration's add-on rows are exactly what it chose, once (a completion that
 * wrote them twice, or a cancelled registration still counted, would show); and a paid checkout that found the bus
 * full is UNFULFILLED with one alert of that reason. Families also add a bus seat from the manage page after
 * registering (family/add-extras.ts): it counts against the same stock, and a card-paid registration that adds one
 * owes exactly its price (its earlier whole-total payment still counted) until it is cancelled.
 */

const BUS_STOCK = 3;

interface Session {
  providerSessionId: string;
  checkoutId: string;
  seats: number;
  paid: boolean;
}

interface Model {
  sessions: Session[];
  /** Registration id → bus seats it chose. */
  chose: Map<string, number>;
  /** Registration id → the extras added from the manage page while it was PAID: what it owes while PENDING. */
  owedExtras: Map<string, number>;
}

interface Real {
  harness: PaymentsHarness;
  event: EventRecord;
  counters: { runs: number; commands: number };
}

type Cmd = fc.AsyncCommand<Model, Real, false>;

const pick = <T>(items: T[], index: number): T => items[index % items.length] as T;
const isRefusal = (error: unknown) =>
  error instanceof AppError && ['sold_out', 'addon_sold_out', 'already_cancelled', 'not_payable', 'extras_closed', 'card_payment_on_its_way', 'extras_by_office'].includes(error.code);

const attendees = (n: number, seats: number): AttendeeChoice[] =>
  Array.from({ length: Math.max(1, seats) }, (_, i) => ({
    name: `Rider ${n}.${i}`,
    tier: 'adult',
    addons: [...(i < seats ? [{ addon: 'bus' }] : []), { addon: 'tshirt', option: i % 2 === 0 ? 'M' : 'L' }],
  }));

async function settle(model: Model, real: Real): Promise<void> {
  real.counters.commands += 1;
  const { db } = real.harness.tdb;
  const held = await countAddonStock(db, real.event.id, real.harness.ctx.clock.now());
  if ((held.taken.bus ?? 0) > BUS_STOCK) throw new Error(`${held.taken.bus} bus seats held of ${BUS_STOCK}: stock counted past its limit`);
  const rows = await db('registration_addons as a')
    .join('registrations as r', 'r.id', 'a.registration_id')
    .groupBy('r.id')
    .select<Array<{ id: string; bus: number; shirts: number; attendees: number }>>(
      'r.id',
      db.raw(`count(*) FILTER (WHERE a.addon_id = 'bus')::int AS bus`),
      db.raw(`count(*) FILTER (WHERE a.addon_id = 'tshirt')::int AS shirts`),
      db.raw('max(r.attendee_count) AS attendees'),
    );
  for (const row of rows) {
    if (row.shirts !== Number(row.attendees)) throw new Error(`registration ${row.id} has ${row.shirts} T-shirt rows for ${row.attendees} attendees: written twice or lost`);
    const chose = model.chose.get(row.id);
    if (chose !== undefined && chose !== row.bus) throw new Error(`registration ${row.id} chose ${chose} bus seats but has ${row.bus} rows`);
  }
  for (const [id, owed] of model.owedExtras) {
    const money = await db('registration_money').where({ registration_id: id }).first<{ status: string; balance_minor: number }>('status', 'balance_minor');
    if (money.status === 'PENDING' && Number(money.balance_minor) !== owed) {
      throw new Error(`registration ${id} owes ${money.balance_minor} after extras of ${owed} were added to its paid total: its card payment was not counted`);
    }
  }
  const unfulfilled = await db('checkout_sessions as c')
    .where({ 'c.event_id': real.event.id, 'c.status': 'UNFULFILLED' })
    .select<Array<{ id: string; alerts: number }>>('c.id', db.raw('(SELECT count(*)::int FROM operations_alerts o WHERE o.checkout_session_id = c.id::text AND o.kind = c.unfulfilled_reason) AS alerts'));
  for (const row of unfulfilled) if (row.alerts !== 1) throw new Error(`UNFULFILLED checkout ${row.id} has ${row.alerts} alerts`);
}

class RegisterByBank implements Cmd {
  constructor(readonly seats: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const n = real.counters.commands;
    try {
      const done = await registerForEvent(real.harness.ctx, real.event, { contact: { name: `Bank ${n}`, email: `bank-${n}@example.org` }, attendees: attendees(n, this.seats), family: false, payment: 'bank' });
      if (done.kind === 'registered') model.chose.set(done.registrationId, this.seats);
    } catch (error) {
      if (!isRefusal(error)) throw error;
    }
    await settle(model, real);
  }
  toString = () => `registerByBank(${this.seats} bus)`;
}

class StartCard implements Cmd {
  constructor(readonly seats: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const n = real.counters.commands;
    try {
      const started = await startEventCheckout(real.harness.ctx, { event: real.event, contact: { name: `Card ${n}`, email: `card-${n}@example.org` }, attendees: attendees(n, this.seats), family: false });
      const row = await real.harness.tdb.db('checkout_sessions').where({ id: started.checkoutId }).first('provider_session_id');
      model.sessions.push({ providerSessionId: row.provider_session_id as string, checkoutId: started.checkoutId, seats: this.seats, paid: false });
    } catch (error) {
      if (!isRefusal(error)) throw error;
    }
    await settle(model, real);
  }
  toString = () => `startCard(${this.seats} bus)`;
}

class Pay implements Cmd {
  constructor(readonly session: number) {}
  check = (model: Model) => model.sessions.some((s) => !s.paid);
  async run(model: Model, real: Real) {
    const session = pick(model.sessions.filter((s) => !s.paid), this.session);
    session.paid = true;
    const { provider, tdb } = real.harness;
    const result = await provider.deliverEvent(provider.buildEvent('checkout.session.completed', session.providerSessionId));
    if (result.status !== 200) throw new Error(`completion answered ${result.status}: ${result.body}`);
    const row = await tdb.db('checkout_sessions').where({ id: session.checkoutId }).first('status', 'registration_id');
    if (row.status === 'COMPLETED' && row.registration_id) model.chose.set(row.registration_id as string, session.seats);
    await settle(model, real);
  }
  toString = () => `pay(#${this.session})`;
}

class Sweep implements Cmd {
  constructor(readonly minutes: number) {}
  check = () => true;
  async run(model: Model, real: Real) {
    real.harness.ctx.clock.advance(this.minutes * 60_000);
    await sweepExpiredCheckouts(real.harness.ctx, { trigger: 'cli' });
    await settle(model, real);
  }
  toString = () => `sweep(after ${this.minutes} min)`;
}

class Reverse implements Cmd {
  constructor(readonly kind: 'refund' | 'dispute', readonly session: number) {}
  check = (model: Model) => model.sessions.some((s) => s.paid);
  async run(model: Model, real: Real) {
    const session = pick(model.sessions.filter((s) => s.paid), this.session);
    const { provider } = real.harness;
    const event = this.kind === 'dispute' ? provider.buildEvent('charge.dispute.created', session.providerSessionId) : provider.buildEvent('charge.refunded', session.providerSessionId);
    const result = await provider.deliverEvent(event);
    if (result.status !== 200) throw new Error(`${this.kind} answered ${result.status}: ${result.body}`);
    await settle(model, real);
  }
  toString = () => `${this.kind}(#${this.session})`;
}

class OfficeCancel implements Cmd {
  constructor(readonly registration: number) {}
  check = (model: Model) => model.chose.size > 0;
  async run(model: Model, real: Real) {
    const id = pick([...model.chose.keys()], this.registration);
    try {
      await cancelRegistration(real.harness.ctx, { registration: id, actor: 'model-office' });
    } catch (error) {
      if (!isRefusal(error)) throw error;
    }
    await settle(model, real);
  }
  toString = () => `officeCancel(#${this.registration})`;
}

/** A family adds a bus seat for its first attendee from the manage page (refused when it has one, the bus is full, or it is cancelled). */
class AddBusExtra implements Cmd {
  constructor(readonly registration: number) {}
  check = (model: Model) => model.chose.size > 0;
  async run(model: Model, real: Real) {
    const id = pick([...model.chose.keys()], this.registration);
    const { ctx, tdb } = real.harness;
    const before = await tdb.db('registrations').where({ id }).first<{ status: string }>('status');
    const token = managePath(ctx.config.authSecret, { registrationId: id, version: 1 }).split('/').pop() as string;
    try {
      const outcome = await addExtrasByRegistrant(ctx, token, { rows: new Map([[0, [{ addon: 'bus' }]]]), registration: [] }, 'model-family');
      if (outcome.kind === 'added') {
        model.chose.set(id, (model.chose.get(id) ?? 0) + 1);
        if (before.status === 'PAID') model.owedExtras.set(id, outcome.addedMinor);
      }
    } catch (error) {
      if (!isRefusal(error)) throw error;
    }
    await settle(model, real);
  }
  toString = () => `addBusExtra(#${this.registration})`;
}

const seats = fc.integer({ min: 0, max: 2 });
export const addonCommands = [
  seats.map((n) => new RegisterByBank(n)),
  seats.map((n) => new StartCard(n)),
  seats.map((n) => new StartCard(n)),
  fc.nat().map((s) => new Pay(s)),
  fc.nat().map((s) => new Pay(s)),
  fc.constantFrom(5, 32, 60).map((minutes) => new Sweep(minutes)),
  fc.tuple(fc.constantFrom('refund' as const, 'dispute' as const), fc.nat()).map(([kind, s]) => new Reverse(kind, s)),
  fc.nat().map((r) => new OfficeCancel(r)),
  fc.nat().map((r) => new AddBusExtra(r)),
];

const TABLES = ['rate_limits', 'registration_history', 'registration_payments', 'processed_webhook_events', 'operations_alerts', 'pending_reversals', 'queued_mail', 'job_runs', 'checkout_sessions', 'registration_addons', 'registrations', 'events'];

async function freshReal(harness: PaymentsHarness, counters: Real['counters']): Promise<Real> {
  const { db } = harness.tdb;
  await db.raw(`TRUNCATE ${TABLES.join(', ')} CASCADE`);
  harness.provider.sessions.clear();
  harness.provider.events.length = 0;
  harness.ctx.clock.set(new Date('2026-11-22T00:00:00Z'));
  const { slug } = await insertEvent(db, {
    capacity: null,
    online_payment: true,
    pricing: JSON.stringify({
      tiers: [{ id: 'adult', label: 'Adult', price: 12000 }],
      addons: [
        { id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee', stock: BUS_STOCK },
        { id: 'tshirt', label: 'T-shirt', price: 1500, per: 'attendee', options: ['M', 'L'] },
      ],
    }),
  });
  counters.runs += 1;
  return { harness, event: (await getEventBySlug(db, slug)) as EventRecord, counters };
}

export function addonProperty(harness: PaymentsHarness, counters: Real['counters'], maxCommands: number) {
  return fc.asyncProperty(fc.commands(addonCommands, { maxCommands, size: 'max' }), async (commands) => {
    const real = await freshReal(harness, counters);
    await fc.asyncModelRun(() => ({ model: { sessions: [], chose: new Map(), owedExtras: new Map() }, real }), commands);
  });
}

/** Soak form: rounds of 100 generated runs, until the time budget or `runs` rounds are spent. */
export async function run(options: { durationMs?: number; runs?: number } = {}) {
  const deadline = Date.now() + (options.durationMs ?? 60_000);
  const maxRounds = options.runs ?? Number.POSITIVE_INFINITY;
  const counters = { runs: 0, commands: 0 };
  const harness = await startPaymentsHarness();
  let passed = true;
  let duplicates = 0;
  let rounds = 0;
  try {
    do {
      rounds += 1;
      const details = await fc.check(addonProperty(harness, counters, 25), { numRuns: 100 });
      if (details.failed) {
        passed = false;
        const report = fc.defaultReportMessage(details) ?? 'failed';
        duplicates = report.includes('written twice') || report.includes('counted past') ? 1 : 0;
        process.stderr.write(`addon-interleavings: ${report}\n${details.errorInstance instanceof Error ? (details.errorInstance.stack ?? details.errorInstance.message) : ''}\n`);
        break;
      }
    } while (rounds < maxRounds && Date.now() < deadline);
  } finally {
    await harness.close();
  }
  return {
    case: 'addon-interleavings',
    load: `${counters.runs} generated runs (fast-check commands, up to 25 steps), ${counters.commands} steps on real PostgreSQL`,
    faults: 'any order of bank and card registrations choosing the last bus seats, bus seats added from the manage page after registering, card payments on time or after expiry, sweeps, refunds, disputes and office cancellations',
    inputs: counters.commands,
    lost: 0,
    duplicates,
    passed,
  };
}
