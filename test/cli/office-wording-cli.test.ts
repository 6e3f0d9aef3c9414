import crypto from 'node:crypto';
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { raiseOperationsAlert } from '../../src/payments/alerts.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { insertCheckoutSession, insertEvent, insertRegistration, insertUser } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';

// The office's commands in a subprocess (the built command, no TTY, as cron runs it); mail delivered here to a real SMTP sink.
const office = useOfficeCli();
const { mail } = office;
const osUser = os.userInfo().username;
const cli = (args: string[]) => runCli(args, { env: office.env });

async function deliverMail() {
  return deliverQueuedMail(office.context(), { limit: 100 });
}

async function pendingRegistration(eventOverrides: Record<string, unknown> = {}, registration: Record<string, unknown> = {}) {
  const event = await insertEvent(office.db, eventOverrides);
  const email = `payer-${crypto.randomBytes(4).toString('hex')}@example.org`;
  const row = await insertRegistration(office.db, office.context().cipher, event.id, {
    status: 'PENDING',
    contact_name: 'Pat Payer',
    email,
    line_items: JSON.stringify([{ label: 'Adult', amount: 18000 }]),
    total_minor: 18000,
    ...registration,
  });
  return { event, id: row.id, reference: paymentReference(row.id), email };
}

describe('money that came several ways is named by every method', () => {
  it('a bank part-payment and the balance in cash: the receipt, list and show name both, with what came by each', async () => {
    const { event, id, reference, email } = await pendingRegistration();

    expect((await cli(['registrations', 'mark-paid', reference, '--amount', '100', '--partial', '--method', 'bank'])).code).toBe(0);
    // The part-payment's own receipt goes first, so the one read below can only be the balance's.
    await deliverMail();
    expect(mail.sink.messages.filter((m) => m.envelope.to.includes(email) && m.subject === 'Receipt: Family Camp')).toHaveLength(1);
    mail.sink.clear();
    const balance = await cli(['registrations', 'mark-paid', reference, '--amount', '80', '--method', 'cash']);
    expect(balance.stderr).toBe('');
    expect(balance.code).toBe(0);
    expect(await office.db('registrations').where({ id }).first()).toMatchObject({ status: 'PAID', payment_method: 'cash' });

    await deliverMail();
    const receipt = mail.sink.messages.find((m) => m.envelope.to.includes(email) && m.subject === 'Receipt: Family Camp');
    expect(receipt?.text).toContain('your bank transfer and cash payment for Family Camp');
    expect(receipt?.text).toContain('have been received');
    expect(receipt?.text).toContain('Paid by: bank transfer $100.00 and cash $80.00');
    expect(receipt?.text).toContain('Total paid: $180.00');

    const list = await cli(['registrations', 'list', '--event', event.slug]);
    expect(list.code).toBe(0);
    const row = list.stdout.trimEnd().split('\n')[1]?.split(/\s{2,}/);
    expect(row?.slice(0, 9)).toEqual([reference, event.slug, 'Pat Payer', '1', '$180.00', '$180.00', '-', 'bank transfer $100.00 and cash $80.00', 'PAID']);
    const json = JSON.parse((await cli(['registrations', 'list', '--event', event.slug, '--json'])).stdout);
    expect(json.registrations[0]).toMatchObject({ method: 'cash', officePaidBy: [{ method: 'bank', amountMinor: 10000 }, { method: 'cash', amountMinor: 8000 }] });

    const shown = await cli(['registrations', 'show', reference]);
    expect(shown.stdout).toContain('  method:   bank transfer $100.00 and cash $80.00\n');

    // The receipt sent again names both too.
    mail.sink.clear();
    expect((await cli(['registrations', 'resend', reference])).code).toBe(0);
    await deliverMail();
    expect(mail.sink.messages.find((m) => m.subject === 'Receipt: Family Camp')?.text).toContain('Paid by: bank transfer $100.00 and cash $80.00');
  });

  it('money that came one way keeps its one word: the receipt of a single bank transfer says "bank transfer"', async () => {
    const { reference, email } = await pendingRegistration();
    expect((await cli(['registrations', 'mark-paid', reference, '--amount', '180'])).code).toBe(0);
    await deliverMail();
    const receipt = mail.sink.messages.find((m) => m.envelope.to.includes(email));
    expect(receipt?.text).toContain('your bank transfer for Family Camp');
    expect(receipt?.text).toContain('has been received');
    expect(receipt?.text).toContain('Paid by: bank transfer\n');
  });
});

