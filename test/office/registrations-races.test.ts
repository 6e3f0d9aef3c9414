import { formatInTimeZone } from 'date-fns-tz';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { exportAttendees } from '../../src/office/registrations/export.js';
import { listRegistrations } from '../../src/office/registrations/list.js';
import { showRegistration } from '../../src/office/registrations/show.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { AppError } from '../../src/errors.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import { payNowPath, registrationPath } from '../../src/http/registration-view.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { setSetting } from '../../src/settings.js';
import { seatsLeft } from '../../src/registrations/registrations.js';
import { assertInvariants } from '../support/invariants.js';
import { closeGate } from '../support/race-gate.js';
import { addCardEvent, registerByBank } from '../support/card-event-harness.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

let harness: PaymentsHarness;
const charged = new Set<string>();
beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(async () => {
  expect(harness.provider.refundCalls).toEqual([]);
  await harness.close();
});

const money = (minor: number) => moneyFormatter({ locale: 'en-AU', currency: 'AUD' })(minor);

const liveEvent = (capacity: number | null = 10) => addCardEvent(harness, capacity);
const bankRegistration = (event: EventRecord, n: number) => registerByBank(harness, event, { name: `Bank Payer ${n}`, email: `bank-${n}@example.org` }, `Guest ${n}`);

async function payAtProvider(checkoutId: string): Promise<{ outcome?: string }> {
  const row = await harness.tdb.db('checkout_sessions').where({ id: checkoutId }).first<{ provider_session_id: string }>();
  charged.add(row.provider_session_id);
  const result = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', row.provider_session_id));
  expect(result.status).toBe(200);
  return JSON.parse(result.body) as { outcome?: string };
}

/** A new registration paid by card at the provider; its completed checkout row. */
async function paidByCard(event: EventRecord, name: string, email: string) {
  const started = await startEventCheckout(harness.ctx, { event, contact: { name, email }, attendees: [{ name, tier: 'adult' }], family: false });
  expect(await payAtProvider(started.checkoutId)).toMatchObject({ outcome: 'completed' });
  return harness.tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
}

/** Settles each promise and returns the values and the AppErrors, failing on anything else. */
async function settleAll<T>(promises: Array<Promise<T>>): Promise<{ won: T[]; refused: AppError[] }> {
  const results = await Promise.allSettled(promises);
  const won: T[] = [];
  const refused: AppError[] = [];
  for (const result of results) {
    if (result.status === 'fulfilled') won.push(result.value);
    else if (result.reason instanceof AppError) refused.push(result.reason);
    else throw result.reason;
  }
  return { won, refused };
}

const office = { actor: 'office' };

