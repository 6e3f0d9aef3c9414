import { describe, expect, it } from 'vitest';
import { creditRegistration, reverseCredit } from '../../src/office/registrations/credit.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { managePath } from '../../src/payments/manage-link.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useServerWithSink } from '../support/server-fixture.js';
import { FIXED_TEST_NOW } from '../support/test-now.js';

const web = useServerWithSink({ now: FIXED_TEST_NOW, truncate: 'registrations, events, queued_mail, operations_alerts, rate_limits' });
const money = moneyFormatter({ locale: 'en-AU', currency: 'AUD' });

async function page(path: string) {
  const response = await fetch(`${web.server.url}${path}`, { redirect: 'manual', headers: { accept: 'text/html' } });
  return { status: response.status, html: await response.text() };
}

/** The items of the list with this id, tags removed. */
const items = (html: string, id: string) => [...(byId(html, id, false) ?? '').matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => (m[1] ?? '').replace(/<[^>]+>/g, '').trim());

/** The text of an element by id, tags removed. */
function byId(html: string, id: string, text = true): string | undefined {
  const inner = new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</(?:ul|span|dd)>`).exec(html)?.[1];
  return text ? inner?.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim() : inner;
}

describe('the manage page shows help with the cost', () => {
  it('lists the help by fund apart from the payments, and asks only for what is left after it', async () => {
    const ctx = web.context();
    const event = await insertEvent(web.tdb.db);
    const { id } = await insertRegistration(web.tdb.db, ctx.cipher, event.id, {
      email: 'hope@example.org',
      status: 'PENDING',
      line_items: JSON.stringify([{ label: 'Adult — Sam Member', amount: 24000, kind: 'ticket' }]),
      total_minor: 24000,
    });
    const path = managePath(ctx.config.authSecret, { registrationId: id, version: 1 });
    await markRegistrationPaid(ctx, { registration: id, amountMinor: 10000, method: 'bank', partial: true, actor: 'office' }, money);
    const credit = await creditRegistration(ctx, { registration: id, amountMinor: 5000, fund: 'Camp scholarships', actor: 'office' }, money);

    const helped = await page(path);
    expect(helped.status).toBe(200);
    expect(items(helped.html, 'help')).toEqual(['Help from Camp scholarships: $50.00']);
    expect(byId(helped.html, 'payments')).toContain('$100.00');
    expect(byId(helped.html, 'payments')).not.toContain('Camp scholarships');
    // Paying in parts: the balance section (as on the registration page) says what was paid, the help and the rest.
    expect(byId(helped.html, 'paid')).toBe('$100.00');
    expect(byId(helped.html, 'credited')).toBe('$50.00');
    expect(byId(helped.html, 'balance-left')).toBe('$90.00');

    // The rest covered by help: paid, nothing to pay, and no card payment shown that never happened.
    await creditRegistration(ctx, { registration: id, amountMinor: 9000, fund: 'Youth fund', actor: 'office' }, money);
    const settled = await page(path);
    expect(items(settled.html, 'help')).toEqual(['Help from Camp scholarships: $50.00', 'Help from Youth fund: $90.00']);
    expect(byId(settled.html, 'balance-left')).toBe('$0.00');
    expect(settled.html).not.toContain('name="pay_amount"');
    expect(byId(settled.html, 'payments')).not.toMatch(/card/i);

    // A reversed credit is no longer shown as help, and its amount is owed again.
    await reverseCredit(ctx, { registration: id, creditId: credit.creditId, actor: 'office' });
    const reversed = await page(path);
    expect(items(reversed.html, 'help')).toEqual(['Help from Youth fund: $90.00']);
    expect(byId(reversed.html, 'balance-left')).toBe('$50.00');
  });
});
