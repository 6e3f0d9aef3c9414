import { describe, expect, it } from 'vitest';
import { managePath } from '../../src/payments/manage-link.js';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import { axeViolations } from '../support/axe.js';
import { cspViolations, inAMonth, useBrowserStack, withPhonePage } from '../support/browser.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';
import { keepScreenshot } from '../support/screenshots.js';
import { smallTapTargets } from '../support/tap-targets.js';

const pages = useBrowserStack();

const CAMP: EventPricing = {
  tiers: [{ id: 'adult', label: 'Adult', price: 12000 }],
  addons: [
    { id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee', stock: 40 },
    { id: 'tshirt', label: 'T-shirt', price: 1500, per: 'attendee', options: ['S', 'M', 'L'] },
  ],
};

/** A registration of one adult, with a completed card checkout of `paidMinor` named by its PaymentIntent. */
async function cardRegistration(eventId: string, input: { status: 'PAID' | 'PENDING'; paidMinor: number; email: string }) {
  const { cipher, config } = pages.stack.ctx;
  const paymentIntent = `pi_${input.email.replace(/\W/g, '')}`;
  const { id } = await insertRegistration(pages.db, cipher, eventId, {
    email: input.email,
    contact_name: 'Jo Citizen',
    status: input.status,
    payment_method: 'card',
    attendees: JSON.stringify([{ name: 'Jo Citizen', tier: 'adult' }]),
    line_items: JSON.stringify([{ label: 'Adult — Jo Citizen', amount: 12000, kind: 'ticket' }]),
    total_minor: 12000,
    ...(input.status === 'PAID' ? { paid_at: new Date(), payment_intent_id: paymentIntent } : {}),
  });
  const checkout = await insertCheckoutSession(pages.db, cipher, eventId, {
    status: 'COMPLETED',
    registration_id: id,
    payload_enc: null,
    payment_intent_id: paymentIntent,
    net_minor: input.paidMinor,
    balance_part: input.status === 'PENDING',
    completed_at: new Date(),
  });
  return { id, checkoutId: checkout.id, link: `${pages.stack.url}${managePath(config.authSecret, { registrationId: id, version: 1 })}` };
}

describe('money on the manage page, on a phone', () => {
  it('shows the balance of a deposit paid by card, with its pay form', async () => {
    const startsAt = inAMonth();
    const balanceDueAt = new Date(startsAt.getTime() - 10 * 86_400_000).toISOString().slice(0, 10);
    const event = await insertEvent(pages.db, {
      online_payment: true,
      starts_at: startsAt,
      pricing: JSON.stringify(CAMP),
      balance_terms: JSON.stringify({ deposit: { perAttendee: 5000 }, balanceDueAt, minimumPayment: 2000, instalments: null, overdue: 'alert' }),
    });
    const made = await cardRegistration(event.id, { status: 'PENDING', paidMinor: 5000, email: 'deposit-phone@example.org' });
    const today = new Date().toISOString().slice(0, 10);
    await pages.db('registration_schedules').insert([
      { registration_id: made.id, seq: 0, due_on: today, settled_target_minor: 5000, choice: 'deposit' },
      { registration_id: made.id, seq: 1, due_on: balanceDueAt, settled_target_minor: 12000, choice: 'deposit' },
    ]);
    await pages.db('registration_payments').insert({
      registration_id: made.id,
      amount_minor: 5000,
      method: 'card',
      checkout_session_id: made.checkoutId,
      payment_intent_id: 'pi_depositphoneexampleorg',
      recorded_by: 'card provider',
      recorded_at: new Date(),
    });

    await withPhonePage(pages.browser, true, async (page) => {
      const violations = cspViolations(page);
      await page.goto(made.link);
      expect(await page.locator('#paid').textContent()).toBe('$50.00');
      expect(await page.locator('#balance-left').textContent()).toBe('$70.00');
      expect(await page.locator('#next-due').textContent()).toContain('$70.00');
      expect(await page.locator('#pay-amount').inputValue()).toBe('70.00');
      expect(await axeViolations(page)).toEqual([]);
      expect(await smallTapTargets(page)).toEqual([]);
      expect(violations).toEqual([]);
      await keepScreenshot(page, 'manage-page-balance');
    });
  });

  it('adds a T-shirt of a size and a bus seat to a paid registration, and lands on the pay page for exactly what they cost', async () => {
    const event = await insertEvent(pages.db, { online_payment: true, starts_at: inAMonth(), pricing: JSON.stringify(CAMP) });
    const made = await cardRegistration(event.id, { status: 'PAID', paidMinor: 12000, email: 'extras-phone@example.org' });

    await withPhonePage(pages.browser, true, async (page) => {
      const violations = cspViolations(page);
      await page.goto(made.link);
      expect(await page.locator('#extras-none').textContent()).toBe('No extras chosen yet.');
      await page.locator('#add-extras > summary').click();
      await page.locator('#extra-1-tshirt').selectOption('M');
      await page.getByLabel('Bus seat').check();
      expect(await axeViolations(page)).toEqual([]);
      expect(await smallTapTargets(page)).toEqual([]);
      await keepScreenshot(page, 'manage-page-add-extras');

      await page.locator('#add-extras-submit').click();
      await page.waitForURL(`${pages.stack.url}/registrations/${made.id}/pay?**`);
      expect(new URL(page.url()).searchParams.get('amount')).toBe('3500');
      expect(await page.locator('body').textContent()).toContain('$35.00');
      expect(await axeViolations(page)).toEqual([]);
      await keepScreenshot(page, 'pay-page-for-extras');
      expect(violations).toEqual([]);
    });
    expect(await pages.db('registrations').where({ id: made.id }).first('status', 'total_minor')).toEqual({ status: 'PENDING', total_minor: 15500 });
  });
});
