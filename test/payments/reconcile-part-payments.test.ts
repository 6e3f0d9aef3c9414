import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reconcileCheckouts } from '../../src/jobs/reconcile.js';
import { alertParties } from '../../src/payments/alert-parties.js';
import { listOperationsAlerts, raiseOperationsAlert } from '../../src/payments/alerts.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { registrationMoney } from '../../src/registrations/ledger.js';
import { insertDepositEvent, openPartCheckout, payDepositByCard } from '../support/deposit-event.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { referenceNow } from '../support/test-now.js';

// A registration paying in parts has one card payment (one checkout, one PaymentIntent) per part; only the
// first is on registrations.payment_intent_id. Reconcile, and the webhook code it replays, must find the
// registration of every later part through its ledger row (registration_payments.payment_intent_id).

let harness: PaymentsHarness;
let slug: string;

beforeAll(async () => {
  // Every post here comes from this machine: the church's own network, whose form-post limit fits a file of payments.
  harness = await startPaymentsHarness({ now: referenceNow(), env: { CHURCH_NETWORKS: '127.0.0.1/32', CHURCH_NETWORK_FORM_POSTS_PER_MINUTE: '200' } });
  ({ slug } = await insertDepositEvent(harness.tdb.db));
});
afterAll(() => harness.close());

const db = () => harness.tdb.db;
const reconcile = (apply = true) => reconcileCheckouts(harness.ctx, { trigger: 'cli', dryRun: !apply });
const registration = (id: string) => db()('registrations').where({ id }).first();
const paymentIntentOf = (sessionId: string) => harness.provider.sessions.get(sessionId)?.payment_intent as string;
const alertsOfPayment = (sessionId: string) => db()('operations_alerts').where({ payment_intent_id: paymentIntentOf(sessionId) }).orderBy('id');
const ledger = (id: string) => db()('registration_payments').where({ registration_id: id }).orderBy('id').select('amount_minor', 'reversal');
const alertKindsOf = async (id: string) =>
  (await db()('operations_alerts').whereRaw(`details->>'registrationId' = ?`, [id]).orderBy('id').pluck<string[]>('kind'));

/** Registers one attendee (12000) by card choosing instalments, and pays the deposit (5000) at the provider. */
async function depositByCard(email: string): Promise<{ id: string; sessionId: string }> {
  const { registrationId, checkout } = await payDepositByCard(harness, slug, email, 'instalments');
  return { id: registrationId, sessionId: checkout.provider_session_id };
}

const openPart = (registrationId: string, amount: number) => openPartCheckout(harness, registrationId, amount);

/** A part paid at the provider and delivered: its session id. */
async function payPart(registrationId: string, amount: number): Promise<string> {
  const checkout = await openPart(registrationId, amount);
  const delivered = await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
  expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'completed' });
  return checkout.provider_session_id;
}

/** Deposit then both instalments by card: PAID, three card payments. */
async function paidInParts(email: string): Promise<{ id: string; deposit: string; first: string; second: string }> {
  const { id, sessionId: deposit } = await depositByCard(email);
  const first = await payPart(id, 3500);
  const second = await payPart(id, 3500);
  expect(await registration(id)).toMatchObject({ status: 'PAID' });
  return { id, deposit, first, second };
}

