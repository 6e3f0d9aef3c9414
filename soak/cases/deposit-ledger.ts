import fc from 'fast-check';
import { AppError } from '../../src/errors.js';
import { sendBalanceReminders } from '../../src/jobs/send-balance-reminders.js';
import { getEventBySlug } from '../../src/office/events.js';
import { creditRegistration } from '../../src/office/registrations/credit.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { registrationMoney } from '../../src/registrations/ledger.js';
import { registerForEvent } from '../../src/signup/register.js';
import { insertEvent } from '../../test/support/factories.js';
import { postRegistrationForm } from '../../test/support/form-post.js';
import { startPaymentsHarness, type PaymentsHarness } from '../../test/support/payments-harness.js';
import { fromReferenceNow, referenceNow } from '../../test/support/test-now.js';
import type { CaseOptions, CaseResult } from '../support/result.js';
import { repeatRounds } from '../support/result.js';

/**
 * Deposits, instalments and help, every cent accounted: fast-check generates a registration (a deposit by
 * card or by bank, or instalments) and a sequence of what the family, the office and the provider do to its
 * balance (a part by card, an instalment due, a bank or cash part, help with the cost, a card instalment paid
 * after the office settled the balance, an amount over the balance or under the minimum, a refund of one card
 * part, the reminders job after the due date). After every step the ledger (registration_money) must equal
 * a model kept here, the registration is PAID exactly when nothing is owed, and no payment is applied twice.
 */

const TICKET = 12_000;
const DEPOSIT = 5_000;
const MINIMUM = 1_000;

