import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payAtDoor } from '../../src/door/pay-at-door.js';
import type { CheckinLink } from '../../src/door/links.js';
import { sendEventReminders } from '../../src/jobs/send-reminders.js';
import { sendClearanceDigest } from '../../src/jobs/send-clearance-digest.js';
import { listBalances } from '../../src/office/registrations/balances.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';
import { queuedMessages } from '../support/webhook-events.js';
import { getEventBySlug } from '../../src/office/events.js';
import { creditRegistration } from '../../src/office/registrations/credit.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { registrationMoney } from '../../src/registrations/ledger.js';
import { registerForEvent } from '../../src/signup/register.js';
import { insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { fromReferenceNow, referenceNow } from '../support/test-now.js';

let harness: PaymentsHarness;
const smtp = useSinkAndMailer();
let event: EventRecord;
const balanceDue = fromReferenceNow({ days: 20 });

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: referenceNow() });
  const { slug } = await insertEvent(harness.tdb.db, {
    online_payment: true,
    starts_at: fromReferenceNow({ days: 40 }),
    balance_terms: JSON.stringify({ deposit: { perRegistration: 5000 }, balanceDueAt: balanceDue.toISOString().slice(0, 10), minimumPayment: null, instalments: null, overdue: 'alert' }),
  });
  event = (await getEventBySlug(harness.tdb.db, slug)) as EventRecord;
});
afterAll(() => harness.close());

const money = () => moneyFormatter(harness.ctx.config.regional);

/** A bank registration (12000) choosing the deposit, whose deposit the office records: PENDING, owing 7000. */
async function bankDepositPaid(email: string): Promise<string> {
  harness.ctx.clock.set(referenceNow());
  const outcome = await registerForEvent(harness.ctx, event, { contact: { name: 'Bank Family', email }, attendees: [{ name: 'Kid', tier: 'adult' }], family: false, payment: 'bank', choice: 'deposit' });
  if (outcome.kind !== 'registered') throw new Error('expected a bank registration');
  await markRegistrationPaid(harness.ctx, { registration: outcome.registrationId, amountMinor: 5000, method: 'bank', partial: true, actor: 'office' }, money());
  expect((await registrationMoney(harness.tdb.db, outcome.registrationId)).balanceMinor).toBe(7000);
  return outcome.registrationId;
}

