import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { FixedClock } from '../../src/clock.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertEvent } from '../support/factories.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { TEST_WEBHOOK_SECRET } from '../support/webhook-events.js';
import { followRealClock } from '../support/test-now.js';

// The command runs on the real clock: default event dates follow it.
followRealClock();

// The built command in a subprocess, on the real clock (as cron runs it), against the local provider.
let tdb: TestDatabase;
let provider: FakeProvider;
let env: Record<string, string | undefined>;
beforeAll(async () => {
  tdb = await createTestDatabase();
  provider = await startFakeProvider({ webhookSecret: TEST_WEBHOOK_SECRET });
  env = testEnv({ DATABASE_URL: tdb.url, ...provider.configEnv() });
});
afterAll(async () => {
  await provider.close();
  await tdb.drop();
});

describe('eventops reconcile', () => {
  it('prints the table and changes nothing without --apply (exit 1 while a difference remains), repairs with --apply (exit 0)', async () => {
    const ctx = createTestContext({ db: tdb.db, env: { DATABASE_URL: tdb.url, ...provider.configEnv() }, clock: new FixedClock(new Date()) });
    const { slug } = await insertEvent(tdb.db, { online_payment: true });
    const event = (await getEventBySlug(tdb.db, slug)) as EventRecord;
    const started = await startEventCheckout(ctx, {
      event,
      contact: { name: 'Jordan Payer', email: 'jordan@example.org' },
      attendees: [{ name: 'Jordan Payer', tier: 'adult' }],
      family: false,
    });
    const { provider_session_id: sessionId } = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
    provider.completeSession(sessionId);

    const report = await runCli(['reconcile'], { env });
    expect(report.stderr).not.toMatch(/error/i);
    expect(report.code).toBe(1);
    const [header, row] = report.stdout.split('\n');
    expect(header).toMatch(/^SESSION\s+OURS\s+PROVIDER\s+ACTION$/);
    expect(row).toMatch(new RegExp(`^${sessionId}\\s+OPEN\\s+complete/paid\\s+complete$`));
    expect(report.stdout).toContain('run again with --apply');
    expect(await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first()).toMatchObject({ status: 'OPEN' });

    const applied = await runCli(['reconcile', '--apply', '--json', '--since', '2h'], { env });
    expect(applied.code).toBe(0);
    expect(JSON.parse(applied.stdout)).toMatchObject({ job: 'reconcile', outcome: 'ok', repaired: 1, unresolved: 0 });
    expect(await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first()).toMatchObject({ status: 'COMPLETED' });

    const clean = await runCli(['reconcile'], { env });
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/1 matched, 0 repaired, 0 unresolved/);
  });

  it('exit 2 for a window that is not a duration, 78 without card payments configured', async () => {
    const usage = await runCli(['reconcile', '--since', 'yesterday'], { env });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--since');
    const unconfigured = await runCli(['reconcile'], { env: { ...env, PSP_SECRET_KEY: undefined, PSP_WEBHOOK_SECRET: undefined } });
    expect(unconfigured.code).toBe(78);
    expect(unconfigured.stderr).toContain('PSP_SECRET_KEY');
  });
});