describe('reconcile finds a later card payment of a registration paying in parts through its ledger row', () => {
  it('with nothing wrong, the deposit and each instalment agree with the provider: no mismatch, nothing kept without a registration, no alert', async () => {
    const { id, sessionId: deposit } = await depositByCard('agree@example.org');
    const first = await payPart(id, 3500);

    const report = await reconcile();
    const mine = report.rows?.filter((row) => [deposit, first].includes(row.session)) ?? [];
    expect(mine).toHaveLength(2);
    expect(mine.every((row) => row.action === 'none' && !row.unresolved)).toBe(true);
    expect(report.outcome).toBe('ok');
    expect(await db()('checkout_sessions').whereIn('provider_session_id', [deposit, first]).pluck('status')).toEqual(['COMPLETED', 'COMPLETED']);
    expect(await alertKindsOf(id)).toEqual([]);
    expect(await db()('operations_alerts').whereIn('provider_session_id', [deposit, first])).toEqual([]);
    expect(await registration(id)).toMatchObject({ status: 'PENDING' });
    expect((await registrationMoney(db(), id)).balanceMinor).toBe(3500);
  });

  it('a dispute of one instalment and then its win, both webhooks lost: reconcile stops counting that payment, then counts it again and the registration is PAID as before, without a "register the payer" alert', async () => {
    const paid = await paidInParts('dispute-won@example.org');
    harness.provider.buildEvent('charge.dispute.created', paid.second); // never delivered

    const first = await reconcile();
    expect(first.outcome).toBe('ok');
    expect(await ledger(paid.id)).toEqual([
      { amount_minor: 5000, reversal: null },
      { amount_minor: 3500, reversal: null },
      { amount_minor: 3500, reversal: 'dispute' },
    ]);
    expect(await registration(paid.id)).toMatchObject({ status: 'PENDING', cancel_reason: null });
    expect(await alertKindsOf(paid.id)).toEqual(['part_payment_reversed']);

    harness.provider.buildEvent('charge.dispute.closed', paid.second, { status: 'won' }); // never delivered
    const second = await reconcile();
    expect(second.outcome).toBe('ok');
    expect(await ledger(paid.id)).toEqual([
      { amount_minor: 5000, reversal: null },
      { amount_minor: 3500, reversal: null },
      { amount_minor: 3500, reversal: null },
    ]);
    expect(await registration(paid.id)).toMatchObject({ status: 'PAID', cancel_reason: null });
    expect(await registrationMoney(db(), paid.id)).toMatchObject({ paidMinor: 12000, balanceMinor: 0 });
    expect(await db()('registration_history').where({ registration_id: paid.id }).whereIn('action', ['disputed', 'dispute_won']).orderBy('id').pluck('action')).toEqual(['disputed', 'dispute_won']);
    const kinds = (await alertsOfPayment(paid.second)).map((alert) => alert.kind);
    expect(kinds).toEqual(['part_payment_reversed', 'part_payment_restored']);
    expect(kinds).not.toContain('dispute_won');

    // The next run finds nothing left to do.
    const third = await reconcile();
    expect(third.rows?.filter((row) => row.action !== 'none')).toEqual([]);
    expect((await alertsOfPayment(paid.second)).length).toBe(2);
  });

  it('a dispute reconcile applied from the session (the provider’s events could not be listed), won later: the win still restores that payment', async () => {
    const paid = await paidInParts('dispute-from-session@example.org');
    harness.provider.buildEvent('charge.dispute.created', paid.second);
    harness.provider.failPath('/v1/events', 500);
    const first = await reconcile();
    harness.provider.failPath('/v1/events', undefined);
    expect(first.rows).toContainEqual(expect.objectContaining({ session: paid.second, action: 'reverse', result: 'alerted' }));
    expect(await registration(paid.id)).toMatchObject({ status: 'PENDING' });

    harness.provider.buildEvent('charge.dispute.closed', paid.second, { status: 'won' });
    await reconcile();

    expect((await ledger(paid.id)).map((row) => row.reversal)).toEqual([null, null, null]);
    expect(await registration(paid.id)).toMatchObject({ status: 'PAID' });
    expect((await alertsOfPayment(paid.second)).map((alert) => alert.kind)).toEqual(['part_payment_reversed', 'part_payment_restored']);
  });

  it('a partial refund of one instalment whose webhook was lost: alerted once with its registration named, the registration and its ledger left as they are', async () => {
    const paid = await paidInParts('partial@example.org');
    const charged = harness.provider.sessions.get(paid.first)?.amount_total as number;
    harness.provider.buildEvent('charge.refunded', paid.first, { amount_refunded: 1000, refunded: false });

    const report = await reconcile();
    expect(report.outcome).toBe('ok');
    const [alert, ...more] = await alertsOfPayment(paid.first);
    expect(more).toEqual([]);
    expect(alert).toMatchObject({ kind: 'partial_refund', amount_minor: 1000 });
    expect(alert.details).toMatchObject({ registrationId: paid.id, registrationStatus: 'PAID', chargedMinor: charged });
    expect(await registration(paid.id)).toMatchObject({ status: 'PAID' });
    expect((await ledger(paid.id)).map((row) => row.reversal)).toEqual([null, null, null]);
    await reconcile();
    expect((await alertsOfPayment(paid.first)).length).toBe(1);
  });

  it('a refund of one instalment that then failed, neither webhook delivered: that payment counts again, the registration is PAID again, and the failed refund is alerted naming it', async () => {
    const paid = await paidInParts('refund-failed@example.org');
    harness.provider.buildEvent('charge.refunded', paid.second);
    harness.provider.buildEvent('refund.failed', paid.second);

    const report = await reconcile();
    expect(report.outcome).toBe('ok');
    expect((await ledger(paid.id)).map((row) => row.reversal)).toEqual([null, null, null]);
    expect(await registration(paid.id)).toMatchObject({ status: 'PAID', cancel_reason: null });
    expect(await registrationMoney(db(), paid.id)).toMatchObject({ paidMinor: 12000, balanceMinor: 0 });
    expect(await db()('registration_history').where({ registration_id: paid.id }).whereIn('action', ['refunded', 'refund_failed']).orderBy('id').pluck('action')).toEqual(['refunded', 'refund_failed']);
    const alerts = await alertsOfPayment(paid.second);
    expect(alerts.map((alert) => alert.kind)).toEqual(['part_payment_reversed', 'refund_failed']);
    expect(alerts[1]?.details).toMatchObject({ registrationId: paid.id, registrationStatus: 'PAID' });
    expect(alerts[1]?.reason).toContain('counts as paid again');
    await reconcile();
    expect((await alertsOfPayment(paid.second)).length).toBe(2);
  });

  it('a refund of one instalment of a registration still owing, its webhook lost and the events unlisted: the session shows it and reconcile applies it to that payment alone', async () => {
    const { id } = await depositByCard('refund-while-owing@example.org');
    const first = await payPart(id, 3500);
    harness.provider.buildEvent('charge.refunded', first);
    harness.provider.failPath('/v1/events', 500);
    const report = await reconcile();
    harness.provider.failPath('/v1/events', undefined);

    expect(report.rows).toContainEqual(expect.objectContaining({ session: first, action: 'reverse', result: 'alerted', unresolved: false }));
    expect(await ledger(id)).toEqual([
      { amount_minor: 5000, reversal: null },
      { amount_minor: 3500, reversal: 'refund' },
    ]);
    expect(await registration(id)).toMatchObject({ status: 'PENDING', cancel_reason: null });
    expect((await registrationMoney(db(), id)).balanceMinor).toBe(7000);
    // Recorded: the next run (events listed again) compares it as agreeing and replays nothing new.
    const again = await reconcile();
    expect(again.rows?.filter((row) => row.action !== 'none')).toEqual([]);
    expect(await alertKindsOf(id)).toEqual(['part_payment_reversed']);
  });

  it('an instalment paid after the balance was settled by bank transfer (kept, UNFULFILLED, alerted): reconcile neither raises it again nor calls it a mismatch', async () => {
    const { id, sessionId: deposit } = await depositByCard('settled-first@example.org');
    const late = await openPart(id, 3500);
    const money = moneyFormatter(harness.ctx.config.regional);
    await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 7000, method: 'bank', actor: 'office', yes: true }, money);
    const kept = await harness.provider.deliver('checkout.session.completed', late.provider_session_id);
    expect(JSON.parse(kept.body)).toMatchObject({ outcome: 'unfulfilled' });

    for (const apply of [false, true, true]) {
      const report = await reconcile(apply);
      const mine = report.rows?.filter((row) => [deposit, late.provider_session_id].includes(row.session)) ?? [];
      expect(mine).toHaveLength(2);
      expect(mine.every((row) => row.action === 'none' && !row.unresolved)).toBe(true);
    }
    expect(await db()('checkout_sessions').where({ id: late.id }).first()).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'balance_already_settled' });
    expect((await alertsOfPayment(late.provider_session_id)).map((alert) => alert.kind)).toEqual(['balance_already_settled']);
    expect(await db()('operations_alerts').where({ kind: 'reconcile_mismatch' })).toEqual([]);
    expect(await registration(id)).toMatchObject({ status: 'PAID' });
    expect(await registrationMoney(db(), id)).toMatchObject({ paidMinor: 12000, outstandingMinor: 0 });
  });
});