describe('balances after a deposit', () => {
  it('a bank deposit, then the balance in cash at the door: PAID with both payments in the ledger', async () => {
    const id = await bankDepositPaid('door@example.org');
    const link = { eventId: event.id, canTakePayment: true, label: 'Front door' } as CheckinLink;
    await payAtDoor(harness.ctx, link, { registrationId: id, method: 'cash' });
    expect(await harness.tdb.db('registrations').where({ id }).first()).toMatchObject({ status: 'PAID', total_minor: 12000 });
    expect(await harness.tdb.db('registration_payments').where({ registration_id: id }).orderBy('id').select('method', 'amount_minor')).toEqual([
      { method: 'bank', amount_minor: 5000 },
      { method: 'cash', amount_minor: 7000 },
    ]);
  });

  it('the confirmation of a bank deposit states the deposit and the due dates; each part the office records gets a receipt with the help and the balance left', async () => {
    harness.ctx.clock.set(referenceNow());
    const outcome = await registerForEvent(harness.ctx, event, { contact: { name: 'Receipt Family', email: 'receipts@example.org' }, attendees: [{ name: 'Kid', tier: 'adult' }], family: false, payment: 'bank', choice: 'deposit' });
    if (outcome.kind !== 'registered') throw new Error('expected a bank registration');
    const id = outcome.registrationId;
    const mine = async (kind: string) => (await queuedMessages(harness.ctx, kind)).filter((message) => message.to.includes('receipts@example.org'));
    const [confirmation] = await mine('registration-confirmation');
    expect(confirmation?.text).toContain(`${money()(5000)} deposit, due now to keep your place`);
    expect(confirmation?.text).toMatch(new RegExp(`${money()(7000).replace('$', '\\$')} by \\d+ \\w+ \\d{4}`));

    await creditRegistration(harness.ctx, { registration: id, amountMinor: 1000, fund: 'Camp scholarships', actor: 'office' }, money());
    await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 5000, method: 'bank', partial: true, actor: 'office' }, money());
    const [receipt, ...others] = await mine('receipt');
    expect(others).toEqual([]);
    expect(receipt?.text).toContain(`This payment: ${money()(5000)}`);
    expect(receipt?.text).toContain(`Help from Camp scholarships: −${money()(1000)}`);
    expect(receipt?.text).toContain(`Balance left: ${money()(6000)}`);
    expect(receipt?.text).not.toContain('your registration is confirmed');
    await markRegistrationPaid(harness.ctx, { registration: id, amountMinor: 6000, method: 'bank', actor: 'office' }, money());
  });

  it('help that takes the balance to 0 stops its reminders; an overdue balance alerts the office and reminds the family once', async () => {
    const helped = await bankDepositPaid('helped@example.org');
    const owing = await bankDepositPaid('owing@example.org');
    await creditRegistration(harness.ctx, { registration: helped, amountMinor: 7000, fund: 'Camp scholarships', actor: 'office' }, money());

    harness.ctx.clock.set(new Date(balanceDue.getTime() + 2 * 24 * 60 * 60_000));
    // A dry run of the reminders job says what it would send and records nothing.
    const dry = await sendEventReminders(harness.ctx, { trigger: 'cli', dryRun: true });
    expect(dry.balances).toEqual({ sent: 1, overdue: 1, cancelled: 0 });
    expect(await harness.tdb.db('balance_reminders').pluck('registration_id')).toEqual([]);

    const first = await sendEventReminders(harness.ctx, { trigger: 'cli' });
    expect(first.balances).toEqual({ sent: 1, overdue: 1, cancelled: 0 });
    expect(await harness.tdb.db('job_runs').where({ id: first.runId }).first()).toMatchObject({ job: 'send-reminders', outcome: 'ok', summary: { balances: { sent: 1, overdue: 1 } } });
    expect(await harness.tdb.db('balance_reminders').pluck('registration_id')).toEqual([owing]);
    const alert = await harness.tdb.db('operations_alerts').where({ kind: 'balance_overdue' }).first();
    expect(alert.details).toMatchObject({ registrationId: owing, balanceMinor: 7000 });
    const [mail, ...more] = await queuedMessages(harness.ctx, 'balance-reminder');
    expect(more).toEqual([]);
    expect(mail?.to).toEqual(['owing@example.org']);
    expect(mail?.subject).toContain('Overdue payment');
    // Money as the family reads it, and a pay-now link for exactly what that date asked.
    expect(mail?.text).toContain(`${money()(7000)} was due on`);
    expect(mail?.text).toMatch(new RegExp(`/registrations/${owing}/pay\\?token=[0-9a-f]+&amount=7000`));
    expect(mail?.text).not.toContain('minor units');

    expect((await sendEventReminders(harness.ctx, { trigger: 'cli' })).balances).toBeUndefined();

    // The office's balances list reads the schedule: the unmet date, what it asks, and the days since.
    const rows = await listBalances(harness.ctx, event.slug, { overdue: true });
    expect(rows.find((row) => row.reference === paymentReference(owing))).toMatchObject({
      balanceMinor: 7000, dueBecause: 'schedule', nextDueOn: balanceDue.toISOString().slice(0, 10), nextDueMinor: 7000, overdueDays: 1,
    });
    expect(rows.find((row) => row.reference === paymentReference(helped))).toBeUndefined();

    // The monthly digest to the office lists the overdue balance beside the clearances.
    harness.ctx.mailer = async () => smtp.mailer;
    await sendClearanceDigest(harness.ctx, { trigger: 'cli', force: true });
    const digest = smtp.sink.messages.find((message) => message.subject.startsWith('Clearance digest'));
    expect(digest?.subject).toContain('1 balance overdue');
    expect(digest?.text).toContain(`${paymentReference(owing)} Bank Family, ${event.title}: ${money()(7000)}, was due`);
  });
});
