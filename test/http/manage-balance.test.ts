import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditRegistration } from '../../src/office/registrations/credit.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { managePath } from '../../src/payments/manage-link.js';
import { registrationMoney } from '../../src/registrations/ledger.js';
import { cardSurcharge } from '../../src/registrations/pricing.js';
import { getCardFeeRate } from '../../src/settings.js';
import { insertDepositEvent, payDepositByCard } from '../support/deposit-event.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { referenceNow } from '../support/test-now.js';

let harness: PaymentsHarness;
let slug: string;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: referenceNow() });
  ({ slug } = await insertDepositEvent(harness.tdb.db, { instalments: null }));
});
afterAll(() => harness.close());

const db = () => harness.tdb.db;

const depositByCard = async (email: string) => (await payDepositByCard(harness, slug, email)).registrationId;

async function managePage(id: string): Promise<string> {
  const response = await fetch(`${harness.server.url}${managePath(harness.ctx.config.authSecret, { registrationId: id, version: 1 })}`, { headers: { accept: 'text/html' } });
  expect(response.status).toBe(200);
  return response.text();
}

/** The text of the element with this id, tags removed. */
function textOf(html: string, id: string): string | undefined {
  const inner = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(?:dd|p|span|ul)>`).exec(html)?.[1];
  return inner?.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim();
}

/** The balance section's pay form as the page gives it: where it posts and its fields. */
function payForm(html: string): { action: string; fields: Record<string, string> } | undefined {
  const form = /<form method="post" action="([^"]+)">\s*<input type="hidden" name="token" value="([^"]+)">[\s\S]*?name="pay_amount"[^>]*value="([^"]+)"/.exec(html);
  return form ? { action: (form[1] as string).replace(/&amp;/g, '&'), fields: { token: form[2] as string, pay_amount: form[3] as string } } : undefined;
}

/** The payments listed on the page, without their dates. */
function paymentsOf(html: string): string[] {
  return [...(/id="payments"[^>]*>([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '').matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => (m[1] ?? '').replace(/<[^>]+>/g, '').replace(/ \(.*\)$/, ''));
}

describe('the manage page carries the balance of a registration paying in parts', () => {
  it('shows what the deposit paid, the balance and the next payment, and its form opens a card checkout for exactly the part typed', async () => {
    const id = await depositByCard('manage-balance@example.org');
    const html = await managePage(id);
    expect(textOf(html, 'paid')).toBe('$50.00');
    expect(textOf(html, 'balance-left')).toBe('$70.00');
    expect(textOf(html, 'next-due')).toContain('$70.00');
    expect(html).toContain('id="deposit-paid"');
    // The section stands for the "Pay now by card" button, and each figure is shown once.
    expect(html).not.toContain('id="pay-now"');
    expect(html.match(/id="paid"/g)).toHaveLength(1);

    const form = payForm(html);
    expect(form).toMatchObject({ action: `/registrations/${id}/pay`, fields: { pay_amount: '70.00' } });
    const posted = await fetch(`${harness.server.url}${form?.action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...form?.fields, pay_amount: '30' }).toString(),
    });
    expect(posted.status).toBe(303);
    const checkout = await db()('checkout_sessions').where({ provider_url: posted.headers.get('location') }).first();
    const fee = cardSurcharge(3000, await getCardFeeRate(db()));
    expect(checkout).toMatchObject({ registration_id: id, net_minor: 3000, surcharge_minor: fee, balance_part: true, status: 'OPEN' });
    expect(harness.provider.sessions.get(checkout.provider_session_id)?.amount_total).toBe(3000 + fee);

    await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
    const after = await managePage(id);
    expect(textOf(after, 'paid')).toBe('$80.00');
    expect(textOf(after, 'balance-left')).toBe('$40.00');
    // Each card payment is listed once: the deposit and the part, never the total as well.
    expect(paymentsOf(after)).toEqual(['Card payment: $50.00', 'Card payment: $30.00']);

    // The rest from the same form: PAID, and still each card payment once, never the whole total as one besides.
    const rest = payForm(after);
    expect(rest?.fields.pay_amount).toBe('40.00');
    const last = await fetch(`${harness.server.url}${rest?.action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(rest?.fields).toString(),
    });
    const lastCheckout = await db()('checkout_sessions').where({ provider_url: last.headers.get('location') }).first();
    expect(lastCheckout).toMatchObject({ net_minor: 4000, balance_part: true });
    await harness.provider.deliver('checkout.session.completed', lastCheckout.provider_session_id);
    expect(await db()('registrations').where({ id }).first()).toMatchObject({ status: 'PAID' });
    const settled = await managePage(id);
    expect(paymentsOf(settled)).toEqual(['Card payment: $50.00', 'Card payment: $30.00', 'Card payment: $40.00']);
    expect(textOf(settled, 'balance-left')).toBe('$0.00');
    expect(payForm(settled)).toBeUndefined();
  });

  it('has no pay form once help with the cost takes the balance to 0', async () => {
    const id = await depositByCard('manage-balance-help@example.org');
    expect(payForm(await managePage(id))).toBeDefined();
    const money = moneyFormatter(harness.ctx.config.regional);
    await creditRegistration(harness.ctx, { registration: id, amountMinor: 7000, fund: 'Camp scholarships', actor: 'office' }, money);
    expect(await registrationMoney(db(), id)).toMatchObject({ balanceMinor: 0 });
    const html = await managePage(id);
    expect(textOf(html, 'credited')).toBe('$70.00');
    expect(textOf(html, 'balance-left')).toBe('$0.00');
    expect(payForm(html)).toBeUndefined();
    expect(html).not.toContain('name="pay_amount"');
    expect(html).not.toContain('id="pay-now"');
  });
});
