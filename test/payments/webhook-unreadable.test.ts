import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext } from '../support/context.js';
import { TEST_KEYS } from '../support/env.js';
import { insertEvent } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';
import { completedSession, postWebhook, queuedMessages, signedDelivery, stageNewRegistrationCheckout } from '../support/webhook-events.js';

let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness();
});
afterAll(() => harness.close());

/** Keys v1 and v2, writing with v2: a server already switched over in a key rotation the webhook's server has not had yet. */
const rotatedKeys = { ENCRYPTION_KEY_V1: TEST_KEYS.v1, ENCRYPTION_KEY_V2: TEST_KEYS.v2, ENCRYPTION_KEY_ID: 'v2' };

describe('a payment whose staged registration is under a key this server lacks', () => {
  it('is answered 500 so the provider delivers it again, with one alert to the administrators however often it comes; once the key is there it is recorded, with its receipt', async () => {
    const { tdb, ctx, server } = harness;
    const event = await insertEvent(tdb.db, { online_payment: true });
    const rotated = createTestContext({ db: tdb.db, clock: ctx.clock, env: rotatedKeys });
    const staged = await stageNewRegistrationCheckout(rotated, event);
    const delivery = signedDelivery('checkout.session.completed', completedSession({ ...staged, amountTotal: staged.amount }));

    expect((await postWebhook(server.url, delivery)).status).toBe(500);
    expect((await postWebhook(server.url, delivery)).status).toBe(500);

    const alerts = await tdb.db('operations_alerts').where({ kind: 'payment_unreadable' });
    expect(alerts).toEqual([
      expect.objectContaining({ provider_session_id: staged.providerSessionId, resolved_at: null, details: expect.objectContaining({ keyVersion: 'v2' }) }),
    ]);
    const [mail] = (await queuedMessages(ctx, 'operations-alert')).filter((m) => m.to.includes('treasurer@example.org'));
    expect(mail?.text).toContain('Restart every server with ENCRYPTION_KEY_V2 set');
    expect(await tdb.db('registrations').where({ event_id: event.id })).toHaveLength(0);
    expect(await tdb.db('checkout_sessions').where({ id: staged.checkoutId }).first()).toMatchObject({ status: 'OPEN' });

    // The key reaches this server (here: the payload rewritten under the key it has); the provider's next delivery is recorded.
    const row = await tdb.db('checkout_sessions').where({ id: staged.checkoutId }).first();
    await tdb.db('checkout_sessions')
      .where({ id: staged.checkoutId })
      .update({ payload_enc: ctx.cipher.encrypt(rotated.cipher.decrypt(row.payload_enc as string)) });
    expect(await postWebhook(server.url, delivery)).toEqual({ status: 200, body: { received: true, outcome: 'completed' } });
    expect(await tdb.db('registrations').where({ event_id: event.id, status: 'PAID' })).toHaveLength(1);
    expect((await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(staged.email))).toHaveLength(1);
    expect(await tdb.db('operations_alerts').where({ kind: 'payment_unreadable' })).toHaveLength(1);
  });
});