describe('mark-paid while a card payment may still arrive', () => {
  it('refuses the whole balance without --yes (exit 1, naming `eventops reconcile`), under --json too, and records it with --yes', async () => {
    const { event, id, reference } = await pendingRegistration();
    // The registrant opened a pay-now checkout that is still open: they may pay it any minute.
    await insertCheckoutSession(office.db, office.context().cipher, event.id, {
      registration_id: id,
      payload_enc: null,
      net_minor: 18000,
      expires_at: new Date(Date.now() + 20 * 60_000),
    });

    const refused = await cli(['registrations', 'mark-paid', reference, '--amount', '180']);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain(`a card payment for registration ${reference} was started and may still arrive`);
    expect(refused.stderr).toContain('paid twice');
    expect(refused.stderr).toContain('`eventops reconcile`');
    expect(refused.stderr).toContain('--yes');
    expect(await office.db('registration_payments').where({ registration_id: id })).toHaveLength(0);

    const refusedJson = await cli(['registrations', 'mark-paid', reference, '--amount', '180', '--json']);
    expect(refusedJson.code).toBe(1);
    expect(refusedJson.stdout).toBe('');
    expect(JSON.parse(refusedJson.stderr)).toMatchObject({ error: { code: 'card_payment_may_arrive', exitCode: 1, suggestion: expect.stringContaining('eventops reconcile') } });
    expect(await office.db('registrations').where({ id }).first()).toMatchObject({ status: 'PENDING', paid_at: null });

    const recorded = await cli(['registrations', 'mark-paid', reference, '--amount', '180', '--yes', '--json']);
    expect(recorded.stderr).toBe('');
    expect(recorded.code).toBe(0);
    expect(JSON.parse(recorded.stdout)).toMatchObject({ payment: { status: 'PAID', recordedMinor: 18000, cardPaymentMayArrive: true } });
    expect(await office.db('registrations').where({ id }).first()).toMatchObject({ status: 'PAID', payment_method: 'bank' });
  });

  it('says, when recorded with --yes, that the card payment may still arrive; without a checkout, no --yes is asked for', async () => {
    const withCheckout = await pendingRegistration();
    await insertCheckoutSession(office.db, office.context().cipher, withCheckout.event.id, {
      registration_id: withCheckout.id,
      payload_enc: null,
      net_minor: 18000,
      expires_at: new Date(Date.now() + 20 * 60_000),
    });
    const recorded = await cli(['registrations', 'mark-paid', withCheckout.reference, '--amount', '180', '--yes']);
    expect(recorded.code).toBe(0);
    expect(recorded.stdout).toContain(`registration ${withCheckout.reference} is PAID`);
    expect(recorded.stdout).toContain('A card payment for it was started and may still arrive');

    const plain = await pendingRegistration();
    const paid = await cli(['registrations', 'mark-paid', plain.reference, '--amount', '180']);
    expect(paid.code).toBe(0);
    expect(paid.stdout).toBe(`registration ${plain.reference} is PAID ($180.00 by bank); the receipt is queued\n`);
  });
});

