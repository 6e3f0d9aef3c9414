import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { createLogger } from '../../src/logger.js';
import { countOpenAlerts, listOperationsAlerts, raiseOperationsAlert, resolveOperationsAlert } from '../../src/payments/alerts.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertUser } from '../support/factories.js';
import { queuedMessages } from '../support/webhook-events.js';

const NOW = new Date('2026-11-22T00:00:00Z');
let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const alertInput = {
  kind: 'sold_out' as const,
  reason: 'paid for 2 seats but none left',
  checkoutId: '11111111-1111-4111-8111-111111111111',
  providerSessionId: 'cs_test_alerts',
  paymentIntentId: 'pi_test_alerts',
  amountMinor: 24000,
  details: { eventId: 'e-1' },
  payer: { name: 'Jordan Payer', email: 'payer@example.org' },
};

describe('operations alerts', () => {
  it('are a row, an error-level log line with the provider ids, and one queued email per ADMIN, all in the caller’s transaction', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(NOW), logger: createLogger({ level: 'info', destination: sink }) });
    await insertUser(tdb.db, ctx.cipher, { email: 'admin-one@example.org', role: 'ADMIN' });
    await insertUser(tdb.db, ctx.cipher, { email: 'admin-two@example.org', role: 'ADMIN' });
    await insertUser(tdb.db, ctx.cipher, { email: 'pastor@example.org', role: 'PASTOR' });

    const raised = await tdb.db.transaction((trx) => raiseOperationsAlert(trx, ctx, alertInput));

    expect(raised.recipients).toBe(2);
    const row = await tdb.db('operations_alerts').where({ id: raised.id }).first();
    expect(row).toMatchObject({
      kind: 'sold_out',
      reason: alertInput.reason,
      checkout_session_id: alertInput.checkoutId,
      provider_session_id: 'cs_test_alerts',
      payment_intent_id: 'pi_test_alerts',
      amount_minor: 24000,
      details: { eventId: 'e-1' },
      resolved_at: null,
    });
    expect(JSON.stringify(row)).not.toContain('payer@example.org');
    const logged = lines.find((line) => line.alertId === raised.id);
    expect(logged).toMatchObject({ level: 50, alertKind: 'sold_out', providerSessionId: 'cs_test_alerts', paymentIntentId: 'pi_test_alerts' });
    expect(JSON.stringify(lines)).not.toContain('payer@example.org');
    const mail = await queuedMessages(ctx, 'operations-alert');
    expect(mail.map((m) => m.to)).toEqual([['admin-one@example.org'], ['admin-two@example.org']]);
    expect(mail[0]?.subject).toBe(`Payment needs manual attention: Sold out before the payment arrived (alert ${raised.id})`);
    expect(mail[0]?.text).toContain('$240.00');
    expect(mail[0]?.text).toContain('Payer: Jordan Payer <payer@example.org>');
  });

  it('leave nothing behind when the caller’s transaction rolls back', async () => {
    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(NOW) });
    const alertsBefore = await tdb.db('operations_alerts').count<{ n: number }>({ n: '*' }).first();
    const mailBefore = await tdb.db('queued_mail').count<{ n: number }>({ n: '*' }).first();
    await expect(
      tdb.db.transaction(async (trx) => {
        await raiseOperationsAlert(trx, ctx, alertInput);
        throw new Error('the change that caused the alert failed');
      }),
    ).rejects.toThrow('the change that caused the alert failed');
    expect(await tdb.db('operations_alerts').count<{ n: number }>({ n: '*' }).first()).toEqual(alertsBefore);
    expect(await tdb.db('queued_mail').count<{ n: number }>({ n: '*' }).first()).toEqual(mailBefore);
  });

  it('go to MAIL_FROM when there is no ADMIN, else to SMTP_USER, else only to the log', async () => {
    const db = await createTestDatabase();
    try {
      const withFrom = createTestContext({ db: db.db, clock: new FixedClock(NOW), env: { MAIL_FROM: 'office@example.org' } });
      await db.db.transaction((trx) => raiseOperationsAlert(trx, withFrom, alertInput));
      const withSmtp = createTestContext({
        db: db.db,
        clock: new FixedClock(NOW),
        env: { SMTP_USER: 'mailer@example.org', SMTP_APP_PASSWORD: 'app-password' },
      });
      await db.db.transaction((trx) => raiseOperationsAlert(trx, withSmtp, alertInput));
      const nobody = createTestContext({ db: db.db, clock: new FixedClock(NOW) });
      const silent = await db.db.transaction((trx) => raiseOperationsAlert(trx, nobody, alertInput));

      expect((await queuedMessages(withFrom, 'operations-alert')).map((m) => m.to)).toEqual([['office@example.org'], ['mailer@example.org']]);
      expect(silent.recipients).toBe(0);
      expect(await db.db('operations_alerts').where({ id: silent.id })).toHaveLength(1);
    } finally {
      await db.drop();
    }
  });

  it('list open ones by default, every one with all; resolve records the note once and refuses a second time', async () => {
    const db = await createTestDatabase();
    try {
      const ctx = createTestContext({ db: db.db, clock: new FixedClock(NOW) });
      const first = await db.db.transaction((trx) => raiseOperationsAlert(trx, ctx, alertInput));
      const second = await db.db.transaction((trx) => raiseOperationsAlert(trx, ctx, { kind: 'partial_refund', reason: 'half refunded' }));

      const resolved = await resolveOperationsAlert(db.db, first.id, 'registered by hand', new Date('2026-11-23T00:00:00Z'), 'Australia/Sydney');

      expect(resolved).toMatchObject({ id: first.id, resolution: 'registered by hand', resolvedAt: new Date('2026-11-23T00:00:00Z') });
      expect((await listOperationsAlerts(db.db)).map((a) => a.id)).toEqual([second.id]);
      expect((await listOperationsAlerts(db.db, { all: true })).map((a) => a.id)).toEqual([first.id, second.id]);
      expect(await countOpenAlerts(db.db)).toBe(1);
      await expect(resolveOperationsAlert(db.db, first.id, undefined, NOW, 'Australia/Sydney')).rejects.toMatchObject({ code: 'alert_already_resolved' });
      await expect(resolveOperationsAlert(db.db, 999_999, undefined, NOW, 'Australia/Sydney')).rejects.toMatchObject({ code: 'not_found' });
    } finally {
      await db.drop();
    }
  });
});
