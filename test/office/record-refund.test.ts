import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { attendeesCsv, exportAttendees } from '../../src/office/registrations/export.js';
import { listRegistrations } from '../../src/office/registrations/list.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { recordOfficeRefund } from '../../src/office/registrations/record-refund.js';
import { showRegistration } from '../../src/office/registrations/show.js';
import type { AppError } from '../../src/errors.js';
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

async function refusal(promise: Promise<unknown>): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e as AppError,
  );
  if (!error) throw new Error('expected a refusal');
  return error;
}

async function paidFigures(registrationId: string, slug: string) {
  const listed = (await listRegistrations(ctx, { eventSlug: slug })).find((r) => r.id === registrationId);
  const exported = parse(attendeesCsv(await exportAttendees(ctx, slug, { includeCancelled: true })), { columns: true, bom: true }) as Array<Record<string, string>>;
  return { show: (await showRegistration(ctx, registrationId)).paidMinor, list: listed?.paidMinor, export: exported[0]?.amount_paid };
}

describe('registrations record-refund: money the office paid back by hand stops counting as paid', () => {
  it('a bank-paid registration cancelled by the office and paid back ($270, in two parts) counts nothing paid in show, list and the export, with the history saying who and how', async () => {
    const event = await insertEvent(tdb.db);
    const family = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', total_minor: 27000, paid_at: null });
    await markRegistrationPaid(ctx, { registration: family.id, amountMinor: 27000, method: 'bank', ...office }, money);
    await cancelRegistration(ctx, { registration: family.id, ...office });
    expect(await paidFigures(family.id, event.slug)).toEqual({ show: 27000, list: 27000, export: '270.00' });

    expect(await recordOfficeRefund(ctx, { registration: family.id, amountMinor: 20000, method: 'bank', note: 'transfer 3 Dec', ...office }, money)).toMatchObject({
      refundedMinor: 20000,
      heldMinor: 7000,
    });
    expect(await paidFigures(family.id, event.slug)).toEqual({ show: 7000, list: 7000, export: '70.00' });

    const tooMuch = await refusal(recordOfficeRefund(ctx, { registration: family.id, amountMinor: 7001, method: 'cash', ...office }, money));
    expect(tooMuch.code).toBe('not_refundable');
    expect(tooMuch.message).toContain('$70.01 is more than the church holds');
    expect(tooMuch.message).toContain('after $200.00 already paid back');

    await recordOfficeRefund(ctx, { registration: family.id, amountMinor: 7000, method: 'cash', ...office }, money);
    expect(await paidFigures(family.id, event.slug)).toEqual({ show: 0, list: 0, export: '0.00' });
    const history = await tdb.db('registration_history').where({ registration_id: family.id, action: 'refund_recorded' }).orderBy('id').select('changes', 'note', 'actor');
    expect(history).toEqual([
      { changes: { amountMinor: 20000, method: 'bank', heldMinor: 7000 }, note: 'transfer 3 Dec', actor: 'office' },
      { changes: { amountMinor: 7000, method: 'cash', heldMinor: 0 }, note: null, actor: 'office' },
    ]);
    expect((await showRegistration(ctx, family.id)).refundedMinor).toBe(27000);
  });

  it('the same refund recorded twice within 24 hours (two volunteers, one bank statement) is refused, naming the first; --again records a second one', async () => {
    const event = await insertEvent(tdb.db);
    const family = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', total_minor: 27000, paid_at: null });
    await markRegistrationPaid(ctx, { registration: family.id, amountMinor: 27000, method: 'bank', ...office }, money);
    await cancelRegistration(ctx, { registration: family.id, ...office });
    const refund = { registration: family.id, amountMinor: 10000, method: 'bank' as const, note: 'transfer 3 Dec', ...office };
    await recordOfficeRefund(ctx, refund, money);

    const twice = await refusal(recordOfficeRefund(ctx, refund, money));
    expect(twice.message).toContain('$100.00 paid back by bank ("transfer 3 Dec") was already recorded for registration');
    expect(twice.suggestion).toContain('--again');
    expect(await paidFigures(family.id, event.slug)).toMatchObject({ show: 17000, list: 17000 });

    await recordOfficeRefund(ctx, { ...refund, again: true }, money);
    expect(await paidFigures(family.id, event.slug)).toMatchObject({ show: 7000, list: 7000 });
  });

  it('part-paid then cancelled: at most what was received can be recorded', async () => {
    const event = await insertEvent(tdb.db);
    const partly = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', total_minor: 18000, paid_at: null });
    await markRegistrationPaid(ctx, { registration: partly.id, amountMinor: 5000, method: 'bank', partial: true, ...office }, money);
    await cancelRegistration(ctx, { registration: partly.id, ...office });
    expect((await refusal(recordOfficeRefund(ctx, { registration: partly.id, amountMinor: 18000, method: 'bank', ...office }, money))).message).toContain(
      'is more than the church holds for registration',
    );
    await recordOfficeRefund(ctx, { registration: partly.id, amountMinor: 5000, method: 'bank', ...office }, money);
    expect(await paidFigures(partly.id, event.slug)).toMatchObject({ show: 0, list: 0 });
  });

  it('refused, recording nothing: a registration still active, a card payment (refunded in the provider’s dashboard) or one the provider already refunded; a card payment whose refund failed may be paid back by hand', async () => {
    const event = await insertEvent(tdb.db);
    const active = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PAID', payment_method: 'bank', total_minor: 9000, paid_at: new Date() });
    const byCard = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'CANCELLED', cancel_reason: 'office', payment_method: 'card', total_minor: 9000, paid_at: new Date() });
    const refunded = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'CANCELLED', cancel_reason: 'refund', payment_method: 'card', total_minor: 9000, paid_at: new Date() });
    const refundFailed = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'CANCELLED', cancel_reason: 'refund_failed', payment_method: 'card', total_minor: 9000, paid_at: new Date() });

    const notCancelled = await refusal(recordOfficeRefund(ctx, { registration: active.id, amountMinor: 9000, method: 'bank', ...office }, money));
    expect(notCancelled.message).toContain('is PAID: only money of a cancelled registration');
    expect(notCancelled.suggestion).toContain('eventops registrations cancel');
    expect((await refusal(recordOfficeRefund(ctx, { registration: byCard.id, amountMinor: 9000, method: 'bank', ...office }, money))).message).toContain(
      "refund it in the card provider's dashboard",
    );
    expect((await refusal(recordOfficeRefund(ctx, { registration: refunded.id, amountMinor: 9000, method: 'bank', ...office }, money))).message).toContain(
      'already refunded at the card provider',
    );
    expect(await tdb.db('registration_refunds').whereIn('registration_id', [active.id, byCard.id, refunded.id]).count({ n: '*' }).first()).toEqual({ n: 0 });

    await recordOfficeRefund(ctx, { registration: refundFailed.id, amountMinor: 9000, method: 'bank', note: 'the card refund failed', ...office }, money);
    expect(await paidFigures(refundFailed.id, event.slug)).toMatchObject({ show: 0, list: 0 });
  });
});