describe('alerts name the registration and the payer', () => {
  it('alerts list shows the amount in the currency, the registration reference and the payer, from the registration or the staged checkout', async () => {
    const ctx = office.context();
    const { id, reference } = await pendingRegistration({}, { contact_name: 'Robin Twice' });
    const paidTwice = await office.db.transaction((trx) =>
      raiseOperationsAlert(trx, ctx, {
        kind: 'paid_twice',
        reason: 'paid with pay-now for a registration that was already PAID: it has now been paid twice',
        paymentIntentId: 'pi_test_twice',
        amountMinor: 203455,
        details: { registrationId: id, expectedMinor: 203455 },
      }),
    );
    // A payment kept without a registration: the payer is known only from the encrypted checkout payload.
    const event = await insertEvent(office.db);
    const staged = {
      version: 1,
      contact: { name: 'Kim Staged', email: 'kim@example.org' },
      attendees: [{ name: 'Kim Staged', tier: 'adult' }],
      family: false,
      priced: { lines: [], subtotal: 12000, discount: 0, net: 12000, surcharge: 0, total: 12000 },
    };
    const checkout = await insertCheckoutSession(office.db, ctx.cipher, event.id, { status: 'UNFULFILLED', payload_enc: ctx.cipher.encrypt(JSON.stringify(staged)) });
    const soldOut = await office.db.transaction((trx) =>
      raiseOperationsAlert(trx, ctx, { kind: 'sold_out', reason: '1 seat paid for but only 0 left', checkoutId: checkout.id, paymentIntentId: 'pi_test_kept', amountMinor: 12000 }),
    );

    const list = await cli(['alerts', 'list']);
    expect(list.code).toBe(0);
    const lines = list.stdout.split('\n');
    const twiceLine = lines.find((line) => line.startsWith(`#${paidTwice.id} `));
    expect(twiceLine?.split(/\s{2,}/).slice(2)).toEqual(['paid_twice', '$2,034.55', `registration ${reference}`, 'payer Robin Twice', 'pi_test_twice']);
    const keptLine = lines.find((line) => line.startsWith(`#${soldOut.id} `));
    expect(keptLine?.split(/\s{2,}/).slice(2)).toEqual(['sold_out', '$120.00', 'payer Kim Staged', 'pi_test_kept']);
    expect(list.stdout).not.toContain('203455');

    const json = JSON.parse((await cli(['alerts', 'list', '--json'])).stdout);
    expect(json.alerts.find((a: { id: number }) => a.id === paidTwice.id)).toMatchObject({ reference, payerName: 'Robin Twice', amountMinor: 203455 });
    expect(json.alerts.find((a: { id: number }) => a.id === soldOut.id)).toMatchObject({ reference: null, payerName: 'Kim Staged' });
  });

  it('the alert email says what happened and what to do with the reference; ids and minor amounts only in the details block at the end', async () => {
    const ctx = office.context();
    await insertUser(office.db, ctx.cipher, { email: `admin-${crypto.randomBytes(3).toString('hex')}@example.org`, role: 'ADMIN' });
    const { id, reference, event } = await pendingRegistration();
    const checkout = await insertCheckoutSession(office.db, ctx.cipher, event.id, { registration_id: id, payload_enc: null, status: 'UNFULFILLED' });
    const alert = await office.db.transaction((trx) =>
      raiseOperationsAlert(trx, ctx, {
        kind: 'paid_twice',
        reason: 'paid with pay-now for a registration that was already PAID: it has now been paid twice',
        checkoutId: checkout.id,
        providerSessionId: 'cs_test_words',
        paymentIntentId: 'pi_test_words',
        amountMinor: 203455,
        details: { eventId: event.id, expectedMinor: 203455, registrationId: id, providerEventId: 'evt_test_words' },
        payer: { name: 'Pat Payer', email: 'pat@example.org' },
      }),
    );
    mail.sink.clear();
    await deliverMail();
    const sent = mail.sink.messages.find((m) => m.subject === `Payment needs manual attention: Registration paid twice (alert ${alert.id})`);
    expect(sent).toBeDefined();
    const text = sent?.text ?? '';
    const [words, details] = text.split("Details (for the card provider's dashboard and support):");
    expect(details).toBeDefined();
    // In words, with the reference: what happened and what to do.
    expect(words).toContain(`A card payment arrived for registration ${reference}, which was already paid: the payer has now paid twice.`);
    expect(words).toContain(`What to do: Refund the card payment in the card provider's dashboard`);
    expect(words).toContain(`eventops registrations record-refund ${reference}`);
    expect(words).toContain(`Registration: ${reference}`);
    expect(words).toContain('Payer: Pat Payer <pat@example.org>');
    expect(words).toContain('Amount: $2,034.55');
    expect(words).toContain(`eventops alerts resolve ${alert.id}`);
    // The internals are in the details block only.
    for (const internal of ['203455', 'expectedMinor', 'eventId', 'providerEventId', 'evt_test_words', id, event.id, checkout.id, 'pi_test_words', 'cs_test_words']) {
      expect(words).not.toContain(internal);
      expect(details).toContain(internal);
    }
    expect(sent?.html).toContain('What to do:');
  });

  it('every kind of alert has its own sentence of what happened and what to do', async () => {
    const { ALERT_KINDS } = await import('../../src/payments/alerts.js');
    const { alertGuidance } = await import('../../src/payments/alert-guidance.js');
    const seen = new Set<string>();
    for (const kind of ALERT_KINDS) {
      const guidance = alertGuidance(kind, 7, 'ABCD1234');
      expect(guidance.happened, kind).toMatch(/^[A-Z].+\.$/);
      expect(guidance.toDo, kind).toMatch(/^[A-Z].+\.$/);
      seen.add(guidance.happened);
    }
    expect(seen.size).toBe(ALERT_KINDS.length);
  });
});

