import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { sendEventReminders } from '../../src/jobs/send-reminders.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { registrationMoney } from '../../src/registrations/ledger.js';
import { cardSurcharge } from '../../src/registrations/pricing.js';
import { getCardFeeRate, setSetting } from '../../src/settings.js';
import { registerByBank } from '../support/card-event-harness.js';
import { insertEvent } from '../support/factories.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { fromReferenceNow, referenceNow } from '../support/test-now.js';

// The event's payment reminder to a family that has paid part (a deposit in cash at the office, say) offers the
// card for what is left, as the pay page charges it, instead of sending a card-paying family to a bank transfer.

const smtp = useSmtpSink();
let harness: PaymentsHarness;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: referenceNow(), env: smtp.sink.configEnv(), realMailer: true });
  await setSetting(harness.tdb.db, 'bank.accountName', 'Grace Community Church', referenceNow());
  await setSetting(harness.tdb.db, 'bank.bsb', '062-000', referenceNow());
  await setSetting(harness.tdb.db, 'bank.accountNumber', '1234 5678', referenceNow());
});
afterAll(() => harness.close());

const db = () => harness.tdb.db;
const money = moneyFormatter({ locale: 'en-AU', currency: 'AUD' });

describe('the payment reminder of a registration paid in part', () => {
  it('links the card for the balance left, with its own card fee; the link opens a checkout for exactly that, and paying it settles the registration', async () => {
    const { slug } = await insertEvent(db(), {
      online_payment: true,
      pass_card_fee: true,
      reminder_at: fromReferenceNow({ minutes: -1 }),
      starts_at: fromReferenceNow({ days: 13 }),
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 24000 }] }),
    });
    const event = (await getEventBySlug(db(), slug)) as EventRecord;
    const id = await registerByBank(harness, event, { name: 'Pat Payer', email: 'part@example.org' });
    await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 10000, method: 'cash', partial: true, actor: 'office' }, money);

    expect(await sendEventReminders(harness.ctx, { trigger: 'cli' })).toMatchObject({ outcome: 'ok', sent: 1, paymentReminders: 1 });
    const [reminder] = await smtp.sink.waitFor(1);
    const fee = cardSurcharge(14000, await getCardFeeRate(db()));
    expect(fee).toBeGreaterThan(0);
    expect(reminder?.subject).toBe('Payment reminder: Family Camp');
    expect(reminder?.text).toContain(`${money(14000)} still owing`);
    expect(reminder?.text).toContain(`By card the total is ${money(14000 + fee)}, which includes a ${money(fee)} card processing fee.`);
    expect(reminder?.text).toContain('Or pay by bank transfer');
    const link = /Pay by card: (\S+)/.exec(reminder?.text ?? '')?.[1] ?? '';
    const { pathname, search, searchParams } = new URL(link);
    expect(pathname).toBe(`/registrations/${id}/pay`);

    const page = await fetch(`${harness.server.url}${pathname}${search}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(money(14000 + fee));
    const posted = await fetch(`${harness.server.url}${pathname}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: searchParams.get('token') ?? '' }).toString(),
    });
    expect(posted.status).toBe(303);
    const checkout = await db()('checkout_sessions').where({ provider_url: posted.headers.get('location') }).first();
    expect(checkout).toMatchObject({ registration_id: id, net_minor: 14000, surcharge_minor: fee, balance_part: true });
    expect(harness.provider.sessions.get(checkout.provider_session_id)?.amount_total).toBe(14000 + fee);

    await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
    expect(await db()('registrations').where({ id }).first()).toMatchObject({ status: 'PAID' });
    expect(await registrationMoney(db(), id)).toMatchObject({ balanceMinor: 0, outstandingMinor: 0 });
  });
});
