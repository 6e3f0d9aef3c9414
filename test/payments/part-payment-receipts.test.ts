import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { moneyFormatter } from '../../src/money-format.js';
import { registrationMoney } from '../../src/registrations/ledger.js';
import { insertDepositEvent, openPartCheckout, payDepositByCard } from '../support/deposit-event.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { closeGate } from '../support/race-gate.js';
import { referenceNow } from '../support/test-now.js';
import { queuedMessages } from '../support/webhook-events.js';

// Two card payments of parts of one balance completing at the same moment: each receipt names what was paid
// so far and the balance left as the ledger stands once that payment's row is written, never a figure read
// before the other payment was recorded.

let harness: PaymentsHarness;
let slug: string;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: referenceNow(), env: { CHURCH_NETWORKS: '127.0.0.1/32', CHURCH_NETWORK_FORM_POSTS_PER_MINUTE: '200' } });
  ({ slug } = await insertDepositEvent(harness.tdb.db, { instalments: null }));
});
afterAll(() => harness.close());

const db = () => harness.tdb.db;

const depositByCard = async (email: string) => (await payDepositByCard(harness, slug, email)).registrationId;

const openPart = (registrationId: string, amount: number) => openPartCheckout(harness, registrationId, amount);

describe('part payments completing together', () => {
  it('two parts of one balance paid at the same moment: each receipt names the balance left once its own payment is recorded, in the order the ledger took them', async () => {
    const money = moneyFormatter(harness.ctx.config.regional);
    const email = 'together@example.org';
    const id = await depositByCard(email);
    expect((await registrationMoney(db(), id)).balanceMinor).toBe(7000);

    // Two checkouts of parts open at once (pay-now opens one at a time: the first is set aside while the second opens,
    // as happens when its session was taken for unpaid and the payer then finished it after all).
    const first = await openPart(id, 3500);
    await db()('checkout_sessions').where({ id: first.id }).update({ status: 'EXPIRED', scrubbed_at: referenceNow(), unpaid_confirmed_at: referenceNow() });
    const second = await openPart(id, 2000);
    await db()('checkout_sessions').where({ id: first.id }).update({ status: 'OPEN', scrubbed_at: null, unpaid_confirmed_at: null });

    // Both completions are under way before either records its payment.
    const gate = await closeGate(db(), ['registration_payments']);
    const deliveries = [first, second].map((checkout) => gate.started(harness.provider.deliver('checkout.session.completed', checkout.provider_session_id)));
    await gate.waiting(2);
    await gate.open();
    const outcomes = await Promise.all(deliveries);
    expect(outcomes.map((delivered) => JSON.parse(delivered.body).outcome)).toEqual(['completed', 'completed']);

    const rows = await db()('registration_payments').where({ registration_id: id, method: 'card' }).orderBy('id').select('amount_minor', 'surcharge_minor');
    expect(rows.map((row) => row.amount_minor).slice(1).sort()).toEqual([2000, 3500]);
    expect(await db()('registrations').where({ id }).first()).toMatchObject({ status: 'PENDING' });
    expect((await registrationMoney(db(), id)).balanceMinor).toBe(1500);

    const receipts = (await queuedMessages(harness.ctx, 'receipt')).filter((message) => message.to.includes(email));
    expect(receipts).toHaveLength(3);
    // In the ledger's order: the first recorded leaves 7000 less its part, the second leaves 1500.
    type Row = { amount_minor: number; surcharge_minor: number };
    const [, earlier, later] = rows as [Row, Row, Row];
    // Each receipt is found by what that checkout charged: its part and its own card fee.
    const receiptOf = (row: Row) => receipts.find((receipt) => receipt.text.includes(`This payment: ${money(row.amount_minor + row.surcharge_minor)}`))?.text ?? '';
    expect(receiptOf(earlier)).toContain(`Paid so far: ${money(5000 + earlier.amount_minor)}`);
    expect(receiptOf(earlier)).toContain(`Balance left: ${money(7000 - earlier.amount_minor)}`);
    expect(receiptOf(later)).toContain(`Paid so far: ${money(10500)}`);
    expect(receiptOf(later)).toContain(`Balance left: ${money(1500)}`);
  });
});
