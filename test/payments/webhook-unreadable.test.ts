import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventBySlug } from '../../src/office/events.js';
import { type EventRecord } from '../../src/registrations/event-record.js';
import { reconcileCheckouts } from '../../src/jobs/reconcile.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
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

  it('found by reconcile (every delivery lost) raises the same alert, once per missing key with the webhook\'s, and is reported unresolved until the key is there', async () => {
    const { tdb, ctx, provider } = harness;
    await tdb.db('operations_alerts').where({ kind: 'payment_unreadable' }).update({ resolved_at: ctx.clock.now(), resolution: 'recorded' });
    const { slug } = await insertEvent(tdb.db, { online_payment: true });
    const event = (await getEventBySlug(tdb.db, slug)) as EventRecord;
    const rotated = createTestContext({ db: tdb.db, clock: ctx.clock, env: { ...provider.configEnv(), ...rotatedKeys } });
    const contact = { name: 'Robin Rotated', email: 'robin.rotated@example.org' };
    const started = await startEventCheckout(rotated, { event, contact, attendees: [{ name: contact.name, tier: 'adult' }], family: false });
    const sessionId = (await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first()).provider_session_id as string;
    // Paid at the provider; the delivery is lost (the webhook secret was wrong), so only reconcile can find it.
    provider.completeSession(sessionId);
    const paymentIntent = provider.sessions.get(sessionId)?.payment_intent as string;

    const first = await reconcileCheckouts(ctx, { trigger: 'cli' });
    const second = await reconcileCheckouts(ctx, { trigger: 'cli' });
    const delivered = await provider.deliver('checkout.session.completed', sessionId);

    expect(first.outcome).toBe('partial');
    expect(first.rows?.find((row) => row.session === sessionId)).toMatchObject({
      action: 'complete',
      unresolved: true,
      result: expect.stringMatching(/key v2, which this server lacks \(payment_unreadable alert raised\)/),
    });
    expect(second.rows?.find((row) => row.session === sessionId)).toMatchObject({ unresolved: true, result: expect.stringContaining('alert already open') });
    expect(delivered.status).toBe(500);
    expect(await tdb.db('operations_alerts').where({ kind: 'payment_unreadable' }).whereNull('resolved_at')).toEqual([
      expect.objectContaining({ provider_session_id: sessionId, payment_intent_id: paymentIntent, details: expect.objectContaining({ keyVersion: 'v2' }) }),
    ]);
    const alertMails = (await queuedMessages(ctx, 'operations-alert')).filter((m) => m.to.includes('treasurer@example.org') && m.text.includes(sessionId));
    expect(alertMails).toHaveLength(1);
    expect(alertMails[0]?.text).toContain('Restart every server with ENCRYPTION_KEY_V2 set');
    expect(await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first()).toMatchObject({ status: 'OPEN' });

    // The key is there: the next run records the payment, with its receipt.
    const row = await tdb.db('checkout_sessions').where({ id: started.checkoutId }).first();
    await tdb.db('checkout_sessions')
      .where({ id: started.checkoutId })
      .update({ payload_enc: ctx.cipher.encrypt(rotated.cipher.decrypt(row.payload_enc as string)) });
    const third = await reconcileCheckouts(ctx, { trigger: 'cli' });
    expect(third.rows?.find((r) => r.session === sessionId)).toMatchObject({ action: 'complete', result: 'completed', unresolved: false });
    expect(await tdb.db('registrations').where({ payment_intent_id: paymentIntent, status: 'PAID' })).toHaveLength(1);
    expect((await queuedMessages(ctx, 'receipt')).filter((m) => m.to.includes(contact.email))).toHaveLength(1);
  });
});
