import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { getEventBySlug } from '../../src/office/events.js';
import { registerForEvent } from '../../src/signup/register.js';
import { verifyRegistrationToken } from '../../src/payments/links.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';
import { queuedMessages } from '../support/webhook-events.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const clock = new FixedClock(new Date('2026-11-22T01:00:00Z'));

describe('registration confirmations', () => {
  it('a bank-transfer registration queues an email with the bank details, its reference and a pay-now link when card payment is possible', async () => {
    const ctx = createTestContext({ db: tdb.db, clock, env: { PSP_SECRET_KEY: 'sk_test_x', PSP_WEBHOOK_SECRET: 'whsec_x' } });
    for (const [key, value] of [['bank.accountName', 'Grace Church'], ['bank.bsb', '062-000'], ['bank.accountNumber', '1234 5678']] as const) {
      await setSetting(tdb.db, key, value, clock.now());
    }
    const { slug } = await insertEvent(tdb.db, { online_payment: true });
    const event = (await getEventBySlug(tdb.db, slug))!;
    const outcome = await registerForEvent(ctx, event, {
      contact: { name: 'Ruth <b>Campbell</b>', email: 'ruth@example.org' },
      attendees: [{ name: 'Ruth', tier: 'adult' }],
      family: false,
      payment: 'bank',
    });
    expect(outcome).toMatchObject({ kind: 'registered', status: 'PENDING', method: 'bank' });
    const id = outcome.kind === 'registered' ? outcome.registrationId : '';
    const [message] = await queuedMessages(ctx, 'registration-confirmation');
    expect(message?.to).toEqual(['ruth@example.org']);
    expect(message?.subject).toBe('Registration received: Family Camp');
    expect(message?.text).toContain('BSB: 062-000');
    expect(message?.text).toContain(`Reference: ${paymentReference(id)}`);
    expect(message?.html).toContain('Ruth &lt;b&gt;Campbell&lt;/b&gt;');
    const link = /Pay now by card: (\S+)/.exec(message?.text ?? '')?.[1] ?? '';
    expect(link.startsWith(`http://127.0.0.1:3000/registrations/${id}/pay?token=`)).toBe(true);
    expect(verifyRegistrationToken(ctx.config.authSecret, id, 1, new URL(link).searchParams.get('token') ?? '')).toBe(true);
  });

  it('a bank-transfer registration whose card total would be below the provider\'s minimum gets no pay-now link, the card fee counted', async () => {
    const ctx = createTestContext({ db: tdb.db, clock, env: { PSP_SECRET_KEY: 'sk_test_x', PSP_WEBHOOK_SECRET: 'whsec_x' } });
    const tiers = (price: number) => JSON.stringify({ tiers: [{ id: 'adult', label: 'Candle', price }] });
    // $0.40 alone is below AUD's $0.50; $0.20 plus the default card fee (1.7% + 30) is $0.50.
    for (const [pricing, passFee, linked] of [[tiers(40), false, false], [tiers(20), true, true], [tiers(50), false, true]] as const) {
      const { slug } = await insertEvent(tdb.db, { online_payment: true, pass_card_fee: passFee, pricing });
      const event = (await getEventBySlug(tdb.db, slug))!;
      const email = `candle-${slug}@example.org`;
      await registerForEvent(ctx, event, { contact: { name: 'Ruth', email }, attendees: [{ name: 'Ruth', tier: 'adult' }], family: false, payment: 'bank' });
      const mine = (await queuedMessages(ctx, 'registration-confirmation')).find((m) => m.to.includes(email));
      expect(mine, pricing).toBeDefined();
      expect(mine?.text?.includes('Pay now by card'), `${pricing} pass fee ${passFee}`).toBe(linked);
    }
  });

  it('speaks of "your places" for several attendees and "your place" for one', async () => {
    const ctx = createTestContext({ db: tdb.db, clock });
    const { slug } = await insertEvent(tdb.db);
    const event = (await getEventBySlug(tdb.db, slug))!;
    const register = (email: string, names: string[]) =>
      registerForEvent(ctx, event, { contact: { name: names[0] ?? '', email }, attendees: names.map((name) => ({ name, tier: 'adult' })), family: false, payment: 'bank' });
    await register('pair@example.org', ['Ann Pair', 'Bob Pair']);
    await register('solo@example.org', ['Cy Solo']);
    const textTo = async (email: string) => (await queuedMessages(ctx, 'registration-confirmation')).find((m) => m.to.includes(email))?.text ?? '';
    expect(await textTo('pair@example.org')).toMatch(/Your places are held; please pay \$\d+\.\d\d to confirm them\./);
    expect(await textTo('solo@example.org')).toMatch(/Your place is held; please pay \$\d+\.\d\d to confirm it\./);
  });

  it('a free registration is PAID at once and its email says there is nothing to pay', async () => {
    const ctx = createTestContext({ db: tdb.db, clock });
    const { slug } = await insertEvent(tdb.db, { pricing: JSON.stringify({ tiers: [{ id: 'free', label: 'Free entry', price: 0 }] }) });
    const event = (await getEventBySlug(tdb.db, slug))!;
    const outcome = await registerForEvent(ctx, event, {
      contact: { name: 'Sam', email: 'sam@example.org' },
      attendees: [{ name: 'Sam', tier: 'free' }],
      family: false,
      payment: 'bank',
    });
    expect(outcome).toMatchObject({ kind: 'registered', status: 'PAID', method: 'free' });
    const messages = await queuedMessages(ctx, 'registration-confirmation');
    const mine = messages.find((m) => m.to.includes('sam@example.org'));
    expect(mine?.subject).toBe('Registration confirmed: Family Camp');
    expect(mine?.text).toContain('There is nothing to pay.');
    expect(mine?.text).not.toContain('Pay now');
  });

  it('a second registration for the same event from the same address is told, in its own email only, of the first: do not pay twice', async () => {
    const ctx = createTestContext({ db: tdb.db, clock });
    const { slug } = await insertEvent(tdb.db, { ends_at: new Date('2026-12-07T04:00:00Z') });
    const event = (await getEventBySlug(tdb.db, slug))!;
    const register = (email: string) =>
      registerForEvent(ctx, event, { contact: { name: 'Ruth', email }, attendees: [{ name: 'Ruth', tier: 'adult' }], family: false, payment: 'bank' });
    const first = await register('twice@example.org');
    const second = await register('Twice@Example.org');
    await register('someone-else@example.org');
    const firstId = first.kind === 'registered' ? first.registrationId : '';
    const secondId = second.kind === 'registered' ? second.registrationId : '';

    const messages = (await queuedMessages(ctx, 'registration-confirmation')).filter((m) => m.subject === 'Registration received: Family Camp');
    const toFirst = messages.find((m) => m.text.includes(`Reference: ${paymentReference(firstId)}`));
    const toSecond = messages.find((m) => m.text.includes(`Reference: ${paymentReference(secondId)}`));
    expect(toFirst?.text).not.toContain('also registered');
    expect(toSecond?.to).toEqual(['Twice@Example.org']);
    expect(toSecond?.text).toContain(`This email address also registered for Family Camp before: ${paymentReference(firstId)}.`);
    expect(toSecond?.text).toContain('please do not pay for it twice');
    expect(toSecond?.html).toContain(`<strong>${paymentReference(firstId)}</strong>`);
    expect(messages.find((m) => m.to.includes('someone-else@example.org'))?.text).not.toContain('also registered');
    // The event ends: its confirmation says from when to when, as the reminder will.
    expect(toSecond?.text).toMatch(/Saturday,? 5 December 2026 at 7:00\spm AEDT\s?–\s?Monday,? 7 December 2026 at 3:00\spm AEDT/);

    // Once the first is cancelled, a new registration from that address has nothing to be told.
    await tdb.db('registrations').where({ id: firstId }).update({ status: 'CANCELLED', cancelled_at: clock.now(), cancel_reason: 'office' });
    await tdb.db('registrations').where({ id: secondId }).update({ status: 'CANCELLED', cancelled_at: clock.now(), cancel_reason: 'office' });
    const third = await register('twice@example.org');
    const thirdId = third.kind === 'registered' ? third.registrationId : '';
    const toThird = (await queuedMessages(ctx, 'registration-confirmation')).find((m) => m.text.includes(`Reference: ${paymentReference(thirdId)}`));
    expect(toThird?.text).not.toContain('also registered');
  });
});