type Step =
  | { kind: 'card'; share: number }
  | { kind: 'due' }
  | { kind: 'office'; share: number; method: 'bank' | 'cash' }
  | { kind: 'credit'; share: number }
  | { kind: 'late' }
  | { kind: 'over' }
  | { kind: 'refund' }
  | { kind: 'remind' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('card' as const), share: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.constant({ kind: 'due' as const }),
  fc.record({ kind: fc.constant('office' as const), share: fc.double({ min: 0, max: 1, noNaN: true }), method: fc.constantFrom('bank' as const, 'cash' as const) }),
  fc.record({ kind: fc.constant('credit' as const), share: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.constant({ kind: 'late' as const }),
  fc.constant({ kind: 'over' as const }),
  fc.constant({ kind: 'refund' as const }),
  fc.constant({ kind: 'remind' as const }),
);
const runArb = fc.record({
  start: fc.constantFrom('card-deposit', 'card-instalments', 'bank-deposit'),
  attendees: fc.integer({ min: 1, max: 3 }),
  steps: fc.array(stepArb, { minLength: 3, maxLength: 12 }),
});

interface Model {
  total: number;
  paid: number;
  credited: number;
  /** Card payments kept without being applied (paid after the balance was settled). */
  kept: number;
  /** Applied card parts that may be refunded: their provider sessions and amounts. */
  cardParts: Array<{ session: string; amount: number }>;
}

export async function run(options: CaseOptions = {}): Promise<CaseResult> {
  const harness = await startPaymentsHarness({ now: referenceNow() });
  let inputs = 0;
  let duplicates = 0;
  try {
    const balanceDueAt = fromReferenceNow({ days: 20 }).toISOString().slice(0, 10);
    const { slug } = await insertEvent(harness.tdb.db, {
      online_payment: true,
      pass_card_fee: true,
      capacity: null,
      starts_at: fromReferenceNow({ days: 40 }),
      balance_terms: JSON.stringify({ deposit: { perAttendee: DEPOSIT }, balanceDueAt, minimumPayment: MINIMUM, instalments: { count: 3 }, overdue: 'alert' }),
    });
    const event = (await getEventBySlug(harness.tdb.db, slug)) as EventRecord;
    const { rounds, problems } = await repeatRounds(options, 60_000, async (round) => {
      const [plan] = fc.sample(runArb, 1);
      if (!plan) return [];
      harness.ctx.clock.set(referenceNow());
      const found: string[] = [];
      const result = await playRun(harness, event, slug, plan, round, found);
      inputs += result.steps;
      duplicates += result.duplicates;
      return found;
    });
    for (const problem of problems) process.stderr.write(`deposit-ledger: ${problem}\n`);
    return {
      case: 'deposit-ledger',
      load: `${rounds} generated registrations paying in parts`,
      faults: 'card and bank deposits, instalments, card/bank/cash parts, help, parts over the balance or under the minimum, an instalment paid after settlement, a refund of one card part, reminders after the due date',
      inputs,
      lost: problems.length,
      duplicates,
      passed: problems.length === 0 && duplicates === 0,
    };
  } finally {
    await harness.close();
  }
}

async function playRun(
  harness: PaymentsHarness,
  event: EventRecord,
  slug: string,
  plan: { start: string; attendees: number; steps: Step[] },
  round: number,
  found: string[],
): Promise<{ steps: number; duplicates: number }> {
  const db = harness.tdb.db;
  const money = moneyFormatter(harness.ctx.config.regional);
  const email = `ledger-${round}-${Date.now()}@example.org`;
  const attendees = Array.from({ length: plan.attendees }, (_, i) => ({ name: `Kid ${i + 1}`, tier: 'adult' }));
  const total = TICKET * plan.attendees;
  const model: Model = { total, paid: 0, credited: 0, kept: 0, cardParts: [] };
  let id: string;
  if (plan.start === 'bank-deposit') {
    const outcome = await registerForEvent(harness.ctx, event, { contact: { name: 'Ledger Family', email }, attendees, family: false, payment: 'bank', choice: 'deposit' });
    if (outcome.kind !== 'registered') return { steps: 0, duplicates: 0 };
    id = outcome.registrationId;
    await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: DEPOSIT * plan.attendees, method: 'bank', partial: true, actor: 'soak' }, money);
    model.paid += DEPOSIT * plan.attendees;
  } else {
    const body: Record<string, string> = { name: 'Ledger Family', email, payment: 'card', pay_plan: plan.start === 'card-instalments' ? 'instalments' : 'deposit' };
    const posted = await postRegistrationForm(harness.server.url, slug, { ...body, attendee_name: attendees.map((a) => a.name), attendee_tier: attendees.map((a) => a.tier) } as never);
    const checkout = await db('checkout_sessions').where({ provider_url: posted.headers.get('location') }).first();
    if (!checkout) return { steps: 0, duplicates: 0 };
    await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
    id = (await db('checkout_sessions').where({ id: checkout.id }).first()).registration_id as string;
    model.paid += DEPOSIT * plan.attendees;
  }
  const check = async (after: string) => {
    const ledger = await registrationMoney(db, id);
    const row = await db('registrations').where({ id }).first<{ status: string; total_minor: number }>('status', 'total_minor');
    const owed = model.total - model.paid - model.credited;
    if (row?.total_minor !== model.total) found.push(`${after}: the total changed to ${row?.total_minor} (model ${model.total})`);
    if (ledger.paidMinor !== model.paid || ledger.creditedMinor !== model.credited) {
      found.push(`${after}: ledger paid ${ledger.paidMinor} credited ${ledger.creditedMinor}, model paid ${model.paid} credited ${model.credited}`);
    }
    if (ledger.outstandingMinor !== owed) found.push(`${after}: ledger outstanding ${ledger.outstandingMinor}, model ${owed}`);
    if ((row?.status === 'PAID') !== (owed <= 0)) found.push(`${after}: status ${row?.status} while ${owed} is owed`);
    const kept = await db('checkout_sessions').where({ registration_id: id, status: 'UNFULFILLED' }).sum<{ n: string | null }>({ n: 'net_minor' }).first();
    if (Number(kept?.n ?? 0) !== model.kept) found.push(`${after}: kept payments ${kept?.n ?? 0}, model ${model.kept}`);
  };
  await check('start');
  let duplicates = 0;
  for (const [index, step] of plan.steps.entries()) {
    const owed = model.total - model.paid - model.credited;
    const label = `step ${index + 1} ${step.kind}`;
    try {
      switch (step.kind) {
        case 'card':
        case 'due':
        case 'over': {
          if (owed <= 0) break;
          const amount = step.kind === 'over' ? owed + 1 : step.kind === 'due' ? undefined : Math.max(Math.min(MINIMUM, owed), Math.round(owed * step.share));
          const opened = await startExistingRegistrationCheckout(harness.ctx, { registrationId: id, ...(amount !== undefined ? { amountMinor: amount } : {}) });
          if (step.kind === 'over') found.push(`${label}: a part over the balance opened a checkout`);
          const checkout = await db('checkout_sessions').where({ id: opened.checkoutId }).first();
          await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
          // Delivered twice: applied once.
          await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
          model.paid += checkout.net_minor;
          model.cardParts.push({ session: checkout.provider_session_id, amount: checkout.net_minor });
          const rows = await db('registration_payments').where({ checkout_session_id: checkout.id }).count<{ n: string }>({ n: '*' }).first();
          if (Number(rows?.n) !== 1) duplicates += 1;
          break;
        }
        case 'office': {
          if (owed <= 0) break;
          const amount = Math.max(1, Math.round(owed * step.share));
          await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: amount, method: step.method, partial: amount < owed, again: true, actor: 'soak' }, money);
          model.paid += amount;
          break;
        }
        case 'credit': {
          if (owed <= 0) break;
          const amount = Math.max(1, Math.round(owed * step.share));
          await creditRegistration(harness.ctx, { registration: id, amountMinor: amount, fund: 'Camp scholarships', again: true, actor: 'soak' }, money);
          model.credited += amount;
          break;
        }
        case 'late': {
          if (owed <= 0) break;
          // An instalment opened by card, then the office settles the balance by bank, then the card payment lands.
          const opened = await startExistingRegistrationCheckout(harness.ctx, { registrationId: id, amountMinor: owed });
          const checkout = await db('checkout_sessions').where({ id: opened.checkoutId }).first();
          await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: owed, method: 'bank', yes: true, again: true, actor: 'soak' }, money);
          model.paid += owed;
          await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
          model.kept += checkout.net_minor;
          break;
        }
        case 'refund': {
          const part = model.cardParts.pop();
          if (!part) break;
          await harness.provider.deliver('charge.refunded', part.session);
          model.paid -= part.amount;
          break;
        }
        case 'remind': {
          harness.ctx.clock.set(fromReferenceNow({ days: 22 }));
          await sendBalanceReminders(harness.ctx);
          harness.ctx.clock.set(referenceNow());
          break;
        }
      }
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      // A refusal (over the balance, a card payment that may still arrive) changes nothing: the model neither.
      if (step.kind !== 'over' && error.code !== 'amount_refused') found.push(`${label}: refused (${error.code}: ${error.message})`);
    }
    await check(label);
  }
  return { steps: plan.steps.length + 1, duplicates };
}
