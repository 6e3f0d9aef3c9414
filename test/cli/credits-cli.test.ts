import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useOfficeCli } from '../support/office-cli.js';

// The subprocess runs on the real clock; mail it queues is delivered here to a real SMTP sink.
const office = useOfficeCli();
const { mail } = office;
const registrations = (args: string[]) => runCli(['registrations', ...args], { env: office.env });
const funds = (args: string[]) => runCli(['funds', ...args], { env: office.env });
const money = (id: string) => office.db('registration_money').where({ registration_id: id }).first();
const row = (id: string) => office.db('registrations').where({ id }).first();
const creditRows = (id: string) => office.db('registration_credits').where({ registration_id: id }).orderBy('id').select('id', 'kind', 'fund', 'amount_minor', 'reverses_id');

async function pendingRegistration(eventId: string, email: string, totalMinor = 24000) {
  const { id } = await insertRegistration(office.db, office.context().cipher, eventId, { email, status: 'PENDING', total_minor: totalMinor, contact_name: `Family ${email}` });
  return { id, reference: paymentReference(id) };
}

describe('eventops registrations credit: help with the cost from a named fund', () => {
  it('a credit lowers the balance without being a payment; one taking it to 0 makes the registration PAID and the receipt names the help', async () => {
    const event = await insertEvent(office.db);
    const { id, reference } = await pendingRegistration(event.id, 'hope@example.org');
    expect((await registrations(['mark-paid', reference, '--amount', '100', '--partial', '--json'])).code).toBe(0);

    const part = await registrations(['credit', reference, '--amount', '50', '--fund', 'Camp scholarships', '--note', 'approved by the pastor', '--json']);
    expect(part.stderr).toBe('');
    expect(part.code).toBe(0);
    expect(JSON.parse(part.stdout)).toMatchObject({ credit: { fund: 'Camp scholarships', creditedMinor: 5000, balanceMinor: 9000, status: 'PENDING', receiptQueued: false } });
    expect(await money(id)).toMatchObject({ office_paid_minor: 10000, credited_minor: 5000, paid_minor: 10000, balance_minor: 9000 });
    expect(await office.db('registration_payments').where({ registration_id: id }).pluck('amount_minor')).toEqual([10000]);

    const shown = await registrations(['show', reference]);
    expect(shown.stdout).toContain('total $240.00, paid $100.00, help $50.00, balance $90.00');
    expect(shown.stdout).toMatch(/credit #\d+ \$50\.00 from Camp scholarships recorded .* approved by the pastor/);
    expect(shown.stdout).toMatch(/credit recorded by .*: \$50\.00 help from Camp scholarships \(credit #\d+\), balance \$90\.00/);

    const rest = await registrations(['credit', reference, '--amount', '90', '--fund', 'Camp scholarships', '--json']);
    expect(rest.code).toBe(0);
    expect(JSON.parse(rest.stdout)).toMatchObject({ credit: { balanceMinor: 0, status: 'PAID', receiptQueued: true } });
    expect(await row(id)).toMatchObject({ status: 'PAID', payment_method: 'bank' });
    expect(await money(id)).toMatchObject({ office_paid_minor: 10000, credited_minor: 14000, paid_minor: 10000, balance_minor: 0 });
    await deliverQueuedMail(office.context(), { limit: 100 });
    // A receipt for the part the office recorded, then one when help settled the rest.
    const receipts = mail.sink.messages.filter((m) => m.envelope.to.includes('hope@example.org') && m.subject === 'Receipt: Family Camp');
    expect(receipts).toHaveLength(2);
    // The queue sends in parallel, so the sink holds them in either order.
    expect(receipts.filter((m) => m.text?.includes('Balance left: $140.00'))).toHaveLength(1);
    const receipt = receipts.find((m) => m.text?.includes('Help from'));
    expect(receipt?.text).toContain('Help from Camp scholarships: −$50.00');
    expect(receipt?.text).toContain('Help from Camp scholarships: −$90.00');
    expect(receipt?.text).toContain('Total paid: $100.00');
  });

  it('a confirmation resent after help says what was received, the help, and the balance after both', async () => {
    const event = await insertEvent(office.db);
    const { reference } = await pendingRegistration(event.id, 'grace-resend@example.org');
    expect((await registrations(['mark-paid', reference, '--amount', '100', '--partial', '--json'])).code).toBe(0);
    expect((await registrations(['credit', reference, '--amount', '50', '--fund', 'Camp scholarships', '--json'])).code).toBe(0);

    const resent = await registrations(['resend', reference]);
    expect(resent.code, resent.stderr).toBe(0);
    await deliverQueuedMail(office.context(), { limit: 100 });
    const confirmation = mail.sink.messages.filter((m) => m.envelope.to.includes('grace-resend@example.org') && m.subject.startsWith('Registration')).at(-1);
    expect(confirmation?.text).toContain('Received so far: $100.00');
    expect(confirmation?.text).toContain('Help with the cost: $50.00');
    expect(confirmation?.text).toContain('Still to pay: $90.00');
  });

  it('a credit is never more than the balance, not for a paid or cancelled registration, and not the same one twice in 24 hours without --again', async () => {
    const event = await insertEvent(office.db);
    const { id, reference } = await pendingRegistration(event.id, 'over@example.org', 12000);

    const over = await registrations(['credit', reference, '--amount', '130', '--fund', 'Camp scholarships']);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain('$130.00 is more than registration');
    expect(over.stderr).toContain('owes ($120.00)');
    expect(over.stderr).toContain('--amount 120');
    expect(await creditRows(id)).toEqual([]);

    expect((await registrations(['credit', reference, '--amount', '20', '--fund', 'Camp scholarships'])).code).toBe(0);
    const twice = await registrations(['credit', reference, '--amount', '20', '--fund', 'Camp scholarships']);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('was already credited');
    expect(twice.stderr).toContain('--again');
    expect(await creditRows(id)).toHaveLength(1);
    expect((await registrations(['credit', reference, '--amount', '20', '--fund', 'Camp scholarships', '--again'])).code).toBe(0);
    expect(await money(id)).toMatchObject({ credited_minor: 4000, balance_minor: 8000 });

    const paid = await insertRegistration(office.db, office.context().cipher, event.id, { status: 'PAID', paid_at: new Date() });
    const refusedPaid = await registrations(['credit', paymentReference(paid.id), '--amount', '10', '--fund', 'Camp scholarships']);
    expect(refusedPaid.code).toBe(1);
    expect(refusedPaid.stderr).toContain('is already paid');
    const cancelled = await insertRegistration(office.db, office.context().cipher, event.id, { status: 'CANCELLED', cancelled_at: new Date(), cancel_reason: 'office' });
    const refusedCancelled = await registrations(['credit', paymentReference(cancelled.id), '--amount', '10', '--fund', 'Camp scholarships']);
    expect(refusedCancelled.code).toBe(1);
    expect(refusedCancelled.stderr).toContain('was cancelled');
    expect(await office.db('registration_credits').whereIn('registration_id', [paid.id, cancelled.id])).toEqual([]);

    const noFund = await registrations(['credit', reference, '--amount', '10']);
    expect(noFund.code).toBe(2);
    expect(noFund.stderr).toContain('--amount and --fund are required');
    const badAmount = await registrations(['credit', reference, '--amount', '-5', '--fund', 'Camp scholarships']);
    expect(badAmount.code).toBe(2);
  });

  it('a reversal is a row beside the credit; a PAID registration that owes again goes back to PENDING; a credit is reversed once', async () => {
    const event = await insertEvent(office.db);
    const { id, reference } = await pendingRegistration(event.id, 'back@example.org', 12000);
    const full = JSON.parse((await registrations(['credit', reference, '--amount', '120', '--fund', 'Youth fund', '--json'])).stdout) as { credit: { creditId: number; status: string; receiptQueued: boolean } };
    // Covered whole by help: nothing was received, so no "payment received" receipt.
    expect(full.credit).toMatchObject({ status: 'PAID', receiptQueued: false });
    expect(await row(id)).toMatchObject({ status: 'PAID' });

    const reversed = await registrations(['credit', reference, '--reverse', String(full.credit.creditId), '--note', 'entered on the wrong family', '--json']);
    expect(reversed.stderr).toBe('');
    expect(reversed.code).toBe(0);
    expect(JSON.parse(reversed.stdout)).toMatchObject({ reversal: { fund: 'Youth fund', reversedMinor: 12000, balanceMinor: 12000, status: 'PENDING' } });
    expect(await row(id)).toMatchObject({ status: 'PENDING', paid_at: null });
    expect(await creditRows(id)).toEqual([
      { id: full.credit.creditId, kind: 'credit', fund: 'Youth fund', amount_minor: 12000, reverses_id: null },
      { id: expect.any(Number), kind: 'reversal', fund: 'Youth fund', amount_minor: 12000, reverses_id: full.credit.creditId },
    ]);
    expect(await money(id)).toMatchObject({ credited_minor: 0, balance_minor: 12000 });

    const again = await registrations(['credit', reference, '--reverse', String(full.credit.creditId)]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('was already reversed');
    const unknown = await registrations(['credit', reference, '--reverse', '999999']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('has no credit #999999');
    const mixed = await registrations(['credit', reference, '--reverse', '1', '--amount', '5']);
    expect(mixed.code).toBe(2);
    expect(await creditRows(id)).toHaveLength(2);
  });
});

describe('eventops registrations balances and funds report', () => {
  it('lists total, paid, credited, balance and due date per registration; --overdue filters; --out writes CSV', async () => {
    const startsAt = new Date(Date.now() + 20 * 24 * 3600_000);
    const event = await insertEvent(office.db, { starts_at: startsAt, ends_at: new Date(startsAt.getTime() + 3600_000), unpaid_hold_days: 3 });
    const past = await insertEvent(office.db, { starts_at: new Date(Date.now() - 2.5 * 24 * 3600_000), ends_at: new Date(Date.now() - 2 * 24 * 3600_000) });
    const helped = await pendingRegistration(event.id, 'helped@example.org');
    const held = await insertRegistration(office.db, office.context().cipher, event.id, { email: 'held@example.org', status: 'PENDING', created_at: new Date(Date.now() - 5 * 24 * 3600_000) });
    await insertRegistration(office.db, office.context().cipher, event.id, { status: 'PAID', paid_at: new Date() });
    await insertRegistration(office.db, office.context().cipher, event.id, { status: 'CANCELLED', cancelled_at: new Date(), cancel_reason: 'office' });
    expect((await registrations(['credit', helped.reference, '--amount', '40', '--fund', 'Camp scholarships'])).code).toBe(0);

    const listed = await registrations(['balances', '--event', event.slug, '--json']);
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(0);
    const { balances, owedMinor } = JSON.parse(listed.stdout) as { balances: Array<Record<string, unknown>>; owedMinor: number };
    expect(balances).toHaveLength(3);
    expect(balances.find((b) => b.reference === helped.reference)).toMatchObject({ totalMinor: 24000, paidMinor: 0, creditedMinor: 4000, balanceMinor: 20000, dueBecause: 'event_start', overdueDays: null });
    // The hold ended two days ago: its release is the due date, and it is overdue.
    const heldRow = balances.find((b) => b.reference === paymentReference(held.id));
    expect(heldRow).toMatchObject({ balanceMinor: 12000, dueBecause: 'unpaid_hold' });
    // Three days after it was made, in the church's time zone (a change of daylight saving may take an hour off).
    expect([1, 2]).toContain(heldRow?.overdueDays);
    expect(balances.find((b) => b.status === 'PAID')).toMatchObject({ balanceMinor: 0, dueAt: null, overdueDays: null });
    expect(owedMinor).toBe(32000);

    const overdue = JSON.parse((await registrations(['balances', '--event', event.slug, '--overdue', '--json'])).stdout) as { balances: Array<{ reference: string }> };
    expect(overdue.balances.map((b) => b.reference)).toEqual([paymentReference(held.id)]);

    const after = await pendingRegistration(past.id, 'after@example.org', 6000);
    const afterEvent = JSON.parse((await registrations(['balances', '--event', past.slug, '--overdue', '--json'])).stdout) as { balances: Array<Record<string, unknown>> };
    expect(afterEvent.balances).toEqual([expect.objectContaining({ reference: after.reference, dueBecause: 'event_start', overdueDays: 2 })]);

    const text = await registrations(['balances', '--event', event.slug]);
    expect(text.stdout).toMatch(/^REFERENCE\s+CONTACT\s+STATUS\s+TOTAL\s+PAID\s+CREDITED\s+BALANCE\s+DUE\s+OVERDUE$/m);
    expect(text.stdout).toContain('owed in all: $320.00');

    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'balances-')), 'owing.csv');
    const written = await registrations(['balances', '--event', event.slug, '--out', file]);
    expect(written.code).toBe(0);
    const csv = parse(fs.readFileSync(file, 'utf8'), { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(csv.find((r) => r.reference === helped.reference)).toMatchObject({ total: '240.00', paid: '0.00', credited: '40.00', balance: '200.00', due_because: 'event_start', overdue_days: '' });

    const unknown = await registrations(['balances', '--event', 'no-such-event']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('event "no-such-event" not found');
  });

  it('funds report: credits per fund and per event, net of reversals', async () => {
    const camp = await insertEvent(office.db, { title: 'Winter Camp' });
    const retreat = await insertEvent(office.db, { title: 'Retreat' });
    const a = await pendingRegistration(camp.id, 'fa@example.org');
    const b = await pendingRegistration(camp.id, 'fb@example.org');
    const c = await pendingRegistration(retreat.id, 'fc@example.org');
    await registrations(['credit', a.reference, '--amount', '50', '--fund', 'Report fund']);
    const reversedCredit = JSON.parse((await registrations(['credit', b.reference, '--amount', '30', '--fund', 'Report fund', '--json'])).stdout) as { credit: { creditId: number } };
    await registrations(['credit', b.reference, '--reverse', String(reversedCredit.credit.creditId)]);
    await registrations(['credit', c.reference, '--amount', '25', '--fund', 'Report fund']);
    await registrations(['credit', c.reference, '--amount', '10', '--fund', 'Other report fund']);

    const all = JSON.parse((await funds(['report', '--json'])).stdout) as { funds: Array<{ fund: string; netMinor: number; events: Array<Record<string, unknown>> }> };
    const fund = all.funds.find((f) => f.fund === 'Report fund');
    expect(fund?.netMinor).toBe(7500);
    expect(fund?.events).toHaveLength(2);
    expect(fund?.events).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ eventSlug: camp.slug, creditedMinor: 8000, reversedMinor: 3000, netMinor: 5000, registrations: 2 }),
        expect.objectContaining({ eventSlug: retreat.slug, creditedMinor: 2500, reversedMinor: 0, netMinor: 2500, registrations: 1 }),
      ]),
    );

    const one = JSON.parse((await funds(['report', '--event', retreat.slug, '--json'])).stdout) as { funds: Array<{ fund: string; netMinor: number }> };
    expect(one.funds.map((f) => [f.fund, f.netMinor]).sort()).toEqual([['Other report fund', 1000], ['Report fund', 2500]]);
    const text = await funds(['report', '--event', camp.slug]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('Report fund: $50.00');
    expect(text.stdout).toContain('($80.00 credited, $30.00 reversed)');
    expect((await funds(['report', '--event', 'nowhere'])).code).toBe(1);
  });

  it('the printed roll, the export and the list carry the balance after help: "Owes" is what is left', async () => {
    const event = await insertEvent(office.db);
    const { reference } = await pendingRegistration(event.id, 'roll@example.org', 12000);
    expect((await registrations(['credit', reference, '--amount', '45', '--fund', 'Camp scholarships'])).code).toBe(0);

    const roll = await registrations(['roll', event.slug]);
    expect(roll.code).toBe(0);
    expect(roll.stdout).toContain('Owes $75.00');
    expect(roll.stdout).not.toContain('Owes $120.00');

    const exported = await registrations(['export', '--event', event.slug]);
    const [attendee] = parse(exported.stdout, { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(attendee).toMatchObject({ amount_paid: '0.00', total: '120.00', balance_owing: '75.00' });

    const listed = JSON.parse((await registrations(['list', '--event', event.slug, '--json'])).stdout) as { registrations: Array<Record<string, unknown>> };
    expect(listed.registrations).toEqual([expect.objectContaining({ reference, paidMinor: 0, creditedMinor: 4500, balanceMinor: 7500 })]);
  });
});
