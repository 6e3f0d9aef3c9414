import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { markRegistrationPaid } from '../../src/office/registrations/mark-paid.js';
import { moneyFormatter } from '../../src/office/registrations/money.js';
import { sendEventReminders } from '../../src/jobs/send-reminders.js';
import { showRegistration } from '../../src/office/registrations/show.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

const NOW = new Date('2026-11-22T00:00:00Z');

let tdb: TestDatabase;
const mail = useSinkAndMailer({ timeoutMs: 5_000 });

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('send-reminders after the office recorded payments', () => {
  it('a registration marked paid gets the plain reminder, not a payment reminder; a part-paid one is reminded of its balance, with the pay-now link for it', async () => {
    const ctx = createTestContext({
      db: tdb.db,
      mailer: mail.mailer,
      clock: new FixedClock(NOW),
      env: { ...mail.sink.configEnv(), PSP_SECRET_KEY: 'sk_test_reminders', PSP_WEBHOOK_SECRET: 'whsec_reminders' },
    });
    const money = moneyFormatter(ctx.config.regional);
    const event = await insertEvent(tdb.db, { online_payment: true, reminder_at: new Date(NOW.getTime() - 60_000), starts_at: new Date('2026-12-05T08:00:00Z') });
    const paidInFull = await insertRegistration(tdb.db, ctx.cipher, event.id, { email: 'full@example.org', status: 'PENDING', total_minor: 24000 });
    const partlyPaid = await insertRegistration(tdb.db, ctx.cipher, event.id, { email: 'part@example.org', status: 'PENDING', total_minor: 24000 });
    await insertRegistration(tdb.db, ctx.cipher, event.id, { email: 'owing@example.org', status: 'PENDING', total_minor: 24000 });

    await markRegistrationPaid(ctx, { registration: paidInFull.id, amountMinor: 24000, method: 'bank', actor: 'office' }, money);
    await markRegistrationPaid(ctx, { registration: partlyPaid.id, amountMinor: 10000, method: 'cash', partial: true, actor: 'office' }, money);

    const summary = await sendEventReminders(ctx, { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', sent: 3, paymentReminders: 2 });
    const to = (address: string) => mail.sink.messages.find((m) => m.envelope.to.includes(address));
    expect(to('full@example.org')?.subject).toBe('Reminder: Family Camp');
    expect(to('full@example.org')?.text).not.toContain('still owing');
    expect(to('part@example.org')?.subject).toBe('Payment reminder: Family Camp');
    expect(to('part@example.org')?.text).toContain('$140.00 still owing');
    expect(to('owing@example.org')?.text).toContain('$240.00 still owing');
    // Pay-now charges what is left: the untouched registration its total, the part-paid one its balance.
    expect(to('owing@example.org')?.text).toContain('/pay?token');
    expect(to('owing@example.org')?.html).toContain(`Pay ${money(24000)} by card`);
    expect(to('part@example.org')?.text).toContain('/pay?token');
    expect(to('part@example.org')?.html).toContain(`Pay ${money(14000)} by card`);

    // `registrations show` lists the reminders too, though they go straight from the job rather than through the queue.
    const kindsSent = async (id: string) => (await showRegistration(ctx, id)).emails.filter((e) => e.status === 'SENT').map((e) => e.kind);
    expect(await kindsSent(paidInFull.id)).toContain('event-reminder');
    expect(await kindsSent(partlyPaid.id)).toContain('payment-reminder');
    expect(await kindsSent(partlyPaid.id)).not.toContain('event-reminder');
  });
});