describe('office commands racing each other, pay-now and the webhook on one registration (row lock)', () => {
  // Protected by the registration's row lock (lockRegistration): mark-paid reads the registration under it. Without it,
  // each attempt has read it PENDING by the time the gate (at the payment's insert) opens, and each records the payment.
  it('two mark-paids: one records the payment and queues one receipt; the other says it is already paid', async () => {
    const event = await liveEvent();
    const id = await bankRegistration(event, 1);
    const attempt = () => markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 12000, method: 'bank', ...office }, money);
    const gate = await closeGate(harness.tdb.db, ['registration_payments']);
    const attempts = [attempt(), attempt(), attempt()].map((a) => gate.started(a));
    await gate.waiting(3);
    await gate.open();
    const { won, refused } = await settleAll(attempts);
    expect(won).toHaveLength(1);
    expect(refused.map((e) => e.message)).toEqual([expect.stringContaining('already paid (bank)'), expect.stringContaining('already paid (bank)')]);
    expect(await harness.tdb.db('registration_payments').where({ registration_id: id }).count<{ n: number }>({ n: '*' }).first()).toEqual({ n: 1 });
    expect(await harness.tdb.db('queued_mail').where({ registration_id: id, kind: 'receipt' }).count<{ n: number }>({ n: '*' }).first()).toEqual({ n: 1 });
    await assertInvariants(harness.tdb.db, { charged });
  });

  it('two identical part-payments at once (one transfer, two volunteers): one is recorded, the other is refused naming it', async () => {
    const event = await liveEvent();
    const id = await bankRegistration(event, 4);
    const attempt = () =>
      markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 5000, method: 'bank', partial: true, note: 'transfer of 3 March', ...office }, money);
    // Protected by the registration's row lock (lockRegistration): the same-payment check reads the payments under it.
    // Without it, both have found no such payment by the time the gate (at the payment's insert) opens, and both record it.
    const gate = await closeGate(harness.tdb.db, ['registration_payments']);
    const attempts = [attempt(), attempt()].map((a) => gate.started(a));
    await gate.waiting(2);
    await gate.open();
    const { won, refused } = await settleAll(attempts);
    expect(won).toMatchObject([{ status: 'PENDING', paidMinor: 5000, balanceMinor: 7000 }]);
    const payments = await harness.tdb.db('registration_payments').where({ registration_id: id });
    expect(payments).toHaveLength(1);
    const recordedAt = formatInTimeZone(payments[0].recorded_at, 'Australia/Sydney', 'yyyy-MM-dd HH:mm');
    expect(refused.map((e) => [e.code, e.message])).toEqual([
      ['not_markable', `$50.00 by bank ("transfer of 3 March") was already recorded for registration ${paymentReference(id)} on ${recordedAt} by office; nothing was recorded`],
    ]);
    expect(await harness.tdb.db('registrations').where({ id }).first()).toMatchObject({ status: 'PENDING' });
    expect(await harness.tdb.db('registration_money').where({ registration_id: id }).first()).toMatchObject({ office_paid_minor: 5000 });

    // Recorded more than 24 hours ago, the same amount and note is taken for another transfer.
    await harness.tdb.db('registration_payments').where({ registration_id: id }).update({ recorded_at: new Date(harness.ctx.clock.now().getTime() - 25 * 3600_000) });
    expect(await attempt()).toMatchObject({ status: 'PENDING', paidMinor: 10000, balanceMinor: 2000 });
  });

  it('two cancels: one frees the seat once; the other says it was already cancelled', async () => {
    const event = await liveEvent(2);
    const id = await bankRegistration(event, 2);
    await bankRegistration(event, 3);
    expect(await seatsLeft(harness.tdb.db, event, harness.ctx.clock.now())).toBe(0);
    // Protected by the registration's row lock (lockRegistration), not the event's lock the cancellation takes next:
    // without it, both have read the registration live by the time the gate (at the event's lock) opens, and the
    // second cancels it again from what it read, though it then waits for the first under the event's lock.
    const gate = await closeGate(harness.tdb.db, ['events']);
    const cancels = [cancelRegistration(harness.ctx, { registration: id, ...office }), cancelRegistration(harness.ctx, { registration: id, ...office })].map((c) =>
      gate.started(c),
    );
    await gate.waiting(2);
    await gate.open();
    const { won, refused } = await settleAll(cancels);
    expect(won).toHaveLength(1);
    expect(refused.map((e) => e.code)).toEqual(['already_cancelled']);
    expect(await seatsLeft(harness.tdb.db, event, harness.ctx.clock.now())).toBe(1);
    expect(await harness.tdb.db('registration_history').where({ registration_id: id, action: 'cancelled' }).count<{ n: number }>({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it('mark-paid against a pay-now card payment: one makes it PAID, the other is refused or kept with an alert, never both', async () => {
    const event = await liveEvent();
    for (let round = 0; round < 4; round++) {
      const id = await bankRegistration(event, 10 + round);
      const checkout = await startExistingRegistrationCheckout(harness.ctx, { registrationId: id });
      const { won, refused } = await settleAll<unknown>([
        // --yes: the office records the transfer knowing the card checkout is open (without it, mark-paid refuses).
        markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 12000, method: 'bank', yes: true, ...office }, money),
        payAtProvider(checkout.checkoutId),
      ]);
      const registration = await harness.tdb.db('registrations').where({ id }).first();
      const staged = await harness.tdb.db('checkout_sessions').where({ id: checkout.checkoutId }).first();
      expect(registration.status).toBe('PAID');
      if (registration.payment_method === 'card') {
        expect(refused.map((e) => e.message)).toEqual([expect.stringContaining('already paid (card)')]);
        expect(staged.status).toBe('COMPLETED');
      } else {
        expect(registration.payment_method).toBe('bank');
        expect(won).toContainEqual(expect.objectContaining({ outcome: 'unfulfilled' }));
        expect(staged).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'paid_twice' });
      }
      await assertInvariants(harness.tdb.db, { charged });
    }
  });

  it('cancel against pay-now: a cancelled registration cannot be paid; a payment that lands after the cancel is kept with an alert, not made PAID', async () => {
    const event = await liveEvent();
    for (let round = 0; round < 4; round++) {
      const id = await bankRegistration(event, 20 + round);
      const { won, refused } = await settleAll<unknown>([
        cancelRegistration(harness.ctx, { registration: id, ...office }),
        startExistingRegistrationCheckout(harness.ctx, { registrationId: id }),
      ]);
      const started = won.find((value): value is { checkoutId: string } => typeof value === 'object' && value !== null && 'checkoutId' in value);
      if (!started) expect(refused.map((e) => e.message)).toEqual([expect.stringContaining('was cancelled')]);
      else expect(await payAtProvider(started.checkoutId)).toEqual(expect.objectContaining({ outcome: 'unfulfilled' }));
      expect((await harness.tdb.db('registrations').where({ id }).first()).status).toBe('CANCELLED');
      await assertInvariants(harness.tdb.db, { charged });
    }
  });

  it('cancelling while a pay-now checkout may still be paid says so; without one it does not', async () => {
    const event = await liveEvent();
    const withCheckout = await bankRegistration(event, 30);
    await startExistingRegistrationCheckout(harness.ctx, { registrationId: withCheckout });
    expect(await cancelRegistration(harness.ctx, { registration: withCheckout, ...office })).toMatchObject({ cardPaymentMayArrive: true });
    const without = await bankRegistration(event, 31);
    expect(await cancelRegistration(harness.ctx, { registration: without, ...office })).toMatchObject({ cardPaymentMayArrive: false });
  });

  it('after a part-payment recorded by the office, pay-now opens a checkout for the balance only (never the whole total) and the pages show the balance', async () => {
    await setSetting(harness.tdb.db, 'bank.accountName', 'Grace Community Church', harness.ctx.clock.now());
    await setSetting(harness.tdb.db, 'bank.bsb', '062-000', harness.ctx.clock.now());
    await setSetting(harness.tdb.db, 'bank.accountNumber', '1234 5678', harness.ctx.clock.now());
    const event = await liveEvent();
    const id = await bankRegistration(event, 30);
    await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 5000, method: 'cash', partial: true, ...office }, money);
    const page = await (await fetch(`${harness.server.url}${registrationPath(harness.ctx.config.authSecret, id, 1)}`)).text();
    expect(page).toContain('id="balance-left">$70.00<');
    // The balance's own form (its amount the balance) stands for the whole-total button.
    expect(page).not.toContain('id="pay-now"');
    expect(page).toContain('id="pay-part"');
    const payPage = await fetch(`${harness.server.url}${payNowPath(harness.ctx.config.authSecret, id, 1)}`);
    expect(payPage.status).toBe(200);
    const payHtml = await payPage.text();
    expect(payHtml).toContain('id="amount">$70.00<');
    expect(payHtml).not.toContain('$120.00');

    await startExistingRegistrationCheckout(harness.ctx, { registrationId: id });
    expect(await harness.tdb.db('checkout_sessions').where({ registration_id: id }).select('net_minor', 'balance_part')).toEqual([{ net_minor: 7000, balance_part: true }]);
  });

  it('a part-payment is refused while a pay-now checkout for the whole total may still be paid, so the payer is never charged twice over', async () => {
    const event = await liveEvent();
    const id = await bankRegistration(event, 40);
    // The payer opened pay-now and is at the provider's page: no payment intent yet.
    const checkout = await startExistingRegistrationCheckout(harness.ctx, { registrationId: id });

    const refused = await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 5000, method: 'cash', partial: true, ...office }, money).catch(
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ code: 'not_markable', message: expect.stringContaining('may still be paid') });
    expect(await harness.tdb.db('registration_payments').where({ registration_id: id })).toEqual([]);

    // The card payment then lands for the whole total, and that is all the payer paid.
    expect(await payAtProvider(checkout.checkoutId)).toMatchObject({ outcome: 'completed' });
    expect(await harness.tdb.db('registrations').where({ id }).first()).toMatchObject({ status: 'PAID', payment_method: 'card', total_minor: 12000 });
    expect(await harness.tdb.db('operations_alerts').where({ checkout_session_id: checkout.checkoutId })).toEqual([]);
    await assertInvariants(harness.tdb.db, { charged });
  });

  it('an expired pay-now checkout whose payment may still arrive also refuses a part-payment; once confirmed unpaid, the part-payment is recorded', async () => {
    const event = await liveEvent();
    const id = await bankRegistration(event, 41);
    const checkout = await startExistingRegistrationCheckout(harness.ctx, { registrationId: id });
    await harness.tdb.db('checkout_sessions').where({ id: checkout.checkoutId }).update({ status: 'EXPIRED', expires_at: new Date(Date.now() - 60_000) });
    const part = { registration: id, amountMinor: 5000, method: 'cash' as const, partial: true, ...office };

    await expect(markRegistrationPaid(harness.ctx, part, money)).rejects.toMatchObject({ code: 'not_markable' });

    await harness.tdb.db('checkout_sessions').where({ id: checkout.checkoutId }).update({ payload_enc: null, scrubbed_at: new Date(), unpaid_confirmed_at: new Date() });
    expect(await markRegistrationPaid(harness.ctx, part, money)).toMatchObject({ status: 'PENDING', recordedMinor: 5000, balanceMinor: 7000 });
  });

  it('cancelling a card-paid registration says the refund is made in the dashboard; the refund webhook that follows records it, with no alert', async () => {
    const staged = await paidByCard(await liveEvent(), 'Card Payer', 'card@example.org');
    const id = staged.registration_id as string;

    const cancelled = await cancelRegistration(harness.ctx, { registration: id, note: 'cannot come', ...office });
    expect(cancelled).toMatchObject({ paidByCard: true, paidMinor: 12000, previousStatus: 'PAID' });
    const alertsBefore = await harness.tdb.db('operations_alerts').count<{ n: number }>({ n: '*' }).first();
    const before = await harness.tdb.db('registrations').where({ id }).first();

    const refund = await harness.provider.deliverEvent(harness.provider.buildEvent('charge.refunded', staged.provider_session_id));
    expect(refund.status).toBe(200);
    expect(JSON.parse(refund.body)).toMatchObject({ outcome: 'refund_recorded' });
    expect(await harness.tdb.db('registrations').where({ id }).first()).toEqual({ ...before, cancel_reason: 'refund', updated_at: expect.any(Date) });
    expect(await showRegistration(harness.ctx, id)).toMatchObject({ status: 'CANCELLED', paidMinor: 0 });
    expect(await harness.tdb.db('operations_alerts').count<{ n: number }>({ n: '*' }).first()).toEqual(alertsBefore);
    expect(await harness.tdb.db('registration_history').where({ registration_id: id }).pluck('action')).toEqual(['cancelled', 'refunded']);
    await assertInvariants(harness.tdb.db, { charged, refundCalls: harness.provider.refundCalls });
  });

  it('a card payment refunded in full at the provider counts as nothing paid in the list and the export', async () => {
    const event = await liveEvent();
    const staged = await paidByCard(event, 'Refunded Payer', 'refunded@example.org');
    const refund = await harness.provider.deliverEvent(harness.provider.buildEvent('charge.refunded', staged.provider_session_id));
    expect(JSON.parse(refund.body)).toMatchObject({ outcome: 'cancelled' });

    const [listed] = await listRegistrations(harness.ctx, { eventSlug: event.slug, search: 'refunded@example.org' });
    expect(listed).toMatchObject({ status: 'CANCELLED', paidMinor: 0 });
    expect((await exportAttendees(harness.ctx, event.slug)).map((row) => row.email)).not.toContain('refunded@example.org');
    const exported = (await exportAttendees(harness.ctx, event.slug, { includeCancelled: true })).find((row) => row.email === 'refunded@example.org');
    expect(exported).toMatchObject({ status: 'CANCELLED', amountPaid: '0.00' });
    expect(await showRegistration(harness.ctx, staged.registration_id)).toMatchObject({ status: 'CANCELLED', paidMinor: 0 });
  });
});
