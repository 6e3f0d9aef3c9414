import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { cancelRegistration } from '../../src/office/registrations/cancel.js';
import { creditRegistration, reverseCredit } from '../../src/office/registrations/credit.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { recordOfficeRefund } from '../../src/office/registrations/record-refund.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { createRandom } from '../support/random.js';
import { referenceNow } from '../support/test-now.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const SEEDS = [1, 7, 42, 99, 314, 2718, 4242, 8675309, 1234567, 20261208];

describe('one ledger: payments, credits, reversals and refunds', () => {
  for (const seed of SEEDS) {
    it(`seed ${seed}: the derived balance is total − Σpayments + Σrefunds − Σcredits + Σreversals after every step, and the status follows it`, async () => {
      const random = createRandom(seed);
      const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(referenceNow()) });
      const money = moneyFormatter(ctx.config.regional);
      const event = await insertEvent(tdb.db);
      const total = random.int(10, 400) * 100;
      const { id } = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', total_minor: total });
      const sums = { payments: 0, refunds: 0, credits: 0, reversals: 0 };
      const standing: Array<{ id: number; amount: number }> = [];
      const steps: string[] = [];

      for (let step = 0; step < 14; step++) {
        const registration = await tdb.db('registrations').where({ id }).first<{ status: string }>('status');
        const view = await tdb.db('registration_money').where({ registration_id: id }).first<{ balance_minor: number; paid_minor: number }>();
        const balance = view.balance_minor;
        const options: string[] = [];
        if (registration.status === 'PENDING' && balance > 0) options.push('pay', 'pay', 'credit', 'credit');
        if (standing.length > 0) options.push('reverse');
        if (registration.status !== 'CANCELLED' && step > 6) options.push('cancel');
        if (registration.status === 'CANCELLED' && view.paid_minor > 0) options.push('refund');
        if (options.length === 0) break;
        const op = random.pick(options);
        if (op === 'pay') {
          const amount = random.chance(0.3) ? balance : random.int(1, balance);
          await markRegistrationPaid(ctx, { registration: id, amountMinor: amount, method: random.pick(['bank', 'cash'] as const), partial: true, again: true, actor: 'office' }, money);
          sums.payments += amount;
          steps.push(`pay ${amount}`);
        } else if (op === 'credit') {
          const amount = random.chance(0.3) ? balance : random.int(1, balance);
          const result = await creditRegistration(ctx, { registration: id, amountMinor: amount, fund: random.pick(['Camp scholarships', 'Youth fund']), again: true, actor: 'office' }, money);
          standing.push({ id: result.creditId, amount });
          sums.credits += amount;
          steps.push(`credit ${amount}`);
        } else if (op === 'reverse') {
          const [credit] = standing.splice(random.int(0, standing.length - 1), 1);
          if (!credit) throw new Error('no credit to reverse');
          await reverseCredit(ctx, { registration: id, creditId: credit.id, actor: 'office' });
          sums.reversals += credit.amount;
          steps.push(`reverse ${credit.amount}`);
        } else if (op === 'cancel') {
          await cancelRegistration(ctx, { registration: id, actor: 'office' });
          steps.push('cancel');
        } else {
          const amount = random.int(1, view.paid_minor);
          await recordOfficeRefund(ctx, { registration: id, amountMinor: amount, method: 'bank', again: true, actor: 'office' }, money);
          sums.refunds += amount;
          steps.push(`refund ${amount}`);
        }

        const after = await tdb.db('registration_money').where({ registration_id: id }).first<{ status: string; outstanding_minor: number; balance_minor: number; credited_minor: number }>();
        const expected = total - sums.payments + sums.refunds - sums.credits + sums.reversals;
        const where = `seed ${seed}, total ${total}, steps: ${steps.join(', ')}`;
        expect(after.outstanding_minor, where).toBe(expected);
        expect(after.credited_minor, where).toBe(sums.credits - sums.reversals);
        if (after.status === 'CANCELLED') {
          expect(after.balance_minor, where).toBe(0);
        } else {
          expect(after.status, where).toBe(expected === 0 ? 'PAID' : 'PENDING');
          expect(after.balance_minor, where).toBe(after.status === 'PENDING' ? expected : 0);
        }
      }
    });
  }
});
