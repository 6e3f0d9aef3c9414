import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { getEventBySlug } from '../../src/office/events.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { paymentReference } from '../../src/registrations/reference.js';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testEnv } from '../support/env.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { startFakeProvider, type FakeProvider } from '../support/fake-provider.js';
import { TEST_WEBHOOK_SECRET } from '../support/webhook-events.js';
import { followRealClock } from '../support/test-now.js';

// The commands run on the real clock: default event dates follow it.
followRealClock();

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

describe('reconcile and help with the cost', () => {
  it('help credited (in full and in part) is not money the card provider should hold: reconcile reports nothing amiss', async () => {
    const ctx = createTestContext({ db: tdb.db, env: { DATABASE_URL: tdb.url, ...provider.configEnv() }, clock: new FixedClock(new Date()) });
    const { slug, id: eventId } = await insertEvent(tdb.db, { online_payment: true });
    const event = (await getEventBySlug(tdb.db, slug)) as EventRecord;
    const started = await startEventCheckout(ctx, { event, contact: { name: 'Jordan Payer', email: 'jordan@example.org' }, attendees: [{ name: 'Jordan Payer', tier: 'adult' }], family: false });
    const { provider_session_id: sessionId } = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
    provider.completeSession(sessionId);
    expect((await runCli(['reconcile', '--apply', '--since', '2h'], { env })).code).toBe(0);

    const whole = await insertRegistration(tdb.db, ctx.cipher, eventId, { status: 'PENDING', total_minor: 12000 });
    const part = await insertRegistration(tdb.db, ctx.cipher, eventId, { status: 'PENDING', total_minor: 12000 });
    expect((await runCli(['registrations', 'credit', paymentReference(whole.id), '--amount', '120', '--fund', 'Camp scholarships'], { env })).code).toBe(0);
    expect((await runCli(['registrations', 'credit', paymentReference(part.id), '--amount', '30', '--fund', 'Camp scholarships'], { env })).code).toBe(0);

    const clean = await runCli(['reconcile', '--since', '2h'], { env });
    expect(clean.stderr).not.toMatch(/error/i);
    expect(clean.code).toBe(0);
    expect(clean.stdout).toMatch(/1 matched, 0 repaired, 0 unresolved/);
    expect(await tdb.db('operations_alerts').pluck('kind')).toEqual([]);
  });
});
