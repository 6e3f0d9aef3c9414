import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { sendEventReminders } from '../../src/jobs/send-reminders.js';
import { creditRegistration } from '../../src/office/registrations/credit.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';
import { fromReferenceNow, referenceNow } from '../support/test-now.js';

let tdb: TestDatabase;
const mail = useSinkAndMailer({ timeoutMs: 5_000 });

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('send-reminders after help with the cost', () => {
  it('a registration whose balance help took to 0 gets no payment reminder; one partly helped is reminded of what is left, with the pay-now link for it', async () => {
    const ctx = createTestContext({
      db: tdb.db,
      mailer: mail.mailer,
      clock: new FixedClock(referenceNow()),
      env: { ...mail.sink.configEnv(), PSP_SECRET_KEY: 'sk_test_reminders', PSP_WEBHOOK_SECRET: 'whsec_reminders' },
    });
    const money = moneyFormatter(ctx.config.regional);
    const event = await insertEvent(tdb.db, { online_payment: true, reminder_at: fromReferenceNow({ minutes: -1 }), starts_at: fromReferenceNow({ days: 13 }) });
    const covered = await insertRegistration(tdb.db, ctx.cipher, event.id, { email: 'covered@example.org', status: 'PENDING', total_minor: 24000 });
    const helped = await insertRegistration(tdb.db, ctx.cipher, event.id, { email: 'helped@example.org', status: 'PENDING', total_minor: 24000 });

    expect(await creditRegistration(ctx, { registration: covered.id, amountMinor: 24000, fund: 'Camp scholarships', actor: 'office' }, money)).toMatchObject({ status: 'PAID' });
    await creditRegistration(ctx, { registration: helped.id, amountMinor: 6000, fund: 'Camp scholarships', actor: 'office' }, money);

    const summary = await sendEventReminders(ctx, { trigger: 'cli' });
    expect(summary).toMatchObject({ outcome: 'ok', sent: 2, paymentReminders: 1 });
    const to = (address: string) => mail.sink.messages.find((m) => m.envelope.to.includes(address));
    expect(to('covered@example.org')?.subject).toBe('Reminder: Family Camp');
    expect(to('covered@example.org')?.text).not.toContain('still owing');
    expect(to('helped@example.org')?.subject).toBe('Payment reminder: Family Camp');
    expect(to('helped@example.org')?.text).toContain('$180.00 still owing');
    expect(to('helped@example.org')?.text).toContain('/pay?token');
    expect(to('helped@example.org')?.html).toContain(`Pay ${money(18000)} by card`);
  });
});
