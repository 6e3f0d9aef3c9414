import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { attendeesCsv, exportAttendees, plainAmount } from '../../src/office/registrations/export.js';
import { listRegistrations } from '../../src/office/registrations/list.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

let tdb: TestDatabase;
let ctx: ReturnType<typeof createTestContext>;
beforeAll(async () => {
  tdb = await createTestDatabase();
  ctx = createTestContext({ db: tdb.db });
});
afterAll(() => tdb.drop());

const money = (minor: number) => moneyFormatter({ locale: 'en-AU', currency: 'AUD' })(minor);
const office = { actor: 'office' };
const PRICING = JSON.stringify({ tiers: [{ id: 'adult', label: 'Adult', price: 9000 }, { id: 'child', label: 'Child', price: 4500 }] });

const attendees = (...names: string[]) => ({
  attendees: JSON.stringify(names.map((name, i) => ({ name, tier: i < 2 ? 'adult' : 'child' }))),
  attendee_count: names.length,
});

/** The CSV as a spreadsheet reads it: one object per row, keyed by the header. */
async function csvRows(slug: string, options: { includeCancelled?: boolean } = {}): Promise<Array<Record<string, string>>> {
  return parse(attendeesCsv(await exportAttendees(ctx, slug, options)), { columns: true, bom: true }) as Array<Record<string, string>>;
}

/** A money column summed as a spreadsheet would, in minor units (an empty cell counts nothing). */
const columnSum = (rows: Array<Record<string, string>>, column: string) => rows.reduce((sum, row) => sum + Math.round(Number(row[column] || '0') * 100), 0);

