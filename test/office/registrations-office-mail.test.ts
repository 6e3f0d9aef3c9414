import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { addRegistration } from '../../src/office/registrations/add.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { resendRegistrationMail } from '../../src/office/registrations/resend.js';
import { startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import { setSetting } from '../../src/settings.js';
import { addCardEvent, registerByBank } from '../support/card-event-harness.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { queuedMessages } from '../support/webhook-events.js';

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness();
  const now = harness.ctx.clock.now();
  await setSetting(harness.tdb.db, 'bank.accountName', 'Grace Community Church', now);
  await setSetting(harness.tdb.db, 'bank.bsb', '062-000', now);
  await setSetting(harness.tdb.db, 'bank.accountNumber', '1234 5678', now);
});
afterAll(() => harness.close());

const money = (minor: number) => moneyFormatter({ locale: 'en-AU', currency: 'AUD' })(minor);
const office = { actor: 'office' };

const liveEvent = () => addCardEvent(harness);
const bankRegistration = (event: EventRecord, email: string) => registerByBank(harness, event, { name: 'Bank Payer', email });

const confirmationsTo = async (email: string) => (await queuedMessages(harness.ctx, 'registration-confirmation')).filter((m) => m.to.includes(email));

describe('the confirmations the office sends', () => {
  it('a resent confirmation after a part-payment asks for the balance, says what was received, and its pay-now link opens a checkout for the balance alone', async () => {
    const email = 'part-paid@example.org';
    const id = await bankRegistration(await liveEvent(), email);
    await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 5000, method: 'cash', partial: true, ...office }, money);

    await resendRegistrationMail(harness.ctx, { registration: id, ...office });

    const resent = (await confirmationsTo(email)).at(-1);
    expect(resent?.text).toContain('please pay $70.00 to confirm it');
    expect(resent?.text).toContain('Received so far: $50.00');
    expect(resent?.text).toContain('BSB: 062-000');
    const link = new URL(/Pay now by card: (\S+)/.exec(resent?.text ?? '')?.[1] ?? 'http://none/');
    expect(link.pathname).toBe(`/registrations/${id}/pay`);
    const posted = await fetch(`${harness.server.url}${link.pathname}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: link.searchParams.get('token') ?? '' }).toString(),
    });
    expect(posted.status).toBe(303);
    const checkout = await harness.tdb.db('checkout_sessions').where({ provider_url: posted.headers.get('location') }).first();
    expect(checkout).toMatchObject({ registration_id: id, net_minor: 7000, balance_part: true });
  });

  it('a resent confirmation of a part-paid registration once the event has started has no card link: the pay page would send the family to the door', async () => {
    const email = 'part-paid-late@example.org';
    const event = await liveEvent();
    const id = await bankRegistration(event, email);
    await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 5000, method: 'cash', partial: true, ...office }, money);
    const before = harness.ctx.clock.now();
    harness.ctx.clock.set(new Date(event.startsAt.getTime() + 60_000));
    try {
      await resendRegistrationMail(harness.ctx, { registration: id, ...office });
    } finally {
      harness.ctx.clock.set(before);
    }
    const resent = (await confirmationsTo(email)).at(-1);
    expect(resent?.text).toContain('Received so far: $50.00');
    expect(resent?.text).toContain('BSB: 062-000');
    expect(resent?.text).not.toContain('Pay now by card');
  });

  it('a resent confirmation while a card payment may still arrive asks for nothing: no bank details, no pay-now link', async () => {
    const email = 'paying-by-card@example.org';
    const id = await bankRegistration(await liveEvent(), email);
    await startExistingRegistrationCheckout(harness.ctx, { registrationId: id });

    await resendRegistrationMail(harness.ctx, { registration: id, ...office });

    const resent = (await confirmationsTo(email)).at(-1);
    expect(resent?.text).toContain('A card payment for it is being processed');
    expect(resent?.text).not.toContain('please pay');
    expect(resent?.text).not.toContain('BSB');
    expect(resent?.text).not.toContain('Pay now by card');
  });

  it("the office is not held to the public form's hourly limit per address: every registration it adds and every resend is emailed", async () => {
    const event = await liveEvent();
    const email = 'office-family@example.org';
    const added = [];
    for (let i = 0; i < 5; i++) {
      added.push(
        await addRegistration(harness.ctx, {
          eventSlug: event.slug,
          contact: { name: `Family Member ${i}`, email },
          attendees: [{ name: `Family Member ${i}`, tier: 'adult' }],
          family: false,
          paid: 'none',
          overCapacity: false,
          ...office,
        }),
      );
    }
    await resendRegistrationMail(harness.ctx, { registration: added[0]!.registrationId, ...office });
    expect(await confirmationsTo(email)).toHaveLength(6);
  });
});
