import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/money-format.js';
import { registrationToken } from '../../src/payments/links.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { registrationMoney } from '../../src/registrations/ledger.js';
import { cardSurcharge } from '../../src/registrations/pricing.js';
import { getCardFeeRate, setSetting } from '../../src/settings.js';
import { sendBalanceReminders } from '../../src/jobs/send-balance-reminders.js';
import { registerForEvent } from '../../src/signup/register.js';
import { registerByBank } from '../support/card-event-harness.js';
import { queuedMessages } from '../support/webhook-events.js';
import { postRegistrationForm } from '../support/form-post.js';
import { insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { fromReferenceNow, referenceNow } from '../support/test-now.js';

// Paying part of a balance by card, the provider's minimum charge (MXN: MX$10.00) is judged on what that one
// checkout charges (the part and its own card fee), not on the registration's total: a part below it is sent
// to bank transfer before any checkout is opened, and a part at it is charged.

let harness: PaymentsHarness;
let event: EventRecord;
let money: (minor: number) => string;

beforeAll(async () => {
  harness = await startPaymentsHarness({
    now: referenceNow(),
    // Every post here comes from this machine: the church's own network, whose form-post limit fits a file of payments.
    env: { APP_CURRENCY: 'MXN', APP_LOCALE: 'es-MX', CHURCH_NETWORKS: '127.0.0.1/32', CHURCH_NETWORK_FORM_POSTS_PER_MINUTE: '200' },
  });
  money = moneyFormatter(harness.ctx.config.regional);
  await setSetting(harness.tdb.db, 'bank.accountName', 'Iglesia Gracia', referenceNow());
  await setSetting(harness.tdb.db, 'bank.bsb', '062-000', referenceNow());
  await setSetting(harness.tdb.db, 'bank.accountNumber', '1234 5678', referenceNow());
  const balanceDueAt = fromReferenceNow({ days: 30 }).toISOString().slice(0, 10);
  const { slug } = await insertEvent(harness.tdb.db, {
    online_payment: true,
    pass_card_fee: true,
    starts_at: fromReferenceNow({ days: 60 }),
    pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 5000 }] }),
    balance_terms: JSON.stringify({ deposit: { perAttendee: 2000 }, balanceDueAt, minimumPayment: 500, overdue: 'alert' }),
  });
  event = (await getEventBySlug(harness.tdb.db, slug)) as EventRecord;
});
afterAll(() => harness.close());

const db = () => harness.tdb.db;
const unescape = (html: string) => html.replaceAll('&#x3D;', '=').replaceAll('&#x27;', "'").replaceAll('&#x2F;', '/');

/** A bank registration (MX$50.00) of which the office recorded `paidMinor`: it pays the rest in parts. */
async function owing(email: string, paidMinor: number): Promise<string> {
  const id = await registerByBank(harness, event, { name: 'Ana Familia', email });
  await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: paidMinor, method: 'bank', partial: true, actor: 'office' }, money);
  expect((await registrationMoney(db(), id)).balanceMinor).toBe(5000 - paidMinor);
  return id;
}

const token = (id: string) => registrationToken(harness.ctx.config.authSecret, id, 1);

async function getPay(id: string, amount?: number) {
  const response = await fetch(`${harness.server.url}/registrations/${id}/pay?token=${token(id)}${amount === undefined ? '' : `&amount=${amount}`}`, { redirect: 'manual' });
  return { status: response.status, html: unescape(await response.text()) };
}

