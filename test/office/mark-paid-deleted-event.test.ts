import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import type { AppError } from '../../src/errors.js';
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

describe('mark-paid for a registration whose event was deleted', () => {
  it('is refused, recording nothing and queuing no receipt, and says to pay back and cancel instead', async () => {
    const event = await insertEvent(tdb.db);
    const { id } = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', total_minor: 9000, paid_at: null });
    await tdb.db('events').where({ id: event.id }).update({ deleted_at: new Date('2026-11-20T01:00:00Z') });

    const refused = await markRegistrationPaid(ctx, { registration: id, amountMinor: 9000, method: 'bank', actor: 'office' }, money).then(
      () => undefined,
      (error: unknown) => error as AppError,
    );
    expect(refused?.code).toBe('not_markable');
    expect(refused?.message).toBe(
      `the event of registration ${paymentReference(id)} (${event.slug}) was deleted on 2026-11-20; no payment is recorded for it and no receipt sent`,
    );
    expect(refused?.suggestion).toContain(`eventops registrations cancel ${paymentReference(id)}`);
    expect(await tdb.db('registrations').where({ id }).first('status')).toEqual({ status: 'PENDING' });
    expect(await tdb.db('registration_payments').where({ registration_id: id }).count({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await tdb.db('queued_mail').where({ registration_id: id, kind: 'receipt' }).count({ n: '*' }).first()).toEqual({ n: 0 });
  });
});