describe('counts and history read as sentences', () => {
  it('add says "1 place left" and "3 places left", and a full event "0 places left"', async () => {
    const event = await insertEvent(office.db, { capacity: 4 });
    const add = (name: string, ...more: string[]) =>
      cli(['registrations', 'add', '--event', event.slug, '--name', name, '--email', `${name.split(' ')[0]?.toLowerCase()}@example.org`, '--attendee', `${name}:adult`, ...more]);
    expect((await add('Lee One')).stdout).toContain('\n3 places left\n');
    expect((await add('Ash Two', '--attendee', 'Bo Two:adult')).stdout).toContain('\n1 place left\n');
    expect((await add('Cy Three')).stdout).toContain('\n0 places left\n');
    expect((await add('Di Four')).stderr).toContain(`${event.slug} has 0 places left`);
  });

  it('cancel says "1 seat freed" and "2 seats freed"; show writes the history in sentences, "the registrant was not notified"', async () => {
    const one = await pendingRegistration();
    expect((await cli(['registrations', 'cancel', one.reference])).stdout).toContain(`cancelled registration ${one.reference}: 1 seat freed\n`);
    const two = await pendingRegistration({}, { attendee_count: 2 });
    expect((await cli(['registrations', 'cancel', two.reference, '--note', 'away'])).stdout).toContain(`cancelled registration ${two.reference}: 2 seats freed\n`);

    const shown = await cli(['registrations', 'show', two.reference]);
    expect(shown.stdout).toContain(`cancelled by ${osUser}: PENDING → CANCELLED, 2 seats freed; the registrant was not notified (note: away)`);
    expect(shown.stdout).not.toContain('notified false');
    expect(shown.stdout).not.toContain('(s)');
  });

  it('show writes the registration in words: "registered by …: PENDING, to pay by bank transfer, 2 attendees, total $240.00"', async () => {
    const event = await insertEvent(office.db);
    const added = await cli([
      'registrations', 'add', '--event', event.slug, '--name', 'Ash Two', '--email', 'ash@example.org', '--attendee', 'Ash Two:adult', '--attendee', 'Bo Two:adult', '--json',
    ]);
    const { registration } = JSON.parse(added.stdout) as { registration: { reference: string } };
    const shown = await cli(['registrations', 'show', registration.reference]);
    expect(shown.stdout).toContain(`registered by ${osUser}: PENDING, to pay by bank transfer, 2 attendees, total $240.00`);
  });

  it('show writes a payment recorded and the one that paid in full in words', async () => {
    const { reference } = await pendingRegistration();
    await cli(['registrations', 'mark-paid', reference, '--amount', '100', '--partial', '--note', 'first half']);
    await cli(['registrations', 'mark-paid', reference, '--amount', '80', '--method', 'cash']);
    const shown = await cli(['registrations', 'show', reference]);
    expect(shown.stdout).toContain(`payment recorded by ${osUser}: $100.00 received by bank transfer, $100.00 paid so far, balance $80.00 (note: first half)`);
    expect(shown.stdout).toContain(`marked paid by ${osUser}: $80.00 received by cash, $180.00 paid in full, PENDING → PAID`);
  });
});

describe('show lists a card payment', () => {
  it('a registration paid by card with no checkout of its own (as the demo seeds one) lists the card payment, not "Payments: none"', async () => {
    const event = await insertEvent(office.db);
    const paidAt = new Date('2026-03-02T21:30:00Z');
    const row = await insertRegistration(office.db, office.context().cipher, event.id, {
      payment_method: 'card',
      payment_intent_id: 'pi_test_shown',
      paid_at: paidAt,
    });
    const reference = paymentReference(row.id);
    const shown = await cli(['registrations', 'show', reference]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('paid $120.00');
    expect(shown.stdout).toContain('Payments:\n  card $120.00 paid 2026-03-03 08:30 pi_test_shown\n');
    expect(shown.stdout).not.toMatch(/Payments:\n {2}none/);
    const json = JSON.parse((await cli(['registrations', 'show', reference, '--json'])).stdout);
    expect(json.registration.cardPaymentOfRecord).toMatchObject({ amountMinor: 12000, paymentIntentId: 'pi_test_shown' });
  });
});
