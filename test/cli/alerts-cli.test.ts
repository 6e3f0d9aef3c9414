import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { raiseOperationsAlert } from '../../src/payments/alerts.js';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';

// The vitest global setup compiles the CLI once per run, so this file spawns the built command.
let tdb: TestDatabase;
let env: Record<string, string | undefined>;
beforeAll(async () => {
  tdb = await createTestDatabase();
  env = testEnv({ DATABASE_URL: tdb.url, NODE_ENV: 'test' });
});
afterAll(async () => {
  await tdb.drop();
});

describe('eventops alerts', () => {
  it('list shows open alerts, resolve marks one handled; exit 0 on success, 1 for an unknown or resolved alert, 2 for a bad id', async () => {
    const empty = await runCli(['alerts', 'list'], { env });
    expect(empty).toMatchObject({ code: 0, stdout: 'no open alerts\n' });

    const ctx = createTestContext({ db: tdb.db, clock: new FixedClock(new Date('2026-11-22T03:04:00Z')) });
    const alert = await tdb.db.transaction((trx) =>
      raiseOperationsAlert(trx, ctx, {
        kind: 'amount_mismatch',
        reason: 'charged 12001 aud but the registration was priced at 12000 aud',
        paymentIntentId: 'pi_test_cli',
        amountMinor: 12001,
      }),
    );

    const list = await runCli(['alerts', 'list'], { env });
    expect(list.stderr).toBe('');
    expect(list.code).toBe(0);
    expect(list.stdout).toBe(
      // 03:04 UTC is 14:04 in Sydney (APP_TIMEZONE's default), the office's own clock.
      `#${alert.id}  2026-11-22 14:04  amount_mismatch  $120.01  pi_test_cli\n    charged 12001 aud but the registration was priced at 12000 aud\n`,
    );

    const resolved = await runCli(['alerts', 'resolve', String(alert.id), '--note', 'refunded by hand', '--json'], { env });
    expect(resolved.code).toBe(0);
    expect(JSON.parse(resolved.stdout)).toMatchObject({ alert: { id: alert.id, resolution: 'refunded by hand' } });
    expect(await tdb.db('operations_alerts').where({ id: alert.id }).first()).toMatchObject({ resolution: 'refunded by hand' });

    expect(await runCli(['alerts', 'list'], { env })).toMatchObject({ code: 0, stdout: 'no open alerts\n' });
    const all = await runCli(['alerts', 'list', '--all', '--json'], { env });
    expect(all.code).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ alerts: [{ id: alert.id, kind: 'amount_mismatch', resolution: 'refunded by hand' }] });

    const again = await runCli(['alerts', 'resolve', String(alert.id)], { env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already resolved');
    const unknown = await runCli(['alerts', 'resolve', '999999'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('alert 999999 not found');
    const missingId = await runCli(['alerts', 'resolve'], { env });
    expect(missingId.code).toBe(2);
    const help = await runCli(['alerts', 'resolve', '--help'], { env });
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Example:');
  });

  it('a bad id or note is a usage error (exit 2) naming the argument or option as typed, with the help of `alerts resolve`', async () => {
    const badId = await runCli(['alerts', 'resolve', 'twelve'], { env });
    expect(badId.code).toBe(2);
    expect(badId.stderr).toContain('invalid arguments: <id> must be a number');
    expect(badId.stderr).toContain('see `eventops alerts resolve --help`');
    const emptyNote = await runCli(['alerts', 'resolve', '12', '--note', ' '], { env });
    expect(emptyNote.code).toBe(2);
    expect(emptyNote.stderr).toContain('invalid arguments: --note must not be empty');
  });

  it('resolve of an alert already resolved says when, in the church\'s time zone (APP_TIMEZONE), and changes nothing', async () => {
    const ctx = createTestContext({ db: tdb.db });
    const alert = await tdb.db.transaction((trx) => raiseOperationsAlert(trx, ctx, { kind: 'partial_refund', reason: 'refunded 20.00 of 120.00' }));
    await tdb.db('operations_alerts').where({ id: alert.id }).update({ resolved_at: new Date('2026-11-22T03:04:00Z'), resolution: 'checked' });

    const again = await runCli(['alerts', 'resolve', String(alert.id), '--note', 'again'], { env });
    expect(again.code).toBe(1);
    // 03:04 UTC is 14:04 in Sydney (APP_TIMEZONE's default).
    expect(again.stderr).toContain(`alert ${alert.id} was already resolved on 2026-11-22 14:04`);
    expect(again.stderr).not.toContain('T03:04');
    const inNewYork = await runCli(['alerts', 'resolve', String(alert.id)], { env: { ...env, APP_TIMEZONE: 'America/New_York' } });
    expect(inNewYork.code).toBe(1);
    expect(inNewYork.stderr).toContain(`alert ${alert.id} was already resolved on 2026-11-21 22:04`);
    expect(await tdb.db('operations_alerts').where({ id: alert.id }).first()).toMatchObject({ resolved_at: new Date('2026-11-22T03:04:00Z'), resolution: 'checked' });
  });
});