describe('the export gives a registration\'s money once, on its first attendee row, so a column sum is right', () => {
  it('a family of 4 who paid $270: 270.00 once (not 1,080 summed), total 270.00 and nothing owing; the reference on every row', async () => {
    const event = await insertEvent(tdb.db, { pricing: PRICING });
    const family = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      contact_name: 'Ana Lee',
      ...attendees('Ana Lee', 'Ben Lee', 'Cal Lee', 'Dee Lee'),
      total_minor: 27000,
      paid_at: new Date(),
    });

    const rows = await csvRows(event.slug);
    expect(rows.map((row) => [row.attendee_name, row.ticket, row.registration_reference, row.status, row.amount_paid, row.total, row.balance_owing])).toEqual([
      ['Ana Lee', 'Adult', paymentReference(family.id), 'PAID', '270.00', '270.00', '0.00'],
      ['Ben Lee', 'Adult', paymentReference(family.id), 'PAID', '', '', ''],
      ['Cal Lee', 'Child', paymentReference(family.id), 'PAID', '', '', ''],
      ['Dee Lee', 'Child', paymentReference(family.id), 'PAID', '', '', ''],
    ]);
    expect(columnSum(rows, 'amount_paid')).toBe(27000);
    // The JSON form follows the same rule: null where the CSV cell is empty.
    const json = JSON.parse(JSON.stringify({ attendees: await exportAttendees(ctx, event.slug) })).attendees as Array<Record<string, unknown>>;
    expect(json.map((row) => [row.attendeeName, row.amountPaid, row.total, row.balanceOwing])).toEqual([
      ['Ana Lee', '270.00', '270.00', '0.00'],
      ['Ben Lee', null, null, null],
      ['Cal Lee', null, null, null],
      ['Dee Lee', null, null, null],
    ]);
  });

  it('a bank registration paid in part shows paid, total and the balance owing once (balance = total − paid while PENDING)', async () => {
    const event = await insertEvent(tdb.db, { pricing: PRICING });
    const partly = await insertRegistration(tdb.db, ctx.cipher, event.id, { contact_name: 'Part Payer', ...attendees('Part Payer', 'Part Partner'), total_minor: 18000, status: 'PENDING' });
    await markRegistrationPaid(ctx, { registration: partly.id, amountMinor: 10000, method: 'bank', partial: true, ...office }, money);
    await markRegistrationPaid(ctx, { registration: partly.id, amountMinor: 2550, method: 'cash', partial: true, ...office }, money);

    const rows = await csvRows(event.slug);
    expect(rows.map((row) => [row.attendee_name, row.status, row.amount_paid, row.total, row.balance_owing])).toEqual([
      ['Part Payer', 'PENDING', '125.50', '180.00', '54.50'],
      ['Part Partner', 'PENDING', '', '', ''],
    ]);
  });

  it('each money column sums to the registrations\' amounts (as `list` counts them), whatever the number of attendees', async () => {
    const event = await insertEvent(tdb.db, { pricing: PRICING });
    await insertRegistration(tdb.db, ctx.cipher, event.id, { ...attendees('Paid One', 'Paid Two', 'Paid Three'), total_minor: 22500, paid_at: new Date() });
    const part = await insertRegistration(tdb.db, ctx.cipher, event.id, { ...attendees('Owing One', 'Owing Two'), total_minor: 18000, status: 'PENDING' });
    await markRegistrationPaid(ctx, { registration: part.id, amountMinor: 4000, method: 'bank', partial: true, ...office }, money);
    await insertRegistration(tdb.db, ctx.cipher, event.id, { ...attendees('Unpaid Solo'), total_minor: 9000, status: 'PENDING' });
    await insertRegistration(tdb.db, ctx.cipher, event.id, { ...attendees('Free One', 'Free Two'), total_minor: 0, paid_at: new Date() });

    const rows = await csvRows(event.slug);
    expect(rows).toHaveLength(8);
    const listed = await listRegistrations(ctx, { eventSlug: event.slug });
    const total = listed.reduce((sum, r) => sum + r.totalMinor, 0);
    const paid = listed.reduce((sum, r) => sum + r.paidMinor, 0);
    const owing = listed.filter((r) => r.status === 'PENDING').reduce((sum, r) => sum + r.totalMinor - r.paidMinor, 0);
    expect([total, paid, owing]).toEqual([22500 + 18000 + 9000, 22500 + 4000, 14000 + 9000]);
    expect(columnSum(rows, 'total')).toBe(total);
    expect(columnSum(rows, 'amount_paid')).toBe(paid);
    expect(columnSum(rows, 'balance_owing')).toBe(owing);
    // One filled money row per registration, the first of its rows.
    const firstRows = rows.filter((row, i) => i === 0 || rows[i - 1]?.registration_reference !== row.registration_reference);
    expect(rows.filter((row) => row.amount_paid !== '')).toEqual(firstRows);
  });

  it('with --include-cancelled a cancelled registration shows its total, what the church received and kept, and owes nothing', async () => {
    const event = await insertEvent(tdb.db, { pricing: PRICING });
    const keptMoney = await insertRegistration(tdb.db, ctx.cipher, event.id, { contact_name: 'Called Off', ...attendees('Called Off', 'Also Off'), total_minor: 18000, status: 'PENDING' });
    await markRegistrationPaid(ctx, { registration: keptMoney.id, amountMinor: 5000, method: 'bank', partial: true, ...office }, money);
    await cancelRegistration(ctx, { registration: keptMoney.id, ...office });
    await insertRegistration(tdb.db, ctx.cipher, event.id, {
      ...attendees('Card Refunded'),
      total_minor: 9000,
      payment_method: 'card',
      paid_at: new Date(),
      status: 'CANCELLED',
      cancelled_at: new Date(),
      cancel_reason: 'refund',
    });
    await insertRegistration(tdb.db, ctx.cipher, event.id, { ...attendees('Hold Released'), total_minor: 9000, status: 'CANCELLED', cancelled_at: new Date(), cancel_reason: 'unpaid_hold' });

    expect(await csvRows(event.slug)).toEqual([]);
    const rows = await csvRows(event.slug, { includeCancelled: true });
    expect(rows.map((row) => [row.attendee_name, row.status, row.amount_paid, row.total, row.balance_owing])).toEqual([
      ['Called Off', 'CANCELLED', '50.00', '180.00', '0.00'],
      ['Also Off', 'CANCELLED', '', '', ''],
      ['Card Refunded', 'CANCELLED', '0.00', '90.00', '0.00'],
      ['Hold Released', 'CANCELLED', '0.00', '90.00', '0.00'],
    ]);
  });

  it('keeps the CSV\'s protections: a byte-order mark, formula cells neutralised, the money columns after the existing ones', async () => {
    const event = await insertEvent(tdb.db);
    await insertRegistration(tdb.db, ctx.cipher, event.id, { contact_name: '=cmd()', ...attendees('-1+1', '@x'), paid_at: new Date() });
    const csv = attendeesCsv(await exportAttendees(ctx, event.slug));
    expect(csv.startsWith('\uFEFFattendee_name,ticket,registration_reference,contact_name,email,mobile,status,amount_paid,total,balance_owing,checked_in_at,checked_in_by,checked_out_at,checked_out_by,checkin_flag\n')).toBe(true);
    const rows = parse(csv, { columns: true, bom: true }) as Array<Record<string, string>>;
    expect(rows.map((row) => [row.attendee_name, row.contact_name, row.amount_paid])).toEqual([
      ["'-1+1", "'=cmd()", '120.00'],
      ["'@x", "'=cmd()", ''],
    ]);
  });

  it('amounts are written from integer minor units with the currency\'s digits, as before (no floating-point rounding)', () => {
    expect(plainAmount(27000, 2)).toBe('270.00');
    expect(plainAmount(5, 2)).toBe('0.05');
    expect(plainAmount(0, 2)).toBe('0.00');
    expect(plainAmount(123456789, 2)).toBe('1234567.89');
    expect(plainAmount(240, 0)).toBe('240');
    expect(plainAmount(1250, 3)).toBe('1.250');
    for (const minor of [1, 7, 29, 101, 1005, 99999, 1999999999]) expect(plainAmount(minor, 2)).toBe((minor / 100).toFixed(2));
  });
});
