import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditRegistration, NotCreditableError } from '../../src/office/registrations/credit.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { payNowPath, registrationPath } from '../../src/http/registration-view.js';
import { startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import { setSetting } from '../../src/settings.js';
import { addCardEvent, registerByBank } from '../support/card-event-harness.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(async () => {
  await harness.close();
});

const money = moneyFormatter({ locale: 'en-AU', currency: 'AUD' });
const office = { actor: 'office' };

describe('pay-now and help with the cost', () => {
  it('after help, pay-now opens a checkout for the balance after the help only, and the registration page shows the help and that balance', async () => {
    const now = harness.ctx.clock.now();
    await setSetting(harness.tdb.db, 'bank.accountName', 'Grace Community Church', now);
    await setSetting(harness.tdb.db, 'bank.bsb', '062-000', now);
    await setSetting(harness.tdb.db, 'bank.accountNumber', '1234 5678', now);
    const event = await addCardEvent(harness, 10);
    const id = await registerByBank(harness, event, { name: 'Helped Payer', email: 'helped@example.org' }, 'Guest 1');
    const { totalMinor } = { totalMinor: (await harness.tdb.db('registrations').where({ id }).first<{ total_minor: number }>()).total_minor };
    await creditRegistration(harness.ctx, { registration: id, amountMinor: 2000, fund: 'Camp scholarships', ...office }, money);

    const page = await (await fetch(`${harness.server.url}${registrationPath(harness.ctx.config.authSecret, id, 1)}`)).text();
    expect(page).toContain(`id="credited">${money(2000)}<`);
    expect(page).toContain(`id="balance-left">${money(totalMinor - 2000)}<`);
    expect(page).not.toContain('id="pay-now"');
    const payPage = await fetch(`${harness.server.url}${payNowPath(harness.ctx.config.authSecret, id, 1)}`);
    expect(payPage.status).toBe(200);
    expect(await payPage.text()).toContain(`id="amount">${money(totalMinor - 2000)}<`);

    await startExistingRegistrationCheckout(harness.ctx, { registrationId: id });
    expect(await harness.tdb.db('checkout_sessions').where({ registration_id: id }).select('net_minor', 'balance_part')).toEqual([{ net_minor: totalMinor - 2000, balance_part: true }]);
  });

  it('help is refused while a pay-now checkout for the whole total may still be paid', async () => {
    const event = await addCardEvent(harness, 10);
    const id = await registerByBank(harness, event, { name: 'Paying Payer', email: 'paying@example.org' }, 'Guest 2');
    await startExistingRegistrationCheckout(harness.ctx, { registrationId: id });
    const refused = await creditRegistration(harness.ctx, { registration: id, amountMinor: 2000, fund: 'Camp scholarships', ...office }, money).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(NotCreditableError);
    expect((refused as Error).message).toContain('may still arrive');
    expect(await harness.tdb.db('registration_credits').where({ registration_id: id }).pluck('id')).toEqual([]);
  });
});