async function postPay(id: string, amount: number) {
  const response = await fetch(`${harness.server.url}/registrations/${id}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: token(id), amount: String(amount) }).toString(),
  });
  return { status: response.status, location: response.headers.get('location'), html: unescape(await response.text()) };
}

const byCard = async (net: number) => net + cardSurcharge(net, await getCardFeeRate(db()));

/** The least part whose card total, its fee included, reaches MX$10.00. */
async function leastByCard(): Promise<number> {
  const rate = await getCardFeeRate(db());
  let net = 1;
  while (net + cardSurcharge(net, rate) < 1000) net += 1;
  return net;
}
const belowMinimum = (charged: number) =>
  `Card payment needs at least ${money(1000)}, and this payment comes to ${money(charged)} by card. Please pay by bank transfer, using the details on your registration page.`;

describe("a part of a balance is judged against the card provider's minimum on what its own checkout charges", () => {
  it('a part below the minimum (its fee included) is sent to bank transfer by the pay page, GET and POST, and no checkout is opened, though the total is well above it', async () => {
    const id = await owing('below@example.org', 2000);
    const charged = await byCard(800);
    expect(charged).toBeLessThan(1000);
    const creates = harness.provider.sessionCreateCalls().length;

    const page = await getPay(id, 800);
    expect(page.status).toBe(409);
    expect(page.html).toContain(belowMinimum(charged));
    expect(page.html).toMatch(/<title>Card payment not possible[^<]*<\/title>/);
    expect(page.html).not.toContain('id="pay"');

    const posted = await postPay(id, 800);
    expect(posted.status).toBe(409);
    expect(posted.html).toContain(belowMinimum(charged));
    expect(posted.html).not.toContain('Card payment is unavailable right now');
    expect(await db()('checkout_sessions').where({ registration_id: id })).toEqual([]);
    expect(harness.provider.sessionCreateCalls().length).toBe(creates);

    // The registration page still offers card payment of a part that clears the minimum, and bank transfer; its form
    // asks for no less than one card payment can be (not the event's MX$5.00 minimum part).
    const registration = unescape(await (await fetch(`${harness.server.url}/registrations/${id}?token=${token(id)}`)).text());
    expect(registration).toContain('id="bank-instructions"');
    const least = await leastByCard();
    expect(registration).toMatch(new RegExp(`id="pay-amount"[^>]*min="${(least / 100).toFixed(2)}"`));
  });

  it('a part at the minimum with its fee, on the same balance, opens a checkout that charges exactly the part and its fee', async () => {
    const id = await owing('at-minimum@example.org', 2000);
    const charged = await byCard(1000);

    const page = await getPay(id, 1000);
    expect(page.status).toBe(200);
    expect(page.html).toContain(money(charged));

    const posted = await postPay(id, 1000);
    expect(posted.status).toBe(303);
    const checkout = await db()('checkout_sessions').where({ provider_url: posted.location }).first();
    expect(checkout).toMatchObject({ registration_id: id, net_minor: 1000, balance_part: true });
    expect(harness.provider.sessions.get(checkout.provider_session_id)?.amount_total).toBe(charged);
  });

  it('a balance left below the minimum (the total above it): the registration page offers no card payment, only bank transfer, and the pay page says why', async () => {
    const id = await owing('small-balance@example.org', 4300);
    const charged = await byCard(700);

    const registration = unescape(await (await fetch(`${harness.server.url}/registrations/${id}?token=${token(id)}`)).text());
    expect(registration).not.toContain('id="pay-amount"');
    expect(registration).not.toContain('id="pay-now"');
    expect(registration).toContain('id="bank-instructions"');

    const page = await getPay(id);
    expect(page.status).toBe(409);
    expect(page.html).toContain(belowMinimum(charged));
    const posted = await postPay(id, 700);
    expect(posted.status).toBe(409);
    expect(posted.html).toContain(belowMinimum(charged));
    expect(await db()('checkout_sessions').where({ registration_id: id })).toEqual([]);
  });

  it('a part the provider refuses although the table allows it (its minimum is higher than ours): the family is told this payment is too small for a card, and nothing stays staged', async () => {
    const id = await owing('provider-refuses@example.org', 2000);
    const charged = await byCard(1500);
    harness.provider.setMinimumCharge(2000);
    try {
      const posted = await postPay(id, 1500);
      expect(posted.status).toBe(409);
      expect(posted.html).toContain(
        `This payment comes to ${money(charged)} by card, which is less than our card payment provider can charge in one payment. Please pay by bank transfer, using the details on your registration page.`,
      );
      expect(await db()('checkout_sessions').where({ registration_id: id })).toEqual([]);
    } finally {
      harness.provider.setMinimumCharge(50);
    }
  });

  it("a balance reminder for an amount below the minimum has no card link, and asks for a bank transfer; one above it links to pay exactly that by card", async () => {
    const dueOn = fromReferenceNow({ days: 20 });
    const { slug } = await insertEvent(db(), {
      online_payment: true,
      pass_card_fee: true,
      starts_at: fromReferenceNow({ days: 40 }),
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 5000 }] }),
      balance_terms: JSON.stringify({ deposit: { perRegistration: 2000 }, balanceDueAt: dueOn.toISOString().slice(0, 10), overdue: 'alert' }),
    });
    const withDeposit = (await getEventBySlug(db(), slug)) as EventRecord;
    const depositFamily = async (email: string, paidMinor: number) => {
      const outcome = await registerForEvent(harness.ctx, withDeposit, { contact: { name: 'Ana Familia', email }, attendees: [{ name: 'Kid', tier: 'adult' }], family: false, payment: 'bank', choice: 'deposit' });
      if (outcome.kind !== 'registered') throw new Error('expected a bank registration');
      await markRegistrationPaid(harness.ctx, { registration: outcome.registrationId, amountMinor: paidMinor, method: 'bank', partial: true, actor: 'office' }, money);
      return outcome.registrationId;
    };
    const small = await depositFamily('small-due@example.org', 4500);
    const large = await depositFamily('large-due@example.org', 2000);

    harness.ctx.clock.set(new Date(dueOn.getTime() + 2 * 24 * 60 * 60_000));
    try {
      expect(await sendBalanceReminders(harness.ctx)).toMatchObject({ sent: 2 });
    } finally {
      harness.ctx.clock.set(referenceNow());
    }
    const mails = await queuedMessages(harness.ctx, 'balance-reminder');
    const to = (email: string) => mails.find((mail) => mail.to.includes(email))?.text ?? '';
    expect(to('small-due@example.org')).toContain(`${money(500)} was due on`);
    expect(to('small-due@example.org')).not.toContain('/pay?');
    expect(to('small-due@example.org')).toContain(`Pay by bank transfer with the details on your registration page: `);
    expect(to('small-due@example.org')).toContain(`/registrations/${small}?token=`);
    expect(to('large-due@example.org')).toMatch(new RegExp(`/registrations/${large}/pay\\?token=[0-9a-f]+&amount=3000`));
    expect(to('large-due@example.org')).toContain('Or pay by bank transfer');
  });

  it('a deposit below the minimum (the whole amount above it) is refused on the form in words for the deposit, offering the whole amount or bank transfer; the whole amount by card is taken', async () => {
    const { slug } = await insertEvent(db(), {
      online_payment: true,
      pass_card_fee: true,
      starts_at: fromReferenceNow({ days: 60 }),
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 5000 }] }),
      balance_terms: JSON.stringify({ deposit: { perAttendee: 500 }, balanceDueAt: fromReferenceNow({ days: 30 }).toISOString().slice(0, 10), overdue: 'alert' }),
    });
    const form = (pay_plan: string) =>
      postRegistrationForm(harness.server.url, slug, { name: 'Ana Familia', email: `deposit-${pay_plan}@example.org`, attendee_name: 'Kid', attendee_tier: 'adult', payment: 'card', pay_plan });
    const refused = await form('deposit');
    expect(refused.status).toBe(409);
    expect(unescape(await refused.text())).toContain(
      `Card payment needs at least ${money(1000)}, and the deposit comes to ${money(await byCard(500))} by card. Please pay the whole amount now, or choose bank transfer.`,
    );
    const whole = await form('full');
    expect(whole.status).toBe(303);
    const checkout = await db()('checkout_sessions').where({ provider_url: whole.headers.get('location') }).first();
    expect(checkout).toMatchObject({ net_minor: 5000 });
  });
});
