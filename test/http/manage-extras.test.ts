import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { listBalances } from '../../src/office/registrations/balances.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { describeHistoryEntry } from '../../src/office/registrations/history-words.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { showRegistration } from '../../src/office/registrations/show.js';
import { managePath } from '../../src/payments/manage-link.js';
import { reconcileWithProvider } from '../../src/payments/reconcile/run.js';
import type { EventPricing } from '../../src/registrations/event-pricing.js';
import { registrationMoney } from '../../src/registrations/ledger.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { cardSurcharge } from '../../src/registrations/pricing.js';
import { getCardFeeRate } from '../../src/settings.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';
import { postRegistrationForm } from '../support/form-post.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { closeGate } from '../support/race-gate.js';
import { fromReferenceNow, referenceNow } from '../support/test-now.js';

const smtp = useSmtpSink();
let harness: PaymentsHarness;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: referenceNow(), env: smtp.sink.configEnv(), realMailer: true });
});
afterAll(() => harness.close());
beforeEach(async () => {
  harness.ctx.clock.set(referenceNow());
  await db()('rate_limits').del();
});

const db = () => harness.tdb.db;
const money = moneyFormatter({ locale: 'en-AU', currency: 'AUD' });

function camp(busStock = 40): EventPricing {
  return {
    tiers: [
      { id: 'adult', label: 'Adult', price: 12000 },
      { id: 'child', label: 'Child', price: 6000 },
    ],
    addons: [
      { id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee', stock: busStock, tiers: ['adult'] },
      { id: 'tshirt', label: 'T-shirt', price: 1500, per: 'attendee', options: ['S', 'M', 'L'], maxPerAttendee: 2 },
    ],
  };
}

async function campEvent(options: { busStock?: number; passCardFee?: boolean } = {}) {
  return insertEvent(db(), {
    online_payment: true,
    pass_card_fee: options.passCardFee ?? false,
    starts_at: fromReferenceNow({ days: 40 }),
    pricing: JSON.stringify(camp(options.busStock)),
  });
}

/** Registers through the form by card and pays the whole total at the provider: a PAID registration of the older shape. */
async function paidByCard(slug: string, email: string, fields: Record<string, string> = {}): Promise<{ id: string; checkoutId: string; paymentIntentId: string }> {
  const posted = await postRegistrationForm(harness.server.url, slug, { name: 'Pat Parent', email, attendee_name: 'Ruth Parent', attendee_tier: 'adult', payment: 'card', ...fields });
  expect(posted.status).toBe(303);
  const checkout = await db()('checkout_sessions').where({ provider_url: posted.headers.get('location') }).first();
  await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
  const registration = await db()('registrations').where({ id: (await db()('checkout_sessions').where({ id: checkout.id }).first()).registration_id }).first();
  expect(registration.status).toBe('PAID');
  return { id: registration.id, checkoutId: checkout.id, paymentIntentId: registration.payment_intent_id };
}

async function bankRegistration(eventId: string, tier = 'adult'): Promise<string> {
  const price = tier === 'adult' ? 12000 : 6000;
  const { id } = await insertRegistration(db(), harness.ctx.cipher, eventId, {
    status: 'PENDING',
    payment_method: 'bank',
    attendees: JSON.stringify([{ name: 'Kim Member', tier }]),
    line_items: JSON.stringify([{ label: `${tier === 'adult' ? 'Adult' : 'Child'} — Kim Member`, amount: price, kind: 'ticket' }]),
    total_minor: price,
  });
  return id;
}

const manageOf = (id: string) => managePath(harness.ctx.config.authSecret, { registrationId: id, version: 1 });

function postExtras(id: string, fields: Record<string, string | string[]>): Promise<Response> {
  const body = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) for (const v of [value].flat()) body.append(key, v);
  return fetch(`${harness.server.url}${manageOf(id)}/extras`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
}

/** What a refused post leaves: the registration, its add-ons and its ledger as they were. */
async function snapshot(id: string) {
  return {
    registration: await db()('registrations').where({ id }).first('status', 'total_minor', 'line_items', 'paid_at'),
    addons: await db()('registration_addons').where({ registration_id: id }).orderBy('id').select('addon_id', 'option', 'attendee_index'),
    payments: await db()('registration_payments').where({ registration_id: id }).select('amount_minor', 'method'),
    history: await db()('registration_history').where({ registration_id: id, action: 'extras_added' }).count<{ n: string }>({ n: '*' }).first(),
  };
}

describe('extras added from the manage page after registering', () => {
  it('a PAID card registration adds a $20 bus seat: it owes $20 (its earlier payment becomes a ledger row of the old total), is taken to pay exactly that, and is PAID again with a receipt; reconcile agrees', async () => {
    const event = await campEvent({ passCardFee: true });
    const paid = await paidByCard(event.slug, 'extras-card@example.org');
    const before = await db()('registrations').where({ id: paid.id }).first();
    expect(await db()('registration_payments').where({ registration_id: paid.id }).count<{ n: string }>({ n: '*' }).first()).toEqual({ n: 0 });

    const added = await postExtras(paid.id, { 'addon.0.bus': 'yes' });
    expect(added.status).toBe(303);
    const location = added.headers.get('location') as string;
    expect(location).toMatch(new RegExp(`^/registrations/${paid.id}/pay\\?token=[^&]+&amount=2000$`));

    const after = await db()('registrations').where({ id: paid.id }).first();
    expect(after).toMatchObject({ status: 'PENDING', paid_at: null, total_minor: before.total_minor + 2000 });
    expect(after.line_items.slice(0, before.line_items.length)).toEqual(before.line_items);
    expect(after.line_items.slice(before.line_items.length)).toEqual([{ label: 'Bus seat — Ruth Parent', amount: 2000, kind: 'addon' }]);
    // The older shape counted "paid the total" whatever the total: the payment is a row of what it paid, so $20 is owed, not 0.
    expect(await registrationMoney(db(), paid.id)).toMatchObject({ paidMinor: before.total_minor, balanceMinor: 2000 });
    expect(await db()('registration_payments').where({ registration_id: paid.id }).select('method', 'amount_minor', 'checkout_session_id', 'payment_intent_id')).toEqual([
      { method: 'card', amount_minor: before.total_minor, checkout_session_id: paid.checkoutId, payment_intent_id: paid.paymentIntentId },
    ]);
    expect(await db()('registration_addons').where({ registration_id: paid.id }).select('addon_id', 'attendee_index', 'price_minor')).toEqual([
      { addon_id: 'bus', attendee_index: 0, price_minor: 2000 },
    ]);
    // Until it is paid it is owed like any balance, due before the event: the office's balances list shows it.
    const owed = (await listBalances(harness.ctx, event.slug)).find((row) => row.reference === paymentReference(paid.id));
    expect(owed).toMatchObject({ status: 'PENDING', balanceMinor: 2000, dueBecause: 'event_start' });

    // The pay page shows the $20 and its card fee; its post opens a checkout for exactly that.
    const fee = cardSurcharge(2000, await getCardFeeRate(db()));
    const payPage = await (await fetch(`${harness.server.url}${location}`)).text();
    expect(payPage).toContain(money(2000 + fee));
    const token = new URL(location, harness.server.url).searchParams.get('token') as string;
    const posted = await fetch(`${harness.server.url}/registrations/${paid.id}/pay`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}&amount=2000`,
    });
    expect(posted.status).toBe(303);
    const checkout = await db()('checkout_sessions').where({ provider_url: posted.headers.get('location') }).first();
    expect(checkout).toMatchObject({ net_minor: 2000, surcharge_minor: fee, balance_part: true });
    expect(harness.provider.sessions.get(checkout.provider_session_id)?.amount_total).toBe(2000 + fee);

    await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
    expect(await db()('registrations').where({ id: paid.id }).first()).toMatchObject({ status: 'PAID', total_minor: before.total_minor + 2000 });
    expect(await registrationMoney(db(), paid.id)).toMatchObject({ paidMinor: before.total_minor + 2000, balanceMinor: 0, outstandingMinor: 0 });
    await deliverQueuedMail(harness.ctx);
    const mails = await smtp.sink.waitFor(2);
    const receipts = mails.filter((mail) => mail.envelope.to.includes('extras-card@example.org') && mail.subject.startsWith('Receipt'));
    // The registration's first receipt, and one for the extras' payment: the $20 and its card fee.
    expect(receipts).toHaveLength(2);
    expect(receipts.some((mail) => mail.text.includes(money(2000 + fee)) && mail.text.includes(money(2000)))).toBe(true);

    // Both card payments of the registration, the first (now a ledger row) and the extras', agree with the provider.
    const sessions = [await providerSessionOf(paid.checkoutId), checkout.provider_session_id];
    const report = await reconcileWithProvider(harness.ctx, { sinceMs: 24 * 60 * 60_000, apply: false });
    expect(report.rows.filter((row) => sessions.includes(row.session)).map((row) => row.action)).toEqual(['none', 'none']);
    expect(report.rows.filter((row) => row.action !== 'none' || row.unresolved)).toEqual([]);

    // The office sees the extra and the change in `registrations show`.
    const shown = await showRegistration(harness.ctx, paid.id);
    expect(shown.addons.map((a) => `${a.attendee}: ${a.label} ${money(a.priceMinor)}`)).toEqual(['Ruth Parent: Bus seat $20.00']);
    const entry = shown.history.find((h) => h.action === 'extras_added');
    expect(entry?.actor).toBe('registrant');
    expect(describeHistoryEntry(entry as NonNullable<typeof entry>, money, () => 'then')).toBe(
      `then extras added by registrant: Bus seat — Ruth Parent ($20.00), total ${money(before.total_minor)} → ${money(before.total_minor + 2000)}, PAID → PENDING, the card payment of ${money(before.total_minor)} kept as a ledger row, balance $20.00`,
    );
  });

  it('a registration paying a deposit adds a bus seat: it is taken to pay its whole balance; its schedule is unchanged and asks for what it asked', async () => {
    const balanceDueAt = fromReferenceNow({ days: 20 }).toISOString().slice(0, 10);
    const event = await insertEvent(db(), {
      online_payment: true,
      starts_at: fromReferenceNow({ days: 40 }),
      pricing: JSON.stringify(camp()),
      balance_terms: JSON.stringify({ deposit: { perAttendee: 5000 }, balanceDueAt, minimumPayment: 2000, instalments: null, overdue: 'alert' }),
    });
    const posted = await postRegistrationForm(harness.server.url, event.slug, { name: 'Pat Parent', email: 'extras-deposit@example.org', attendee_name: 'Ruth Parent', attendee_tier: 'adult', payment: 'card', pay_plan: 'deposit' });
    const checkout = await db()('checkout_sessions').where({ provider_url: posted.headers.get('location') }).first();
    await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
    const id = (await db()('checkout_sessions').where({ id: checkout.id }).first()).registration_id as string;

    const added = await postExtras(id, { 'addon.0.bus': 'yes' });
    expect(added.status).toBe(303);
    expect(added.headers.get('location')).toMatch(/&amount=9000$/);
    expect(await registrationMoney(db(), id)).toMatchObject({ totalMinor: 14000, paidMinor: 5000, balanceMinor: 9000 });
    expect(await db()('registration_schedules').where({ registration_id: id }).orderBy('seq').pluck('settled_target_minor')).toEqual([5000, 12000]);
    const page = await (await fetch(`${harness.server.url}${manageOf(id)}`)).text();
    expect(page).toContain('<dd id="balance-left">$90.00</dd>');
    expect(page).toMatch(/id="next-due">Next payment: <strong>\$70\.00<\/strong>/);
  });

  it('a bank registration adds a T-shirt of a size: no card page, the manage page shows the new amount owed and the bank details', async () => {
    const event = await campEvent();
    const id = await bankRegistration(event.id);
    const added = await postExtras(id, { 'addon.0.tshirt': 'M' });
    expect(added.status).toBe(303);
    expect(added.headers.get('location')).toBe(`${manageOf(id)}?done=extras`);
    expect(await registrationMoney(db(), id)).toMatchObject({ totalMinor: 13500, balanceMinor: 13500 });
    const page = await (await fetch(`${harness.server.url}${manageOf(id)}?done=extras`)).text();
    expect(page).toContain('Your extras are added.');
    expect(page).toContain('id="bank-instructions"');
    expect(page).toContain('$135.00');
    expect(page).toContain('Kim Member: T-shirt (M)');

    // The family is emailed what was added, the new total and how to pay what is owed.
    await deliverQueuedMail(harness.ctx);
    const email = harness.ctx.cipher.decrypt((await db()('registrations').where({ id }).first()).contact_email_enc);
    const [told] = (await smtp.sink.waitFor(1)).filter((mail) => mail.envelope.to.includes(email));
    expect(told?.subject).toBe('Extras added: Family Camp');
    expect(told?.text).toContain('- T-shirt (M) — Kim Member: $15.00');
    expect(told?.text).toContain("The registration's total is now $135.00.");
    expect(told?.text).toContain('Still to pay: $135.00.');
    expect(told?.text).toMatch(new RegExp(`Pay now by card: \\S+/registrations/${id}/pay\\?token=[0-9a-f]+\n`));
    expect(told?.text).toContain('Manage your registration: ');
  });

  it('refuses a sold-out add-on with a clear message, and changes nothing', async () => {
    const event = await campEvent({ busStock: 1 });
    const holder = await bankRegistration(event.id);
    expect((await postExtras(holder, { 'addon.0.bus': 'yes' })).status).toBe(303);
    const id = await bankRegistration(event.id);
    const before = await snapshot(id);
    const refused = await postExtras(id, { 'addon.0.bus': 'yes' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('Sorry, Bus seat is sold out.');
    expect(await snapshot(id)).toEqual(before);
  });

  it('a registration cancelled after adding the last bus seat gives it back: another family can then add it', async () => {
    const event = await campEvent({ busStock: 1 });
    const first = await bankRegistration(event.id);
    expect((await postExtras(first, { 'addon.0.bus': 'yes' })).status).toBe(303);
    const second = await bankRegistration(event.id);
    expect((await postExtras(second, { 'addon.0.bus': 'yes' })).status).toBe(409);
    await cancelRegistration(harness.ctx, { registration: first, actor: 'office', notify: false });
    expect((await postExtras(second, { 'addon.0.bus': 'yes' })).status).toBe(303);
    expect(await db()('registration_addons').where({ registration_id: second, addon_id: 'bus' }).count<{ n: string }>({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it('refuses a per-attendee add-on not offered to that attendee\'s ticket type', async () => {
    const event = await campEvent();
    const id = await bankRegistration(event.id, 'child');
    const before = await snapshot(id);
    const refused = await postExtras(id, { 'addon.0.bus': 'yes' });
    expect(refused.status).toBe(400);
    const html = await refused.text();
    expect(html).toContain('Kim Member: choose one of the extras offered with this ticket');
    // The page again, with only the extras form open and its problem beside it.
    expect(html).toContain('<details class="change" id="add-extras" open>');
    expect(html).not.toContain('id="change-contact" open');
    const nothing = await postExtras(id, {});
    expect(nothing.status).toBe(400);
    expect(await nothing.text()).toContain('Choose at least one extra to add.');
    expect(await snapshot(id)).toEqual(before);
    // Nor is it offered on the page.
    const page = await (await fetch(`${harness.server.url}${manageOf(id)}`)).text();
    expect(page).toContain('id="extra-1-tshirt-1"');
    expect(page).not.toContain('id="extra-1-bus"');
  });

  it('counts what an attendee already has against maxPerAttendee', async () => {
    const event = await campEvent();
    const paid = await paidByCard(event.slug, 'extras-max@example.org', { 'addon.0.bus': 'yes', 'addon.0.tshirt': 'S' });
    const before = await snapshot(paid.id);
    const bus = await postExtras(paid.id, { 'addon.0.bus': 'yes' });
    expect(bus.status).toBe(400);
    expect(await bus.text()).toContain('Ruth Parent: already has 1 Bus seat; at most 1 in all');
    const shirts = await postExtras(paid.id, { 'addon.0.tshirt': ['M', 'L'] });
    expect(shirts.status).toBe(400);
    expect(await shirts.text()).toContain('Ruth Parent: already has 1 T-shirt; at most 2 in all');
    expect(await snapshot(paid.id)).toEqual(before);
    // The page offers one more T-shirt and no second bus seat.
    const page = await (await fetch(`${harness.server.url}${manageOf(paid.id)}`)).text();
    expect(page).toContain('id="extra-1-tshirt"');
    expect(page).not.toContain('id="extra-1-tshirt-2"');
    expect(page).not.toContain('id="extra-1-bus"');
  });

  it('answers 404 and adds nothing for a link that opens nothing (revoked, or not ours)', async () => {
    const event = await campEvent();
    const id = await bankRegistration(event.id);
    const before = await snapshot(id);
    const revoked = managePath(harness.ctx.config.authSecret, { registrationId: id, version: 2 });
    for (const path of [revoked, `${manageOf(id).slice(0, -4)}AAAA`]) {
      const response = await fetch(`${harness.server.url}${path}/extras`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'addon.0.tshirt=M',
      });
      expect(response.status).toBe(404);
    }
    expect(await snapshot(id)).toEqual(before);
  });

  it('refuses while a card payment for the registration may still arrive, and offers no form then', async () => {
    const event = await campEvent();
    const id = await bankRegistration(event.id);
    await insertCheckoutSession(db(), harness.ctx.cipher, event.id, { registration_id: id, payload_enc: null, balance_part: false });
    const before = await snapshot(id);
    const refused = await postExtras(id, { 'addon.0.tshirt': 'S' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('A card payment for this registration is on its way.');
    expect(await snapshot(id)).toEqual(before);
    expect(await (await fetch(`${harness.server.url}${manageOf(id)}`)).text()).not.toContain('id="extras-section"');
  });

  it('a registration with nothing to pay adds only free extras here; one with a price is the office\'s to add', async () => {
    const event = await insertEvent(db(), {
      starts_at: fromReferenceNow({ days: 40 }),
      pricing: JSON.stringify({
        tiers: [{ id: 'adult', label: 'Adult', price: 0 }],
        addons: [
          { id: 'bus', label: 'Bus seat', price: 2000, per: 'attendee' },
          { id: 'lanyard', label: 'Name lanyard', price: 0, per: 'attendee' },
        ],
      }),
    });
    const { id } = await insertRegistration(db(), harness.ctx.cipher, event.id, {
      status: 'PAID',
      payment_method: 'free',
      paid_at: referenceNow(),
      attendees: JSON.stringify([{ name: 'Kim Member', tier: 'adult' }]),
      line_items: JSON.stringify([{ label: 'Adult — Kim Member', amount: 0, kind: 'ticket' }]),
      total_minor: 0,
    });
    const page = await (await fetch(`${harness.server.url}${manageOf(id)}`)).text();
    expect(page).toContain('id="extra-1-lanyard"');
    expect(page).not.toContain('id="extra-1-bus"');
    const before = await snapshot(id);
    const refused = await postExtras(id, { 'addon.0.bus': 'yes' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('Extras for this registration are added by the church office');
    expect(await snapshot(id)).toEqual(before);
    expect(await db()('queued_mail').where({ registration_id: id }).count<{ n: string }>({ n: '*' }).first()).toEqual({ n: 0 });
    const lanyard = await postExtras(id, { 'addon.0.lanyard': 'yes' });
    expect(lanyard.headers.get('location')).toBe(`${manageOf(id)}?done=extras-free`);
    expect(await db()('registrations').where({ id }).first('status', 'total_minor')).toEqual({ status: 'PAID', total_minor: 0 });
    await deliverQueuedMail(harness.ctx);
    const email = harness.ctx.cipher.decrypt((await db()('registrations').where({ id }).first()).contact_email_enc);
    const told = (await smtp.sink.waitFor(1)).find((mail) => mail.envelope.to.includes(email));
    expect(told?.subject).toBe('Extras added: Family Camp');
    expect(told?.text).toContain('- Name lanyard — Kim Member: $0.00');
    expect(told?.text).toContain('Nothing more is owed.');
    expect(told?.text).not.toContain('Pay now by card');
    expect(told?.text).not.toContain('bank transfer');
  });

  it('refuses once the event has started', async () => {
    const event = await campEvent();
    const id = await bankRegistration(event.id);
    const before = await snapshot(id);
    harness.ctx.clock.set(fromReferenceNow({ days: 41 }));
    const refused = await postExtras(id, { 'addon.0.tshirt': 'L' });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toContain('The event has started');
    expect(await snapshot(id)).toEqual(before);
    expect(await (await fetch(`${harness.server.url}${manageOf(id)}`)).text()).not.toContain('id="extras-section"');
  });

  it('two families racing for the last bus seat: one gets it, the other is told it is sold out (the event lock)', async () => {
    const event = await campEvent({ busStock: 1 });
    const first = await bankRegistration(event.id);
    const second = await bankRegistration(event.id);
    const gate = await closeGate(db(), ['events', 'registration_addons']);
    const racers = [gate.started(postExtras(first, { 'addon.0.bus': 'yes' })), gate.started(postExtras(second, { 'addon.0.bus': 'yes' }))];
    await gate.waiting(2);
    await gate.open();
    const statuses = (await Promise.all(racers)).map((response) => response.status).sort();
    expect(statuses).toEqual([303, 409]);
    const units = await db()('registration_addons as a').join('registrations as r', 'r.id', 'a.registration_id').where({ 'r.event_id': event.id, 'a.addon_id': 'bus' }).count<{ n: string }>({ n: '*' }).first();
    expect(units).toEqual({ n: 1 });
  });
});

/** The provider session id of a checkout of ours. */
async function providerSessionOf(checkoutId: string): Promise<string> {
  return (await db()('checkout_sessions').where({ id: checkoutId }).first()).provider_session_id;
}
