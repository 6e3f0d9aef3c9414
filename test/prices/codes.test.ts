import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { createCode, disableCode, listCodes } from '../../src/office/codes.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { CODE_REFUSED_MESSAGE, CodeRefusedError } from '../../src/registrations/codes.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { registerForEvent } from '../../src/signup/register.js';
import { CODE_GUESSES_PER_WINDOW } from '../../src/signup/code-guesses.js';
import { localDay } from '../../src/local-time.js';
import { releaseUnpaidHolds } from '../../src/jobs/unpaid-holds.js';
import { insertEvent } from '../support/factories.js';
import { postRegistrationForm } from '../support/form-post.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { closeGate } from '../support/race-gate.js';
import { fromReferenceNow, referenceNow } from '../support/test-now.js';

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(async () => {
  await harness.close();
});
beforeEach(async () => {
  harness.ctx.clock.set(referenceNow());
  await harness.tdb.db('rate_limits').delete();
});

const TIERS = [
  { id: 'adult', label: 'Adult', price: 12000 },
  { id: 'child', label: 'Child', price: 6000 },
  { id: 'leader', label: 'Leader', price: 9000, hidden: true },
];

async function camp(pricing: Record<string, unknown> = {}): Promise<EventRecord> {
  const { slug } = await insertEvent(harness.tdb.db, { capacity: 50, online_payment: true, pricing: JSON.stringify({ tiers: TIERS, ...pricing }) });
  return (await getEventBySlug(harness.tdb.db, slug)) as EventRecord;
}

const code = (event: EventRecord, text: string, terms: Partial<Parameters<typeof createCode>[1]> = {}) =>
  createCode(harness.ctx, { eventSlug: event.slug, code: text, actor: 'office', ...terms });

const post = (slug: string, fields: Record<string, string | string[]>) => postRegistrationForm(harness.server.url, slug, fields);

const form = (email: string, tiers: string[], extra: Record<string, string> = {}) => ({
  name: 'Code Parent',
  email,
  payment: 'bank',
  attendee_name: tiers.map((_, index) => `Family Member ${index}`),
  attendee_tier: tiers,
  ...extra,
});

const family = (n: number, tiers: string[], codeText?: string) => ({
  contact: { name: `Parent ${n}`, email: `code-parent-${n}@example.org` },
  attendees: tiers.map((tier, index) => ({ name: `Member ${n}-${index}`, tier })),
  family: false,
  payment: 'bank' as const,
  ...(codeText ? { code: codeText } : {}),
});

async function registrationOf(email: string) {
  const rows = await harness.tdb.db('registrations').select('*');
  return rows.find((row) => harness.ctx.cipher.decrypt(row.contact_email_enc) === email);
}

const usesOf = async (event: EventRecord, text: string) => (await listCodes(harness.ctx, event.slug)).codes.find((c) => c.code === text);

