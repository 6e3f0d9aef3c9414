import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { formatInTimeZone } from 'date-fns-tz';
import { describe, expect, it } from 'vitest';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { raiseOperationsAlert } from '../../src/payments/alerts.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { readOperationsStatus } from '../../src/jobs/status.js';
import { runCli } from '../support/cli.js';
import { insertEvent, insertRegistration, insertUser } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';

// The subprocess runs on the real clock and the built command; mail it queues is delivered here to a real SMTP sink.
const office = useOfficeCli();
const { mail } = office;
const osUser = os.userInfo().username;

const context = () => office.context();

async function deliverMail() {
  return deliverQueuedMail(context(), { limit: 100 });
}

const cli = (args: string[]) => runCli(['registrations', ...args], { env: office.env });

async function registrationRow(id: string) {
  return office.db('registrations').where({ id }).first();
}

describe('eventops registrations: the office records a bank transfer, cancels and registers by hand', () => {
  it('add → list → mark-paid (partial, then the balance) → show → resend → cancel, with the history and the emails', async () => {
    const event = await insertEvent(office.db, {
      capacity: 10,
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 12000 }, { id: 'child', label: 'Child', price: 6000 }] }),
    });

    const added = await cli([
      'add', '--event', event.slug, '--name', 'Dana Office', '--email', 'dana@example.org', '--mobile', '+61 400 000 000',
      '--attendee', 'Dana Office:adult', '--attendee', 'Kit Office:child', '--json',
    ]);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const { registration } = JSON.parse(added.stdout) as { registration: { registrationId: string; reference: string; status: string; totalMinor: number; seatsLeft: number } };
    expect(registration).toMatchObject({ status: 'PENDING', totalMinor: 18000, seatsLeft: 8 });
    const id = registration.registrationId;
    expect(await registrationRow(id)).toMatchObject({ status: 'PENDING', payment_method: 'bank', attendee_count: 2, total_minor: 18000 });
    await deliverMail();
    expect(mail.sink.messages.map((m) => [m.envelope.to, m.subject])).toEqual([[['dana@example.org'], `Registration received: Family Camp`]]);
    expect(mail.sink.messages[0]?.text).toContain(registration.reference);

    const list = await cli(['list', '--event', event.slug]);
    expect(list.code).toBe(0);
    const [header, row] = list.stdout.trimEnd().split('\n');
    expect(header).toMatch(/^REFERENCE\s+EVENT\s+CONTACT\s+ATTENDEES\s+TOTAL\s+PAID\s+BALANCE\s+METHOD\s+STATUS\s+CREATED$/);
    expect(row?.split(/\s{2,}/)).toEqual([registration.reference, event.slug, 'Dana Office', '2', '$180.00', '$0.00', '$180.00', 'bank', 'PENDING', formatInTimeZone(new Date(), 'Australia/Sydney', 'yyyy-MM-dd')]);
    expect(list.stdout).not.toContain('dana@example.org');
    // The status in any case, as a volunteer types it.
    const pending = await cli(['list', '--event', event.slug, '--status', 'pending']);
    expect(pending.code).toBe(0);
    expect(pending.stdout).toContain(registration.reference);
    expect((await cli(['list', '--event', event.slug, '--status', 'paid'])).stdout).not.toContain(registration.reference);

    const badDecimals = await cli(['mark-paid', registration.reference, '--amount', '180.5']);
    expect(badDecimals.code).toBe(2);
    expect(badDecimals.stderr).toContain('--amount must have 2 decimals');
    const wrongAmount = await cli(['mark-paid', registration.reference, '--amount', '100']);
    expect(wrongAmount.code).toBe(1);
    expect(wrongAmount.stderr).toContain('$100.00 is not what is owing ($180.00)');
    expect(wrongAmount.stderr).toContain('--partial');

    const partial = await cli(['mark-paid', registration.reference.toLowerCase(), '--amount', '100', '--partial', '--method', 'cash', '--note', 'cash at the door']);
    expect(partial.code).toBe(0);
    expect(partial.stdout).toBe(`recorded $100.00 by cash for ${registration.reference}; paid $100.00, balance $80.00 (still PENDING)\n`);
    expect(await registrationRow(id)).toMatchObject({ status: 'PENDING', paid_at: null });

    const full = await cli(['mark-paid', id, '--amount', '80.00', '--note', 'transfer of 3 March', '--json']);
    expect(full.code).toBe(0);
    expect(JSON.parse(full.stdout)).toMatchObject({ payment: { status: 'PAID', recordedMinor: 8000, paidMinor: 18000, balanceMinor: 0, receiptQueued: true } });
    expect(await registrationRow(id)).toMatchObject({ status: 'PAID', payment_method: 'bank' });
    await deliverMail();
    // Every payment gets a receipt: the part says what is left; the balance's says both methods.
    const [partReceipt, receipt, ...more] = mail.sink.messages.filter((m) => m.subject === 'Receipt: Family Camp');
    expect(more).toEqual([]);
    expect(partReceipt?.text).toContain('Balance left: $80.00');
    expect(receipt?.envelope.to).toEqual(['dana@example.org']);
    // Cash at the door, then the balance by bank transfer: the receipt names both.
    expect(receipt?.text).toContain('your cash payment and bank transfer for Family Camp');
    expect(receipt?.text).toContain('Paid by: cash $100.00 and bank transfer $80.00');
    expect(receipt?.text).toContain('Total paid: $180.00');

    const again = await cli(['mark-paid', registration.reference, '--amount', '180']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already paid (bank)');

    const resent = await cli(['resend', registration.reference]);
    expect(resent).toMatchObject({ code: 0, stdout: `queued the receipt of ${registration.reference} again\n` });
    mail.sink.clear();
    await deliverMail();
    expect(mail.sink.messages.map((m) => m.subject)).toEqual(['Receipt: Family Camp']);

    const cancelled = await cli(['cancel', registration.reference, '--note', 'family is away', '--notify']);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(`cancelled registration ${registration.reference}: 2 seats freed; the registrant is notified`);
    expect(cancelled.stdout).toContain('$180.00 had been received. Nothing was refunded');
    expect(await registrationRow(id)).toMatchObject({ status: 'CANCELLED', cancel_reason: 'office' });
    mail.sink.clear();
    await deliverMail();
    expect(mail.sink.messages.map((m) => m.subject)).toEqual(['Registration cancelled: Family Camp']);

    const cancelAgain = await cli(['cancel', registration.reference]);
    expect(cancelAgain.code).toBe(1);
    expect(cancelAgain.stderr).toContain('already cancelled');
    const payCancelled = await cli(['mark-paid', registration.reference, '--amount', '180']);
    expect(payCancelled.code).toBe(1);
    expect(payCancelled.stderr).toContain('was cancelled');

    const shown = await cli(['show', registration.reference, '--json']);
    expect(shown.code).toBe(0);
    const detail = JSON.parse(shown.stdout).registration;
    expect(detail).toMatchObject({
      status: 'CANCELLED',
      contact: { name: 'Dana Office', email: 'dana@example.org', mobile: '+61 400 000 000' },
      attendees: [{ name: 'Dana Office', tierLabel: 'Adult' }, { name: 'Kit Office', tierLabel: 'Child' }],
      totalMinor: 18000,
      paidMinor: 18000,
      officePayments: [{ amountMinor: 10000, method: 'cash', note: 'cash at the door', recordedBy: osUser }, { amountMinor: 8000, method: 'bank', recordedBy: osUser }],
    });
    expect(detail.emails.map((m: { kind: string }) => m.kind)).toEqual(['registration-confirmation', 'receipt', 'receipt', 'receipt', 'cancellation']);
    expect(detail.history.map((h: { action: string; actor: string }) => [h.action, h.actor])).toEqual([
      ['registered', osUser],
      ['payment_recorded', osUser],
      ['marked_paid', osUser],
      ['resent', osUser],
      ['cancelled', osUser],
    ]);
    expect(detail.history[4]).toMatchObject({ note: 'family is away', changes: { status: { from: 'PAID', to: 'CANCELLED' }, seatsFreed: 2 } });

    const human = await cli(['show', registration.reference]);
    expect(human.stdout).toContain('History:');
    expect(human.stdout).toContain(`cancelled by ${osUser}: PAID → CANCELLED, 2 seats freed; the registrant was notified (note: family is away)`);
    expect(human.stdout).toContain('cash $100.00 recorded');
    // The history's amounts read as money, not as cents in JSON.
    expect(human.stdout).toContain(`payment recorded by ${osUser}: $100.00 received by cash, $100.00 paid so far, balance $80.00 (note: cash at the door)`);
    expect(human.stdout).not.toContain('Minor');
  });

  it('shows dates in the church\'s time zone (APP_TIMEZONE), and JSON keeps the instants', async () => {
    // A start named here, not the factory's (which follows the clock): 08:00 UTC is 19:00 in Sydney in summer.
    const event = await insertEvent(office.db, { starts_at: new Date('2026-12-05T08:00:00Z') });
    const ctx = context();
    // 08:30 on 3 March in Sydney is still 2 March in UTC.
    const morning = new Date('2026-03-02T21:30:00Z');
    const paid = await insertRegistration(office.db, ctx.cipher, event.id, { contact_name: 'Early Bird', created_at: morning, paid_at: morning });
    const cancelled = await insertRegistration(office.db, ctx.cipher, event.id, { contact_name: 'Early Leaver', status: 'CANCELLED', cancel_reason: 'office', created_at: morning, cancelled_at: morning });
    const reference = paymentReference(paid.id);

    const list = await cli(['list', '--search', reference]);
    expect(list.stdout.trimEnd().split('\n')[1]?.split(/\s{2,}/).at(-1)).toBe('2026-03-03');
    const json = await cli(['list', '--search', reference, '--json']);
    expect(JSON.parse(json.stdout).registrations).toMatchObject([{ reference, createdAt: '2026-03-02T21:30:00.000Z' }]);

    const shown = await cli(['show', reference]);
    expect(shown.stdout).toContain('created:  2026-03-03 08:30');
    expect(shown.stdout).toContain('paid 2026-03-03 08:30');
    expect(shown.stdout).toContain('Family Camp (' + event.slug + '), 2026-12-05 19:00\n');
    expect(JSON.parse((await cli(['show', reference, '--json'])).stdout).registration).toMatchObject({ createdAt: '2026-03-02T21:30:00.000Z' });

    const markPaid = await cli(['mark-paid', reference, '--amount', '120']);
    expect(markPaid.code).toBe(1);
    expect(markPaid.stderr).toContain('already paid (bank) since 2026-03-03;');
    const markCancelled = await cli(['mark-paid', cancelled.id, '--amount', '120']);
    expect(markCancelled.stderr).toContain('was cancelled on 2026-03-03;');
    const cancelAgain = await cli(['cancel', cancelled.id]);
    expect(cancelAgain.stderr).toContain('was already cancelled on 2026-03-03 (office)');
  });

  it('list marks a registration whose contact email has another live registration for the same event: perhaps one person registered twice', async () => {
    const camp = await insertEvent(office.db);
    const retreat = await insertEvent(office.db);
    const { cipher } = context();
    const earlier = new Date('2026-03-02T21:30:00Z');
    const first = await insertRegistration(office.db, cipher, camp.id, { email: 'twice@example.org', contact_name: 'Twice Member', created_at: earlier });
    const second = await insertRegistration(office.db, cipher, camp.id, { email: 'Twice@Example.org', contact_name: 'Twice Member' });
    await insertRegistration(office.db, cipher, camp.id, { email: 'twice@example.org', contact_name: 'Twice Member', status: 'CANCELLED', cancel_reason: 'office', created_at: new Date('2026-03-02T20:00:00Z'), cancelled_at: earlier });
    await insertRegistration(office.db, cipher, retreat.id, { email: 'twice@example.org', contact_name: 'Twice Member' });
    await insertRegistration(office.db, cipher, camp.id, { email: 'once@example.org', contact_name: 'Once Member' });

    const json = await cli(['list', '--event', camp.slug, '--json']);
    const listed = JSON.parse(json.stdout).registrations as Array<{ reference: string; contactName: string; status: string; sameContactAs: string[] }>;
    expect(listed.map((r) => [r.contactName, r.status, r.sameContactAs])).toEqual([
      ['Twice Member', 'CANCELLED', []],
      ['Twice Member', 'PAID', [paymentReference(second.id)]],
      ['Twice Member', 'PAID', [paymentReference(first.id)]],
      ['Once Member', 'PAID', []],
    ]);
    // Another event's registration with that address is a registration for something else, not a repeat.
    const other = JSON.parse((await cli(['list', '--event', retreat.slug, '--json'])).stdout).registrations as Array<{ sameContactAs: string[] }>;
    expect(other.map((r) => r.sameContactAs)).toEqual([[]]);

    const text = await cli(['list', '--event', camp.slug, '--status', 'paid']);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(new RegExp(`^${paymentReference(first.id)} \\*  `, 'm'));
    expect(text.stdout).toContain('* the same contact email has another live registration for the event (registered twice?):');
    expect(text.stdout).toContain(`  ${paymentReference(first.id)}: also ${paymentReference(second.id)}`);
    expect(text.stdout).toContain(`  ${paymentReference(second.id)}: also ${paymentReference(first.id)}`);
  });

  it('mark-paid refuses the same payment recorded twice within 24 hours, naming it; --again records a second one', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, { status: 'PENDING', paid_at: null });
    const reference = paymentReference(id);
    const part = ['mark-paid', reference, '--amount', '40', '--partial', '--note', 'transfer of 3 March'];

    expect((await cli(part)).code).toBe(0);
    const [first] = await office.db('registration_payments').where({ registration_id: id });
    const twice = await cli(part);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain(
      `$40.00 by bank ("transfer of 3 March") was already recorded for registration ${reference} on ${formatInTimeZone(first.recorded_at, 'Australia/Sydney', 'yyyy-MM-dd HH:mm')} by ${osUser}; nothing was recorded`,
    );
    expect(twice.stderr).toContain('--again');

    const again = await cli([...part, '--again']);
    expect(again).toMatchObject({ code: 0, stdout: `recorded $40.00 by bank for ${reference}; paid $80.00, balance $40.00 (still PENDING)\n` });
    // The history says the office meant it.
    const recorded = await office.db('registration_history').where({ registration_id: id, action: 'payment_recorded' }).orderBy('id').pluck('changes');
    expect(recorded.map((changes: Record<string, unknown>) => changes.again ?? false)).toEqual([false, true]);
    // The same amount with another note is another payment: here the balance, so it pays in full.
    const last = await cli(['mark-paid', reference, '--amount', '40', '--partial', '--note', 'transfer of 10 March']);
    expect(last.code).toBe(0);
    expect(await registrationRow(id)).toMatchObject({ status: 'PAID' });
    expect(await office.db('registration_money').where({ registration_id: id }).first()).toMatchObject({ office_paid_minor: 12000, balance_minor: 0 });
    expect(await office.db('registration_payments').where({ registration_id: id }).pluck('note')).toEqual(['transfer of 3 March', 'transfer of 3 March', 'transfer of 10 March']);

    const help = await cli(['mark-paid', '--help']);
    expect(help.stdout).toContain('--again');
  });

  it('names a registration by its reference or its id; two sharing a reference are listed, to be named by id; an unknown one exits 1', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    // References are the first 8 hex characters of the id: these two share one.
    const first = await insertRegistration(office.db, ctx.cipher, event.id, { id: 'abcd1234-0000-4000-8000-000000000001', contact_name: 'First Twin' });
    await insertRegistration(office.db, ctx.cipher, event.id, { id: 'abcd1234-0000-4000-8000-000000000002', contact_name: 'Second Twin' });
    await insertRegistration(office.db, ctx.cipher, event.id, { id: 'abcd1299-0000-4000-8000-000000000003', contact_name: 'Other' });

    const ambiguous = await cli(['show', 'ABCD1234']);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('"ABCD1234" matches 2 registrations');
    expect(ambiguous.stderr).toContain('abcd1234-0000-4000-8000-000000000002  Second Twin');
    expect(ambiguous.stderr).toContain('give the full id of the one meant');

    const byId = await cli(['show', first.id, '--json']);
    expect(byId.code).toBe(0);
    expect(JSON.parse(byId.stdout).registration.id).toBe(first.id);

    const resent = await cli(['resend', 'abcd1299', '--json']);
    expect(resent.code).toBe(0);
    expect(JSON.parse(resent.stdout)).toEqual({ resent: { registrationId: 'abcd1299-0000-4000-8000-000000000003', reference: 'ABCD1299', sent: 'receipt', newLink: false } });
    const cancelled = await cli(['cancel', 'ABCD-1299', '--json']);
    expect(cancelled.code).toBe(0);
    expect(JSON.parse(cancelled.stdout)).toMatchObject({ cancellation: { reference: 'ABCD1299', previousStatus: 'PAID', seatsFreed: 1, notified: false } });
    const pendingOne = await insertRegistration(office.db, ctx.cipher, event.id, { status: 'PENDING' });
    const confirmation = await cli(['resend', pendingOne.id, '--json']);
    expect(JSON.parse(confirmation.stdout)).toMatchObject({ resent: { sent: 'confirmation' } });

    const unknown = await cli(['cancel', 'FFFF0000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no registration has the id or reference "FFFF0000"');
    const notAReference = await cli(['resend', 'smith']);
    expect(notAReference.code).toBe(1);
    expect(notAReference.stderr).toContain('no registration');
  });

  it('a name shorter than the 8-character reference is refused by every command that acts on one registration (exit 2), even when only one registration starts so', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, { id: 'c0ffee42-0000-4000-8000-000000000001', status: 'PENDING', email: 'short@example.org' });
    const before = await registrationRow(id);

    const commands: string[][] = [
      ['cancel', '{}', '--note', 'x'],
      ['mark-paid', '{}', '--amount', '120'],
      ['show', '{}'],
      ['resend', '{}'],
      ['update-contact', '{}', '--email', 'other@example.org'],
    ];
    // Every command with a unique 7-character start; cancel also as typed with a dash, and with one character.
    const cancel = commands[0] as string[];
    const attempts = [...commands.map((command) => ({ command, given: 'c0ffee4' })), { command: cancel, given: 'C0FF-EE' }, { command: cancel, given: ' c ' }];
    for (const { command, given } of attempts) {
      const refused = await cli(command.map((arg) => (arg === '{}' ? given : arg)));
      expect(refused.code, `${command[0]} ${given}`).toBe(2);
      expect(refused.stderr).toContain(`"${given.trim()}" is too short to name a registration: give its 8-character reference as printed (e.g. 3F2A9C1B)`);
      expect(refused.stderr).toContain('suggestion: find it with `eventops registrations list --search TEXT`');
      expect(refused.stdout).toBe('');
    }
    expect(await registrationRow(id)).toEqual(before);
    expect(await office.db('registration_history').where({ registration_id: id }).count<{ n: number }>({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await office.db('registration_payments').where({ registration_id: id }).count<{ n: number }>({ n: '*' }).first()).toEqual({ n: 0 });

    // Its reference, or a longer start of its id, still names it.
    const longer = await cli(['show', 'c0ffee42-0000', '--json']);
    expect(longer.code).toBe(0);
    expect(JSON.parse(longer.stdout).registration.id).toBe(id);
    const help = await cli(['cancel', '--help']);
    expect(help.stdout).toContain('its 8-character reference as printed');
  });

  it('add refuses a full event unless --over-capacity, resolves the alert it answers, and the seats and status counts follow', async () => {
    const event = await insertEvent(office.db, { capacity: 1 });
    const ctx = context();
    await insertUser(office.db, ctx.cipher, { email: `admin-${Date.now()}@example.org` });
    await insertRegistration(office.db, ctx.cipher, event.id, { contact_name: 'Already Coming' });
    const alert = await office.db.transaction((trx) =>
      raiseOperationsAlert(trx, ctx, { kind: 'sold_out', reason: '1 seat paid for but only 0 left', paymentIntentId: 'pi_test_full', amountMinor: 12000 }),
    );
    const base = ['add', '--event', event.slug, '--name', 'Late Payer', '--email', 'late@example.org', '--attendee', 'Late Payer:adult'];
    const full = await cli(base);
    expect(full.code).toBe(1);
    expect(full.stderr).toContain('has 0 places left');
    expect(full.stderr).toContain('--over-capacity');
    const badTier = await cli(['add', '--event', event.slug, '--name', 'X', '--email', 'x@example.org', '--attendee', 'X:dragon', '--over-capacity']);
    expect(badTier.code).toBe(2);
    expect(badTier.stderr).toContain('attendee 1 (X) has the ticket type "dragon", which');
    const noAttendee = await cli(['add', '--event', event.slug, '--name', 'X', '--email', 'x@example.org']);
    expect(noAttendee.code).toBe(2);
    // Named as typed, not as the option's property.
    const badAlertId = await cli([...base, '--resolve-alert', 'twelve']);
    expect(badAlertId.code).toBe(2);
    expect(badAlertId.stderr).toContain('invalid arguments: --resolve-alert must be an alert id');
    expect(badAlertId.stderr).toContain('see `eventops registrations add --help`');
    const resolvedUnknown = await cli([...base, '--over-capacity', '--resolve-alert', '999999']);
    expect(resolvedUnknown.code).toBe(1);
    // Only a payment kept without a registration, for this event, answered by a registration paid by that payment.
    const otherEvent = await insertEvent(office.db);
    const [forOtherEvent, notAKeptPayment] = await office.db.transaction(async (trx) => [
      await raiseOperationsAlert(trx, ctx, { kind: 'sold_out', reason: 'full', amountMinor: 12000, details: { eventId: otherEvent.id } }),
      await raiseOperationsAlert(trx, ctx, { kind: 'reconcile_mismatch', reason: 'the provider does not know this checkout' }),
    ]);
    const refusals: Array<[string[], string]> = [
      [['--paid', 'bank', '--resolve-alert', String(forOtherEvent.id)], 'is for a payment for another event'],
      [['--paid', 'bank', '--resolve-alert', String(notAKeptPayment.id)], 'is a reconcile_mismatch alert, not a payment kept without a registration'],
      [['--paid', 'none', '--resolve-alert', String(alert.id)], 'is for money already received'],
      [['--paid', 'bank', '--resolve-alert', String(alert.id)], 'is for a card payment (pi_test_full), so the registration is paid by card, not by bank'],
    ];
    for (const [extra, why] of refusals) {
      const refused = await cli([...base, '--over-capacity', ...extra]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(why);
    }
    expect(await office.db('operations_alerts').whereIn('id', [alert.id, forOtherEvent.id, notAKeptPayment.id]).whereNotNull('resolved_at').count<{ n: number }>({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await office.db('registrations').where({ event_id: event.id }).count<{ n: number }>({ n: '*' }).first()).toEqual({ n: 1 });
    const openBeforeAdd = (await readOperationsStatus(office.db, new Date())).openAlerts;

    const added = await cli([...base, '--over-capacity', '--resolve-alert', String(alert.id), '--note', 'paid by card while full', '--json']);
    expect(added.stderr).toBe('');
    expect(added.code).toBe(0);
    const { registration } = JSON.parse(added.stdout);
    expect(registration).toMatchObject({ status: 'PAID', method: 'card', totalMinor: 12000, seatsLeft: -1, overCapacity: true, resolvedAlert: alert.id });
    const alertRow = await office.db('operations_alerts').where({ id: alert.id }).first();
    expect(alertRow.resolved_at).not.toBeNull();
    expect(alertRow.resolution).toBe(`registered by hand as ${registration.reference}: paid by card while full`);
    expect((await readOperationsStatus(office.db, new Date())).openAlerts).toBe(openBeforeAdd - 1);

    const shown = JSON.parse((await cli(['show', registration.reference, '--json'])).stdout).registration;
    expect(shown.alerts).toMatchObject([{ id: alert.id, kind: 'sold_out' }]);
    expect(shown.history[0]).toMatchObject({ action: 'registered', changes: { overCapacityBy: 1, resolvedAlert: alert.id }, note: 'paid by card while full' });

    await cli(['cancel', registration.reference]);
    const { seatsLeft } = await import('../../src/registrations/registrations.js');
    expect(await seatsLeft(office.db, { id: event.id, capacity: 1 }, new Date())).toBe(0);
  });

  it('add matches a ticket type id as written or, when only one id is the same ignoring case, that one; otherwise it names the event\'s ticket types', async () => {
    const event = await insertEvent(office.db, {
      pricing: JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 12000 }, { id: 'child', label: 'Child', price: 6000 }] }),
    });
    const add = (email: string, ...attendees: string[]) =>
      cli(['add', '--event', event.slug, '--name', 'Bob Tier', '--email', email, ...attendees.flatMap((attendee) => ['--attendee', attendee]), '--json']);

    const capitalised = await add('bob@example.org', 'Bob Tier:Adult', 'Kit Tier:CHILD');
    expect(capitalised.stderr).toBe('');
    expect(capitalised.code).toBe(0);
    const { registrationId } = JSON.parse(capitalised.stdout).registration;
    expect(await registrationRow(registrationId)).toMatchObject({
      total_minor: 18000,
      attendees: [{ name: 'Bob Tier', tier: 'adult' }, { name: 'Kit Tier', tier: 'child' }],
    });

    // With --json the refusal is JSON on stderr too: a script reads its code, message and suggestion.
    const unknown = await add('dragon@example.org', 'Bob Tier:adult', 'Kit Tier:kid');
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stderr)).toEqual({
      error: {
        code: 'usage',
        message: `attendee 2 (Kit Tier) has the ticket type "kid", which ${event.slug} does not have; its ticket types are adult (Adult, $120.00), child (Child, $60.00); nothing was registered`,
        suggestion: 'give one of those ids after the colon (case does not matter), e.g. --attendee "Kit Tier:adult"',
        exitCode: 2,
      },
    });

    // Ids differing only in case: a guess either way, so only the exact id is taken.
    const twoCases = await insertEvent(office.db, {
      pricing: JSON.stringify({ tiers: [{ id: 'VIP', label: 'Front row', price: 5000 }, { id: 'vip', label: 'Balcony', price: 3000 }] }),
    });
    const ambiguous = await cli(['add', '--event', twoCases.slug, '--name', 'Bob Tier', '--email', 'vip@example.org', '--attendee', 'Bob Tier:Vip']);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(`which matches VIP and vip of ${twoCases.slug} when case is ignored; its ticket types are VIP (Front row, $50.00), vip (Balcony, $30.00)`);
    expect(ambiguous.stderr).toContain('give the id exactly as written');
    const exact = await cli(['add', '--event', twoCases.slug, '--name', 'Bob Tier', '--email', 'vip@example.org', '--attendee', 'Bob Tier:vip', '--json']);
    expect(exact.code).toBe(0);
    expect(JSON.parse(exact.stdout).registration).toMatchObject({ totalMinor: 3000 });
    expect(await office.db('registrations').whereIn('event_id', [event.id, twoCases.id]).count<{ n: number }>({ n: '*' }).first()).toEqual({ n: 2 });
  });

  it('mark-paid reads the amount as the office writes it in APP_LOCALE: a currency sign, a decimal comma where the locale has one', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const owing = async () =>
      paymentReference((await insertRegistration(office.db, ctx.cipher, event.id, { status: 'PENDING', total_minor: 12050, line_items: JSON.stringify([{ label: 'Adult', amount: 12050 }]) })).id);

    const withSign = await cli(['mark-paid', await owing(), '--amount', '$120.50']);
    expect(withSign.stderr).toBe('');
    expect(withSign.code).toBe(0);

    const german = { ...office.env, APP_LOCALE: 'de-DE', APP_CURRENCY: 'EUR' };
    const decimalComma = await runCli(['registrations', 'mark-paid', await owing(), '--amount', '120,50'], { env: german });
    expect(decimalComma.stderr).toBe('');
    expect(decimalComma.code).toBe(0);
    expect(decimalComma.stdout).toContain('120,50');
    const pointAnyway = await runCli(['registrations', 'mark-paid', await owing(), '--amount', '120.50 €'], { env: german });
    expect(pointAnyway.code).toBe(0);

    // Where the point is the decimal separator, a comma before the cents is refused with the way to write it.
    const commaHere = await cli(['mark-paid', await owing(), '--amount', '120,50']);
    expect(commaHere.code).toBe(2);
    expect(commaHere.stderr).toContain('the cents go after "."');
    const negative = await cli(['mark-paid', await owing(), '--amount=-120.50']);
    expect(negative.code).toBe(2);
    expect(negative.stderr).toContain('--amount must be more than 0');
  });

  it('mark-paid refuses more than the balance and suggests recording the balance with a note of the difference to pay back, which a shell passes on intact', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, { status: 'PENDING', total_minor: 22050, line_items: JSON.stringify([{ label: 'Adult', amount: 22050 }]) });
    const reference = paymentReference(id);
    expect((await cli(['mark-paid', reference, '--amount', '50', '--partial', '--method', 'cash'])).code).toBe(0);

    const over = await cli(['mark-paid', reference, '--amount', '200', '--note', "Kim's transfer"]);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain('$200.00 is not what is owing ($170.50); nothing was recorded');
    const suggestion = /suggestion: (.*)/.exec(over.stderr)?.[1] ?? '';
    expect(suggestion).toBe(
      "record the balance ($170.50) and note the difference to pay back, e.g. --amount 170.50 --note 'Kim'\\''s transfer; received $200.00, $29.50 to pay back'",
    );
    expect(await office.db('registration_payments').where({ registration_id: id }).pluck('amount_minor')).toEqual([5000]);

    // Typed as suggested into a shell, the note keeps its currency signs and apostrophe.
    const typed = execFileSync('sh', ['-c', `printf '%s\\n' ${suggestion.slice(suggestion.indexOf('--amount'))}`], { encoding: 'utf8' }).trimEnd().split('\n');
    expect(typed).toEqual(['--amount', '170.50', '--note', "Kim's transfer; received $200.00, $29.50 to pay back"]);
    const followed = await cli(['mark-paid', reference, ...typed]);
    expect(followed.code).toBe(0);
    expect(await registrationRow(id)).toMatchObject({ status: 'PAID' });
    expect(await office.db('registration_payments').where({ registration_id: id }).orderBy('id').pluck('note')).toEqual([null, "Kim's transfer; received $200.00, $29.50 to pay back"]);
  });

  it('mark-paid of a free registration says it is free, with nothing to pay, not "free since" the day it was made', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, {
      payment_method: 'free',
      total_minor: 0,
      line_items: JSON.stringify([{ label: 'Adult', amount: 0 }]),
      paid_at: new Date('2026-03-02T21:30:00Z'),
    });
    const reference = paymentReference(id);

    const refused = await cli(['mark-paid', reference, '--amount', '10']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`eventops: registration ${reference} is free (nothing to pay); nothing was recorded\n`);
    expect(await office.db('registration_payments').where({ registration_id: id }).count<{ n: number }>({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('mark-paid --help shows the amount as a plain number, and a currency sign only in single quotes: a shell turns $150 into 50', async () => {
    const help = await cli(['mark-paid', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('as a plain number');
    expect(help.stdout).toContain("--amount '$150'");
    expect(help.stdout).toContain('reaches eventops as 50');
    // No longer offered as a way to write it.
    expect(help.stdout).not.toContain('"$240"');
  });

  it('a registration is named as a volunteer reads its reference (lower case, with a space); an email address gets the way to its reference', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const { id } = await insertRegistration(office.db, ctx.cipher, event.id, { email: 'named@example.org', contact_name: 'Named Person', status: 'PENDING' });
    const reference = paymentReference(id);

    const spaced = await cli(['show', ` ${reference.slice(0, 4).toLowerCase()} ${reference.slice(4).toLowerCase()} `, '--json']);
    expect(spaced.stderr).toBe('');
    expect(spaced.code).toBe(0);
    expect(JSON.parse(spaced.stdout).registration.id).toBe(id);

    const byEmail = await cli(['show', 'named@example.org']);
    expect(byEmail.code).toBe(1);
    expect(byEmail.stderr).toContain('is an email address');
    expect(byEmail.stderr).toContain('eventops registrations list --search named@example.org');
  });

  it('export writes one row per attendee, neutralises formula cells, and a file only its owner can read', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    const hostile = await insertRegistration(office.db, ctx.cipher, event.id, {
      email: 'evil@example.org',
      contact_name: '=HYPERLINK("http://x.example","click")',
      attendees: JSON.stringify([{ name: '+SUM(A1:A9)', tier: 'adult' }, { name: '@cmd', tier: 'adult' }]),
      attendee_count: 2,
      contact_mobile_enc: ctx.cipher.encrypt('-1+1'),
      total_minor: 24000,
      paid_at: new Date(),
    });
    await insertRegistration(office.db, ctx.cipher, event.id, {
      email: 'plain@example.org',
      contact_name: 'Plain Person',
      attendees: JSON.stringify([{ name: 'José Núñez', tier: 'adult' }]),
      status: 'PENDING',
    });

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-export-'));
    const file = path.join(dir, 'attendees.csv');
    fs.writeFileSync(file, 'old contents', { mode: 0o644 });
    const summary = await cli(['export', '--event', event.slug, '--out', file, '--json']);
    expect(JSON.parse(summary.stdout)).toEqual({ file, rows: 3, format: 'csv', mode: '0600' });
    const written = await cli(['export', '--event', event.slug, '--out', file]);
    expect(written.code).toBe(0);
    expect(written.stdout).toBe(`wrote 3 attendee rows to ${file} (mode 0600)\n`);
    expect(written.stdout + written.stderr).not.toContain('evil@example.org');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);

    // Excel reads a CSV without a UTF-8 byte-order mark in the legacy code page.
    const bytes = fs.readFileSync(file);
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const text = bytes.toString('utf8');
    expect(text.startsWith('\uFEFFattendee_name,')).toBe(true);
    const rows = parse(text, { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(rows).toEqual([
      {
        attendee_name: "'+SUM(A1:A9)",
        ticket: 'Adult',
        registration_reference: paymentReference(hostile.id),
        contact_name: `'=HYPERLINK("http://x.example","click")`,
        email: 'evil@example.org',
        mobile: "'-1+1",
        status: 'PAID',
        amount_paid: '240.00',
        total: '240.00',
        balance_owing: '0.00',
        checked_in_at: '',
        checked_in_by: '',
        checked_out_at: '',
        checked_out_by: '',
        checkin_flag: '',
      },
      // The registration's money is on its first attendee's row only, so a column sum counts it once.
      expect.objectContaining({ attendee_name: "'@cmd", registration_reference: paymentReference(hostile.id), contact_name: `'=HYPERLINK("http://x.example","click")`, amount_paid: '', total: '', balance_owing: '' }),
      expect.objectContaining({ attendee_name: 'José Núñez', contact_name: 'Plain Person', email: 'plain@example.org', mobile: '', status: 'PENDING', amount_paid: '0.00', total: '120.00', balance_owing: '120.00' }),
    ]);

    const json = await cli(['export', '--event', event.slug, '--format', 'json']);
    expect(json.code).toBe(0);
    expect(json.stdout.startsWith('{')).toBe(true);
    const jsonRows = JSON.parse(json.stdout).attendees;
    expect(jsonRows[0]).toMatchObject({ attendeeName: '+SUM(A1:A9)', amountPaid: '240.00', total: '240.00', balanceOwing: '0.00' });
    expect(jsonRows[1]).toMatchObject({ attendeeName: '@cmd', amountPaid: null, total: null, balanceOwing: null });
    const unknownEvent = await cli(['export', '--event', 'no-such-event']);
    expect(unknownEvent.code).toBe(1);
    const badFormat = await cli(['export', '--event', event.slug, '--format', 'xlsx']);
    expect(badFormat.code).toBe(2);
  });

  it('export lists only who is coming: cancelled registrations and released unpaid holds are left out unless --include-cancelled', async () => {
    const event = await insertEvent(office.db);
    const ctx = context();
    await insertRegistration(office.db, ctx.cipher, event.id, { contact_name: 'Coming Paid', attendees: JSON.stringify([{ name: 'Coming Paid', tier: 'adult' }]), paid_at: new Date() });
    await insertRegistration(office.db, ctx.cipher, event.id, { contact_name: 'Coming Pending', attendees: JSON.stringify([{ name: 'Coming Pending', tier: 'adult' }]), status: 'PENDING' });
    await insertRegistration(office.db, ctx.cipher, event.id, {
      contact_name: 'Hold Released',
      attendees: JSON.stringify([{ name: 'Hold Released', tier: 'adult' }]),
      status: 'CANCELLED',
      cancelled_at: new Date(),
      cancel_reason: 'unpaid_hold',
    });
    const officeCancelled = await insertRegistration(office.db, ctx.cipher, event.id, { contact_name: 'Office Cancelled', attendees: JSON.stringify([{ name: 'Office Cancelled', tier: 'adult' }]), status: 'PENDING' });
    expect((await cli(['cancel', paymentReference(officeCancelled.id)])).code).toBe(0);

    const coming = await cli(['export', '--event', event.slug]);
    expect(coming.code).toBe(0);
    const rows = parse(coming.stdout, { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(rows.map((row) => [row.attendee_name, row.status])).toEqual([
      ['Coming Paid', 'PAID'],
      ['Coming Pending', 'PENDING'],
    ]);
    const all = await cli(['export', '--event', event.slug, '--include-cancelled', '--format', 'json']);
    expect(all.code).toBe(0);
    expect((JSON.parse(all.stdout) as { attendees: Array<{ attendeeName: string; status: string }> }).attendees.map((a) => a.status)).toEqual(['PAID', 'PENDING', 'CANCELLED', 'CANCELLED']);
  });
});
