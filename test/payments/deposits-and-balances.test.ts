import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { resendRegistrationMail } from '../../src/office/registrations/resend.js';
import { registrationToken } from '../../src/payments/links.js';
import { reconcileWithProvider } from '../../src/payments/reconcile/run.js';
import { registrationMoney } from '../../src/registrations/ledger.js';
import { cardSurcharge } from '../../src/registrations/pricing.js';
import { getCardFeeRate } from '../../src/settings.js';
import { insertDepositEvent, openPartCheckout, payDepositByCard } from '../support/deposit-event.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { queuedMessages } from '../support/webhook-events.js';
import { referenceNow } from '../support/test-now.js';

let harness: PaymentsHarness;
let slug: string;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: referenceNow() });
  ({ slug } = await insertDepositEvent(harness.tdb.db));
});
afterAll(() => harness.close());

const db = () => harness.tdb.db;

/** Registers one attendee (12000) by card choosing instalments, and pays the deposit's checkout at the provider. */
async function depositByCard(email: string): Promise<string> {
  const { registrationId, checkout } = await payDepositByCard(harness, slug, email, 'instalments');
  expect(checkout).toMatchObject({ net_minor: 5000, surcharge_minor: cardSurcharge(5000, await getCardFeeRate(db())) });
  return registrationId;
}

const payPart = (registrationId: string, amount: number) => openPartCheckout(harness, registrationId, amount);

const receipts = async () => Number((await db()('queued_mail').where({ kind: 'receipt' }).count<{ n: string }>({ n: '*' }).first())?.n ?? 0);

describe('deposits and balances paid by card', () => {
  it('a deposit by card keeps the registration PENDING with what it paid; two instalments by card, each charged its own card fee, make it PAID, a receipt for each', async () => {
    const before = await receipts();
    const id = await depositByCard('instalments@example.org');
    expect(await db()('registrations').where({ id }).first()).toMatchObject({ status: 'PENDING', total_minor: 12000, payment_method: 'card' });
    expect((await registrationMoney(db(), id)).balanceMinor).toBe(7000);
    expect(await db()('registration_schedules').where({ registration_id: id }).orderBy('seq').pluck('settled_target_minor')).toEqual([5000, 8500, 12000]);

    const first = await payPart(id, 3500);
    expect(first).toMatchObject({ net_minor: 3500, surcharge_minor: cardSurcharge(3500, await getCardFeeRate(db())) });
    await harness.provider.deliver('checkout.session.completed', first.provider_session_id);
    expect(await db()('registrations').where({ id }).first()).toMatchObject({ status: 'PENDING', total_minor: 12000 });
    expect((await registrationMoney(db(), id)).balanceMinor).toBe(3500);

    // More than the balance left is refused before any checkout is opened.
    const token = registrationToken(harness.ctx.config.authSecret, id, 1);
    const tooMuch = await fetch(`${harness.server.url}/registrations/${id}/pay`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `token=${token}&amount=3501` });
    expect(tooMuch.status).toBe(409);

    const second = await payPart(id, 3500);
    await harness.provider.deliver('checkout.session.completed', second.provider_session_id);
    expect(await db()('registrations').where({ id }).first()).toMatchObject({ status: 'PAID', total_minor: 12000 });
    expect(await registrationMoney(db(), id)).toMatchObject({ paidMinor: 12000, balanceMinor: 0, outstandingMinor: 0 });
    expect(await db()('registration_payments').where({ registration_id: id, method: 'card' }).orderBy('id').pluck('amount_minor')).toEqual([5000, 3500, 3500]);
    expect((await receipts()) - before).toBe(3);

    // Reconcile agrees with the provider on every one of the registration's card payments.
    const report = await reconcileWithProvider(harness.ctx, { sinceMs: 24 * 60 * 60_000, apply: false });
    const mine = report.rows.filter((row) => [first.provider_session_id, second.provider_session_id].includes(row.session));
    expect(mine).toHaveLength(2);
    expect(report.rows.every((row) => row.action === 'none' && !row.unresolved)).toBe(true);
  });

  it('an instalment paid after the balance was settled by bank transfer is alerted and kept, never applied twice', async () => {
    const id = await depositByCard('settled@example.org');
    const late = await payPart(id, 3500);
    const money = moneyFormatter(harness.ctx.config.regional);
    await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 7000, method: 'bank', actor: 'office', yes: true }, money);
    expect(await db()('registrations').where({ id }).first()).toMatchObject({ status: 'PAID' });

    await harness.provider.deliver('checkout.session.completed', late.provider_session_id);
    expect(await db()('checkout_sessions').where({ id: late.id }).first()).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'balance_already_settled' });
    expect(await db()('operations_alerts').where({ kind: 'balance_already_settled', provider_session_id: late.provider_session_id }).first()).toBeTruthy();
    expect(await registrationMoney(db(), id)).toMatchObject({ paidMinor: 12000, outstandingMinor: 0 });
    expect(await db()('registration_payments').where({ registration_id: id, method: 'card' }).count<{ n: string }>({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it('a refund at the provider of one instalment of several finds its registration through that payment: that payment alone stops counting, the registration owes it again and is not cancelled, the office is alerted once', async () => {
    const id = await depositByCard('refunded-part@example.org');
    const part = await payPart(id, 3500);
    await harness.provider.deliver('checkout.session.completed', part.provider_session_id);
    expect((await registrationMoney(db(), id)).balanceMinor).toBe(3500);

    const refunded = await harness.provider.deliver('charge.refunded', part.provider_session_id);
    expect(JSON.parse(String(refunded.body))).toMatchObject({ outcome: 'alerted' });
    expect(await db()('registrations').where({ id }).first()).toMatchObject({ status: 'PENDING', cancel_reason: null });
    expect(await registrationMoney(db(), id)).toMatchObject({ paidMinor: 5000, balanceMinor: 7000 });
    expect(await db()('registration_payments').where({ registration_id: id }).orderBy('id').select('amount_minor', 'reversal')).toEqual([
      { amount_minor: 5000, reversal: null },
      { amount_minor: 3500, reversal: 'refund' },
    ]);
    // The same refund delivered again changes nothing and alerts nothing more.
    expect(JSON.parse(String((await harness.provider.deliver('charge.refunded', part.provider_session_id)).body))).toMatchObject({ outcome: 'already_alerted' });
    expect(await db()('operations_alerts').where({ kind: 'part_payment_reversed' }).whereRaw(`details->>'registrationId' = ?`, [id]).count<{ n: string }>({ n: '*' }).first()).toEqual({ n: 1 });
    expect(await registrationMoney(db(), id)).toMatchObject({ paidMinor: 5000, balanceMinor: 7000 });

    // A confirmation the office resends counts as the ledger does: the refunded part is owed again, and the card link asks for it.
    await resendRegistrationMail(harness.ctx, { registration: id, actor: 'office' });
    const resent = (await queuedMessages(harness.ctx, 'registration-confirmation')).filter((m) => m.to.includes('refunded-part@example.org')).at(-1);
    expect(resent?.text).toContain('Received so far: $50.00');
    expect(resent?.text).toContain('Still to pay: $70.00');
    expect(resent?.text).toContain('Pay now by card: ');
  });
});