describe('codes on the registration form', () => {
  it('a wrong code gets one message whatever the reason, and says nothing of the codes the event has', async () => {
    const event = await camp();
    const yesterday = localDay(fromReferenceNow({ days: -1 }), 'Australia/Sydney');
    await code(event, 'OFFCODE', { percent: 10 });
    await disableCode(harness.ctx, { eventSlug: event.slug, code: 'offcode', actor: 'office' });
    await code(event, 'PASTCODE', { percent: 10, validUntil: yesterday });
    await code(event, 'ONCECODE', { percent: 10, maxUses: 1 });
    await code(event, 'KIDSCODE', { percent: 10, tiers: ['child'] });
    expect((await registerForEvent(harness.ctx, event, family(1, ['adult'], 'ONCECODE'))).kind).toBe('registered');

    const answers: string[] = [];
    for (const [n, text] of ['NOSUCHCODE', 'OFFCODE', 'PASTCODE', 'ONCECODE', 'KIDSCODE', 'not a code!'].entries()) {
      const response = await post(event.slug, form(`wrong-${n}@example.org`, ['adult'], { code: text }));
      expect(response.status).toBe(400);
      const page = await response.text();
      expect(page).toContain(CODE_REFUSED_MESSAGE);
      // The same page but for what was typed and each response's own CSP nonce.
      answers.push(page.replaceAll(text, 'CODE').replace(/wrong-\d@/g, 'wrong@').replace(/nonce="[^"]*"/g, 'nonce'));
      expect(await registrationOf(`wrong-${n}@example.org`)).toBeUndefined();
    }
    expect(new Set(answers).size).toBe(1);
  });

  it('codes are case-insensitive, and a percent, an amount or a price applies once for the registration, not per person', async () => {
    const event = await camp();
    await code(event, 'Tenoff', { percent: 10 });
    await code(event, 'TWENTY', { amount: 2000 });
    await code(event, 'KIDPRICE', { prices: { child: 1000 } });

    expect((await post(event.slug, form('percent@example.org', ['adult', 'child', 'child'], { code: 'TENOFF' }))).status).toBe(303);
    expect(await registrationOf('percent@example.org')).toMatchObject({ total_minor: 21600, code_discount_minor: 2400 });
    expect((await post(event.slug, form('amount@example.org', ['adult', 'child', 'child'], { code: 'twenty' }))).status).toBe(303);
    expect(await registrationOf('amount@example.org')).toMatchObject({ total_minor: 22000, code_discount_minor: 2000 });
    expect((await post(event.slug, form('price@example.org', ['adult', 'child', 'child'], { code: 'KidPrice' }))).status).toBe(303);
    expect(await registrationOf('price@example.org')).toMatchObject({ total_minor: 14000, code_discount_minor: 10000 });
    const amount = await registrationOf('amount@example.org');
    expect(amount.line_items).toEqual([{ label: 'Registration (code TWENTY)', amount: 22000, kind: 'registration' }]);
  });

  it('a code applies before the event discount and after the family waiver, and its discount is once for the registration', async () => {
    const event = await camp({ familyWaiver: { maxChargedTickets: 2 }, discount: { percent: 10 } });
    await code(event, 'TWENTY', { amount: 2000 });
    const page = await post(event.slug, { ...form('ordered@example.org', ['adult', 'adult', 'child'], { code: 'TWENTY' }), family: 'on' });
    expect(page.status).toBe(303);
    // Waiver: the two adults (24000); the code: 2000 off (22000); the event: 10% off (19800). Without the code: 21600.
    expect(await registrationOf('ordered@example.org')).toMatchObject({ total_minor: 19800, code_discount_minor: 1800 });
  });

  it('a hidden tier is not offered or accepted without the code that reveals it, and is with it', async () => {
    const event = await camp();
    await code(event, 'LEADERS', { reveals: 'leader', prices: { leader: 0 } });
    const eventPage = await (await fetch(`${harness.server.url}/events/${event.slug}`)).text();
    expect(eventPage.toLowerCase()).not.toContain('leader');

    const refused = await post(event.slug, form('no-code-leader@example.org', ['leader']));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('Attendee 1 ticket: choose one of the ticket types');
    const unknown = await post(event.slug, form('no-such-tier@example.org', ['nosuchtier']));
    expect(await unknown.text()).toContain('Attendee 1 ticket: choose one of the ticket types');

    const wrongCode = await post(event.slug, form('wrong-code-leader@example.org', ['leader'], { code: 'GUESS' }));
    expect(await wrongCode.text()).toContain(CODE_REFUSED_MESSAGE);

    expect((await post(event.slug, form('leader@example.org', ['leader'], { code: 'leaders' }))).status).toBe(303);
    expect(await registrationOf('leader@example.org')).toMatchObject({ total_minor: 0, status: 'PAID', payment_method: 'free' });
  });

  it('the page asks "Have a code?" only while the event has a code a family could use: none made, or all disabled, and the field is not there', async () => {
    const event = await camp();
    const page = async () => (await fetch(`${harness.server.url}/events/${event.slug}`)).text();
    expect(await page()).not.toContain('id="code-details"');
    await code(event, 'SPRING', { percent: 10 });
    expect(await page()).toContain('id="code-details"');
    await disableCode(harness.ctx, { eventSlug: event.slug, code: 'spring', actor: 'office' });
    expect(await page()).not.toContain('id="code-details"');
    // A link that carries a code still shows what became of it.
    expect(await (await fetch(`${harness.server.url}/events/${event.slug}?code=SPRING`)).text()).toContain(CODE_REFUSED_MESSAGE);
  });

  it('"Have a code?" applies a code on the page: its hidden tier is offered, its note said, the live total priced with it, and the form carries it', async () => {
    const event = await camp();
    await code(event, 'LEADERS', { reveals: 'leader', prices: { leader: 4500 } });
    const applied = await (await fetch(`${harness.server.url}/events/${event.slug}?code=leaders`)).text();
    expect(applied).toContain('Code LEADERS applied: Leader tickets at $45.00, Leader tickets can be chosen. It applies once to this registration.');
    expect(applied).toContain('Leader ($90.00)');
    expect(applied).toContain('<input type="hidden" name="code" value="leaders">');
    expect(applied.replaceAll('&quot;', '"')).toContain('"code":{"code":"LEADERS","prices":{"leader":4500},"reveals":"leader"}');

    const wrong = await (await fetch(`${harness.server.url}/events/${event.slug}?code=LEADERZ`)).text();
    expect(wrong).toContain(CODE_REFUSED_MESSAGE);
    expect(wrong.toLowerCase()).not.toContain('leader (');
    expect(await harness.tdb.db('rate_limits').where({ bucket: 'code-guesses' }).first()).toMatchObject({ hits: 1 });
  });

  it('codes guessed wrong are limited per connection: past the limit any code is refused until the window ends, while registering without one still works', async () => {
    const event = await camp();
    await code(event, 'REALCODE', { percent: 10 });
    for (let n = 0; n < CODE_GUESSES_PER_WINDOW; n++) {
      // The form's own limit is 10 posts a minute: the guesses are spread over minutes, as a patient guesser would.
      if (n % 5 === 0) harness.ctx.clock.advance(61_000);
      expect((await post(event.slug, form(`guess-${n}@example.org`, ['adult'], { code: `GUESS${n}` }))).status).toBe(400);
    }
    harness.ctx.clock.advance(61_000);
    const limited = await post(event.slug, form('right-code-too-late@example.org', ['adult'], { code: 'REALCODE' }));
    expect(limited.status).toBe(429);
    expect(await limited.text()).toContain('Too many codes that could not be used were tried from this connection');
    expect((await post(event.slug, form('no-code@example.org', ['adult']))).status).toBe(303);

    harness.ctx.clock.advance(15 * 60_000);
    expect((await post(event.slug, form('right-code-later@example.org', ['adult'], { code: 'REALCODE' }))).status).toBe(303);
  });
});

describe('uses of a code, counted live under the event lock', () => {
  // Protected by the event's row lock (lockEventForSeats), under which the code's uses are counted: without it,
  // both have counted no use by the time the gate (at the registration's insert) opens, and both take the last use.
  it('two families racing for the last use of a code: one registers with it, the other is refused', async () => {
    const event = await camp();
    await code(event, 'LASTONE', { amount: 5000, maxUses: 1 });
    const gate = await closeGate(harness.tdb.db, ['registrations']);
    const racers = [1, 2].map((n) => gate.started(registerForEvent(harness.ctx, event, family(20 + n, ['adult'], 'LASTONE'))));
    await gate.waiting(2);
    await gate.open();
    const results = await Promise.allSettled(racers);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = results.flatMap((r) => (r.status === 'rejected' ? [r.reason] : []));
    expect(refused).toHaveLength(1);
    expect(refused[0]).toBeInstanceOf(CodeRefusedError);
    expect((refused[0] as CodeRefusedError).reason).toBe('used_up');
    expect(await usesOf(event, 'LASTONE')).toMatchObject({ uses: 1, discountedMinor: 5000, state: 'used up' });
  });

  it('an open card checkout holds a use; its expiry gives it back; a cancelled registration gives its use back once', async () => {
    const event = await camp();
    await code(event, 'SINGLE', { amount: 3000, maxUses: 1 });
    expect((await post(event.slug, form('card-holds@example.org', ['adult'], { code: 'SINGLE', payment: 'card' }))).status).toBe(303);
    const checkout = await harness.tdb.db('checkout_sessions').where({ event_id: event.id }).first();
    expect(checkout).toMatchObject({ net_minor: 9000, status: 'OPEN' });
    expect(checkout.code_id).not.toBeNull();
    expect(await usesOf(event, 'SINGLE')).toMatchObject({ uses: 1 });
    expect((await post(event.slug, form('while-held@example.org', ['adult'], { code: 'SINGLE' }))).status).toBe(400);

    harness.ctx.clock.advance(32 * 60_000);
    expect(await usesOf(event, 'SINGLE')).toMatchObject({ uses: 0 });
    expect((await post(event.slug, form('after-expiry@example.org', ['adult'], { code: 'SINGLE' }))).status).toBe(303);
    const pending = await registrationOf('after-expiry@example.org');
    expect(pending).toMatchObject({ status: 'PENDING', total_minor: 9000 });

    await cancelRegistration(harness.ctx, { registration: pending.id, actor: 'office' });
    await expect(cancelRegistration(harness.ctx, { registration: pending.id, actor: 'office' })).rejects.toThrow();
    expect(await usesOf(event, 'SINGLE')).toMatchObject({ uses: 0, discountedMinor: 0 });
    expect((await post(event.slug, form('after-cancel@example.org', ['adult'], { code: 'SINGLE' }))).status).toBe(303);
    expect(await usesOf(event, 'SINGLE')).toMatchObject({ uses: 1, discountedMinor: 3000 });

    // The expired checkout paid late, the code used up meanwhile: kept with an alert, never a second use.
    const delivered = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', checkout.provider_session_id));
    expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'unfulfilled' });
    const [alert] = await harness.tdb.db('operations_alerts').where({ checkout_session_id: checkout.id });
    expect(alert.reason).toContain('the code SINGLE had no use left');
    expect(await usesOf(event, 'SINGLE')).toMatchObject({ uses: 1 });
  });

  it('an unpaid registration whose hold is released gives its use back', async () => {
    const { slug } = await insertEvent(harness.tdb.db, { capacity: 50, unpaid_hold_days: 1, pricing: JSON.stringify({ tiers: TIERS }) });
    const event = (await getEventBySlug(harness.tdb.db, slug)) as EventRecord;
    await code(event, 'HELD', { amount: 1000, maxUses: 1 });
    expect((await registerForEvent(harness.ctx, event, family(40, ['adult'], 'held'))).kind).toBe('registered');
    expect(await usesOf(event, 'HELD')).toMatchObject({ uses: 1, state: 'used up' });
    harness.ctx.clock.advance(3 * 24 * 3600_000);
    expect(await releaseUnpaidHolds(harness.ctx, harness.ctx.clock.now())).toBe(1);
    expect(await usesOf(event, 'HELD')).toMatchObject({ uses: 0, discountedMinor: 0, state: 'active' });
  });

  it('a card payment with a code charges the discounted amount, which the webhook checks exactly; a refund or a dispute gives the use back', async () => {
    const event = await camp();
    await code(event, 'CARDCODE', { percent: 25, maxUses: 2 });
    const paid: string[] = [];
    for (const email of ['refunded@example.org', 'disputed@example.org']) {
      expect((await post(event.slug, form(email, ['adult'], { code: 'CARDCODE', payment: 'card' }))).status).toBe(303);
      const checkout = await harness.tdb.db('checkout_sessions').where({ event_id: event.id, status: 'OPEN' }).first();
      expect(harness.provider.sessions.get(checkout.provider_session_id)).toMatchObject({ amount_total: 9000 });
      const done = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', checkout.provider_session_id));
      expect(JSON.parse(done.body)).toMatchObject({ outcome: 'completed' });
      expect(await registrationOf(email)).toMatchObject({ status: 'PAID', total_minor: 9000, code_discount_minor: 3000 });
      paid.push(checkout.provider_session_id);
    }
    expect(await usesOf(event, 'CARDCODE')).toMatchObject({ uses: 2, state: 'used up' });

    await harness.provider.deliverEvent(harness.provider.buildEvent('charge.refunded', paid[0] as string));
    expect(await registrationOf('refunded@example.org')).toMatchObject({ status: 'CANCELLED' });
    expect(await usesOf(event, 'CARDCODE')).toMatchObject({ uses: 1 });
    await harness.provider.deliverEvent(harness.provider.buildEvent('charge.dispute.created', paid[1] as string));
    expect(await registrationOf('disputed@example.org')).toMatchObject({ status: 'CANCELLED' });
    expect(await usesOf(event, 'CARDCODE')).toMatchObject({ uses: 0, state: 'active' });
  });

  it('a charge that is not the discounted amount is kept with an amount-mismatch alert, not registered', async () => {
    const event = await camp();
    await code(event, 'HALF', { percent: 50 });
    expect((await post(event.slug, form('mismatch@example.org', ['adult'], { code: 'HALF', payment: 'card' }))).status).toBe(303);
    const checkout = await harness.tdb.db('checkout_sessions').where({ event_id: event.id }).first();
    expect(checkout.net_minor).toBe(6000);
    const done = await harness.provider.deliverEvent(harness.provider.buildEvent('checkout.session.completed', checkout.provider_session_id, { amount_total: 12000 }));
    expect(JSON.parse(done.body)).toMatchObject({ outcome: 'unfulfilled' });
    expect(await harness.tdb.db('operations_alerts').where({ checkout_session_id: checkout.id }).first()).toMatchObject({ kind: 'amount_mismatch' });
    expect(await registrationOf('mismatch@example.org')).toBeUndefined();
  });
});

describe('automatic discounts through the form', () => {
  it('a sibling rule and a family maximum apply to a family registration as the page says them, once', async () => {
    const event = await camp({ siblingDiscounts: [{ tier: 'child', from: 3, price: 5000 }], familyMaximum: 40000 });
    const page = await (await fetch(`${harness.server.url}/events/${event.slug}`)).text();
    expect(page).toContain('In one registration, the 3rd Child ticket and later: $50.00 each. A family pays at most $400.00 for its tickets.');

    // 12000 + 12000 + 6000 + 6000 + 5000 (the third child) = 41000, capped at 40000 for one household.
    expect((await post(event.slug, { ...form('siblings@example.org', ['adult', 'adult', 'child', 'child', 'child']), family: 'on' })).status).toBe(303);
    expect(await registrationOf('siblings@example.org')).toMatchObject({ total_minor: 40000 });
    // Not one household: the third child's price, no maximum.
    expect((await post(event.slug, form('not-family@example.org', ['adult', 'adult', 'child', 'child', 'child']))).status).toBe(303);
    expect(await registrationOf('not-family@example.org')).toMatchObject({ total_minor: 41000 });
  });
});