describe('the webhook on one card payment of several', () => {
  const outcome = async (type: string, sessionId: string, overrides?: Record<string, unknown>) =>
    JSON.parse((await harness.provider.deliver(type, sessionId, overrides)).body).outcome as string;

  it('the deposit (also the registration’s own payment) disputed, won, then disputed again: counted out, back in, and out again, the office told each time', async () => {
    const paid = await paidInParts('deposit-disputed@example.org');
    expect(await outcome('charge.dispute.created', paid.deposit)).toBe('alerted');
    expect(await registration(paid.id)).toMatchObject({ status: 'PENDING', cancel_reason: null });
    expect((await registrationMoney(db(), paid.id)).balanceMinor).toBe(5000);

    expect(await outcome('charge.dispute.closed', paid.deposit, { status: 'won' })).toBe('alerted');
    expect(await registration(paid.id)).toMatchObject({ status: 'PAID', cancel_reason: null });
    expect((await ledger(paid.id)).map((row) => row.reversal)).toEqual([null, null, null]);

    expect(await outcome('charge.dispute.created', paid.deposit)).toBe('alerted');
    expect(await registration(paid.id)).toMatchObject({ status: 'PENDING' });
    expect((await alertsOfPayment(paid.deposit)).map((alert) => alert.kind)).toEqual(['part_payment_reversed', 'part_payment_restored', 'part_payment_reversed']);
    expect(harness.provider.refundCalls).toEqual([]);
  });

  it('a won dispute of an instalment of a registration still owing: that payment counts again and the registration stays PENDING, owing what it owed before', async () => {
    const { id } = await depositByCard('won-while-owing@example.org');
    const first = await payPart(id, 3500);
    expect(await outcome('charge.dispute.created', first)).toBe('alerted');
    expect((await registrationMoney(db(), id)).balanceMinor).toBe(7000);
    expect(await outcome('charge.dispute.closed', first, { status: 'won' })).toBe('alerted');
    expect(await registration(id)).toMatchObject({ status: 'PENDING', cancel_reason: null });
    expect((await registrationMoney(db(), id)).balanceMinor).toBe(3500);
    const restored = (await alertsOfPayment(first)).find((alert) => alert.kind === 'part_payment_restored');
    expect(restored?.details).toMatchObject({ registrationId: id, registrationStatus: 'PENDING' });
    expect(restored?.reason).toContain(`owing ${moneyFormatter(harness.ctx.config.regional)(3500)}`);
  });

  it('a won dispute whose payment another payment replaced meanwhile: counted again, the registration PAID, and the office told of the excess', async () => {
    const paid = await paidInParts('paid-again@example.org');
    await outcome('charge.dispute.created', paid.second);
    await payPart(paid.id, 3500);
    expect(await registration(paid.id)).toMatchObject({ status: 'PAID' });

    expect(await outcome('charge.dispute.closed', paid.second, { status: 'won' })).toBe('alerted');
    expect(await registrationMoney(db(), paid.id)).toMatchObject({ paidMinor: 15500, outstandingMinor: -3500, balanceMinor: 0 });
    const restored = (await alertsOfPayment(paid.second)).find((alert) => alert.kind === 'part_payment_restored');
    expect(restored?.reason).toContain('more than its total has now been received');
  });

  it('the last payment still counting refunded after the others were: the registration it alone now pays is cancelled for the refund, not left waiting; its refund failing counts it again', async () => {
    const { id, sessionId: deposit } = await depositByCard('last-part@example.org');
    const first = await payPart(id, 3500);
    expect(await outcome('charge.refunded', deposit)).toBe('alerted');
    expect(await registration(id)).toMatchObject({ status: 'PENDING', cancel_reason: null });

    expect(await outcome('charge.refunded', first)).toBe('cancelled');
    expect(await registration(id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund' });
    expect(await db()('pending_reversals').where({ payment_intent_id: paymentIntentOf(first) })).toEqual([]);
    expect((await registrationMoney(db(), id)).paidMinor).toBe(0);

    expect(await outcome('refund.failed', first)).toBe('alerted');
    expect(await registration(id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'refund_failed' });
    expect((await registrationMoney(db(), id)).paidMinor).toBe(3500);
    const failed = (await alertsOfPayment(first)).find((alert) => alert.kind === 'refund_failed');
    expect(failed?.details).toMatchObject({ registrationId: id, registrationStatus: 'CANCELLED' });
  });

  it('an alert naming only a later card payment (its PaymentIntent) is shown with the registration that payment pays', async () => {
    const { id } = await depositByCard('alert-parties@example.org');
    const first = await payPart(id, 3500);
    const raised = await db().transaction((trx) =>
      raiseOperationsAlert(trx, harness.ctx, { kind: 'dispute_inquiry', reason: 'an inquiry about one card payment', paymentIntentId: paymentIntentOf(first) }),
    );
    const alert = (await listOperationsAlerts(db(), { all: true })).find((candidate) => candidate.id === raised.id);
    const parties = await alertParties(harness.ctx, alert ? [alert] : []);
    expect(parties.get(raised.id)).toEqual({ reference: paymentReference(id), payerName: 'Pat Parent' });
  });
});
