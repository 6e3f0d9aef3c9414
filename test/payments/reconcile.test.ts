import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/registrations/event-record.js';
import { reconcileCheckouts } from '../../src/jobs/reconcile.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { resolveOperationsAlert } from '../../src/payments/alerts.js';
import { startEventCheckout } from '../../src/payments/checkout.js';
import { payNowUrl } from '../../src/payments/links.js';
import { startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import { insertRegistration } from '../support/factories.js';
import { openCardEventHarness } from '../support/card-event-harness.js';
import type { PaymentsHarness } from '../support/payments-harness.js';
import { buildCheckoutSession, providerId } from '../support/provider-fixtures.js';
import { queuedMessages } from '../support/webhook-events.js';

// Reconcile against the local provider: the client's list API with auto-pagination,
// our repairs through the webhook's own functions, on real PostgreSQL.

const T0 = new Date('2026-11-22T00:00:00Z');
let harness: PaymentsHarness;
let event: EventRecord;

beforeAll(async () => {
  ({ harness, event } = await openCardEventHarness(T0));
});
afterAll(async () => {
  await harness.close();
});

const db = () => harness.tdb.db;
const reconcile = (apply: boolean) => reconcileCheckouts(harness.ctx, { trigger: 'cli', dryRun: !apply });
const staging = (id: string) => db()('checkout_sessions').where({ id }).first();
/**
 * The sweep while the provider is out of reach (its webhooks lost too): it expires checkouts but cannot confirm
 * them, which leaves them to reconcile. With the provider reachable the sweep settles them itself (sweep-confirms-checkouts.test.ts).
 */
const sweepWithoutProvider = () => {
  const config = harness.ctx.config;
  const payments = config.payments as NonNullable<typeof config.payments>;
  return sweepExpiredCheckouts({ ...harness.ctx, config: { ...config, payments: { ...payments, apiBase: 'http://127.0.0.1:9' } } }, { trigger: 'cli' });
};

async function checkout(email = `payer-${Math.random().toString(36).slice(2, 8)}@example.org`) {
  const started = await startEventCheckout(harness.ctx, {
    event,
    contact: { name: 'Jordan Payer', email },
    attendees: [{ name: 'Jordan Payer', tier: 'adult' }],
    family: false,
  });
  const row = await staging(started.checkoutId);
  return { checkoutId: started.checkoutId, sessionId: row.provider_session_id as string, email };
}

describe('eventops reconcile against the provider', () => {
  it('a paid session whose webhook never arrived: reported without --apply, repaired with it, and a later delivery adds nothing', async () => {
    harness.ctx.clock.set(T0);
    const paid = await checkout();
    harness.provider.completeSession(paid.sessionId);

    const report = await reconcile(false);
    expect(report).toMatchObject({ outcome: 'partial', dryRun: true, unresolved: 1 });
    expect(report.rows).toContainEqual(expect.objectContaining({ session: paid.sessionId, ours: 'OPEN', provider: 'complete/paid', action: 'complete' }));
    expect(await staging(paid.checkoutId)).toMatchObject({ status: 'OPEN' });

    const repaired = await reconcile(true);
    expect(repaired).toMatchObject({ outcome: 'ok', unresolved: 0 });
    expect(repaired.rows).toContainEqual(expect.objectContaining({ session: paid.sessionId, action: 'complete', result: 'completed' }));
    const row = await staging(paid.checkoutId);
    expect(row.status).toBe('COMPLETED');
    const registrations = await db()('registrations').where({ id: row.registration_id });
    expect(registrations).toEqual([expect.objectContaining({ status: 'PAID', payment_intent_id: harness.provider.sessions.get(paid.sessionId)?.payment_intent })]);

    const again = await reconcile(true);
    expect(again.rows).toContainEqual(expect.objectContaining({ session: paid.sessionId, action: 'none' }));
    const late = await harness.provider.deliver('checkout.session.completed', paid.sessionId);
    expect(JSON.parse(late.body)).toEqual({ received: true, outcome: 'already_handled' });
    expect(await db()('registrations').where({ payment_intent_id: row.payment_intent_id })).toHaveLength(1);
    expect((await queuedMessages(harness.ctx, 'receipt')).filter((m) => m.to.includes(paid.email))).toHaveLength(1);
  });

  it('two reconcile runs racing the late webhook still give one registration and one receipt', async () => {
    harness.ctx.clock.set(T0);
    const paid = await checkout();
    harness.provider.completeSession(paid.sessionId);

    const [first, second, delivery] = await Promise.all([reconcile(true), reconcile(true), harness.provider.deliver('checkout.session.completed', paid.sessionId)]);

    expect(delivery.status).toBe(200);
    expect([first.outcome, second.outcome]).toEqual(['ok', 'ok']);
    const row = await staging(paid.checkoutId);
    expect(row.status).toBe('COMPLETED');
    expect(await db()('registrations').where({ payment_intent_id: row.payment_intent_id })).toHaveLength(1);
    expect((await queuedMessages(harness.ctx, 'receipt')).filter((m) => m.to.includes(paid.email))).toHaveLength(1);
  });

  it('a paid checkout our sweep already expired (payload kept) is completed by reconcile', async () => {
    harness.ctx.clock.set(T0);
    const paid = await checkout();
    harness.provider.completeSession(paid.sessionId);
    harness.ctx.clock.set(new Date(T0.getTime() + 2 * 3_600_000));
    await sweepWithoutProvider();
    expect(await staging(paid.checkoutId)).toMatchObject({ status: 'EXPIRED', scrubbed_at: null });

    await reconcile(true);

    expect(await staging(paid.checkoutId)).toMatchObject({ status: 'COMPLETED' });
  });

  it('a delayed payment older than the window that settled while its webhooks were lost is read on its own and completed', async () => {
    harness.ctx.clock.set(T0);
    const delayed = await checkout();
    // Its unpaid completion extended it for 14 days; the debit then settled on day five, and that webhook was lost.
    await db()('checkout_sessions').where({ id: delayed.checkoutId }).update({ expires_at: new Date(T0.getTime() + 14 * 86_400_000) });
    harness.provider.completeSession(delayed.sessionId);
    const session = harness.provider.sessions.get(delayed.sessionId) as { created: number };
    session.created = Math.floor(T0.getTime() / 1000);
    harness.ctx.clock.set(new Date(T0.getTime() + 5 * 86_400_000));

    const report = await reconcile(true);

    expect(report.rows?.find((row) => row.session === delayed.sessionId)).toMatchObject({ action: 'complete', unresolved: false });
    expect(await staging(delayed.checkoutId)).toMatchObject({ status: 'COMPLETED' });
    expect((await queuedMessages(harness.ctx, 'receipt')).filter((m) => m.to.includes(delayed.email))).toHaveLength(1);
    // Settled: the next run does not read it again.
    const again = await reconcile(true);
    expect(again.rows?.some((row) => row.session === delayed.sessionId)).toBe(false);
  });

  it('a delayed payment whose webhooks are all lost: the sweep, asking the provider at its expiry, extends it as its unpaid completion would, so the payload outlives the sweep and reconcile registers the debit settling on day five', async () => {
    harness.ctx.clock.set(T0);
    const hour = 3_600_000;
    const delayed = await checkout();
    // The payer pays by direct debit: complete and unpaid at the provider, and the webhook never arrives.
    harness.provider.completeSession(delayed.sessionId, { payment_status: 'unpaid' });
    const paymentIntent = harness.provider.sessions.get(delayed.sessionId)?.payment_intent as string;
    const deliveriesBefore = harness.provider.deliveries.length;

    const runs = [];
    for (let h = 1; h <= 80; h += 1) {
      harness.ctx.clock.set(new Date(T0.getTime() + h * hour));
      await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' });
      const report = await reconcile(true);
      runs.push({ h, report, row: report.rows?.find((row) => row.session === delayed.sessionId) });
    }

    // The first sweep after its expiry asks the provider and extends it, as its unpaid completion (and reconcile) would;
    // every reconcile run then finds nothing to do.
    for (const { row } of runs) expect(row).toMatchObject({ ours: 'OPEN', provider: 'complete/unpaid', action: 'none', unresolved: false });
    const kept = await staging(delayed.checkoutId);
    expect(kept).toMatchObject({ status: 'OPEN', scrubbed_at: null, payment_intent_id: paymentIntent });
    expect(kept.payload_enc).not.toBeNull();
    expect(kept.expires_at).toEqual(new Date(T0.getTime() + hour + 14 * 86_400_000));

    // The debit settles on day five; that webhook is lost too.
    harness.provider.buildEvent('checkout.session.async_payment_succeeded', delayed.sessionId);
    harness.ctx.clock.set(new Date(T0.getTime() + 5 * 86_400_000));
    await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' });
    const report = await reconcile(true);

    expect(report.rows?.find((row) => row.session === delayed.sessionId)).toMatchObject({ action: 'complete', result: 'completed', unresolved: false });
    const row = await staging(delayed.checkoutId);
    expect(row.status).toBe('COMPLETED');
    expect(await db()('registrations').where({ payment_intent_id: paymentIntent })).toEqual([expect.objectContaining({ id: row.registration_id, status: 'PAID' })]);
    expect((await queuedMessages(harness.ctx, 'receipt')).filter((m) => m.to.includes(delayed.email))).toHaveLength(1);
    expect(await db()('operations_alerts').where({ checkout_session_id: delayed.checkoutId }).orWhere({ payment_intent_id: paymentIntent })).toEqual([]);
    expect(harness.provider.deliveries.length).toBe(deliveriesBefore);
  });

  it('a direct debit that failed while its async_payment_failed was lost is recorded unpaid, as that webhook would: the member may pay again at once, not after 17 days of "processing"', async () => {
    harness.ctx.clock.set(T0);
    const registration = await insertRegistration(db(), harness.ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank', total_minor: 12000 });
    const started = await startExistingRegistrationCheckout(harness.ctx, { registrationId: registration.id });
    const sessionId = (await staging(started.checkoutId)).provider_session_id as string;
    // Paid by direct debit: the unpaid completion arrives and extends the checkout for 14 days.
    const settling = await harness.provider.deliver('checkout.session.completed', sessionId, { payment_status: 'unpaid' });
    expect(JSON.parse(settling.body)).toMatchObject({ outcome: 'extended' });
    // The debit fails two days later; that webhook is lost.
    harness.provider.buildEvent('checkout.session.async_payment_failed', sessionId);
    harness.ctx.clock.set(new Date(T0.getTime() + 2 * 86_400_000));
    const payPage = `${payNowUrl({ ...harness.ctx.config, authUrl: harness.server.url }, registration.id, 1)}`;
    expect((await fetch(payPage)).status).toBe(409);

    const report = await reconcile(true);

    expect(report.rows?.find((row) => row.session === sessionId)).toMatchObject({
      ours: 'OPEN',
      provider: 'complete/unpaid, failed',
      action: 'confirm_unpaid',
      result: 'expired',
      unresolved: false,
    });
    const row = await staging(started.checkoutId);
    expect(row).toMatchObject({ status: 'EXPIRED', scrubbed_at: harness.ctx.clock.now(), unpaid_confirmed_at: harness.ctx.clock.now() });
    expect(await db()('registrations').where({ id: registration.id }).first()).toMatchObject({ status: 'PENDING', payment_method: 'bank' });
    expect((await fetch(payPage)).status).toBe(200);
    const again = await startExistingRegistrationCheckout(harness.ctx, { registrationId: registration.id });
    expect(again).toMatchObject({ reused: false });
    expect(again.checkoutId).not.toBe(started.checkoutId);
    expect(await db()('operations_alerts').where({ checkout_session_id: started.checkoutId })).toEqual([]);
    expect((await reconcile(true)).rows?.find((r) => r.session === sessionId)).toMatchObject({ action: 'none', unresolved: false });
  });

  it('a direct debit that had already failed when reconcile first hears of it (every webhook lost) is recorded unpaid, not extended for 14 days', async () => {
    harness.ctx.clock.set(T0);
    const failed = await checkout();
    harness.provider.completeSession(failed.sessionId, { payment_status: 'unpaid' });
    harness.provider.buildEvent('checkout.session.async_payment_failed', failed.sessionId);
    harness.ctx.clock.set(new Date(T0.getTime() + 3_600_000));

    const report = await reconcile(true);

    expect(report.rows?.find((row) => row.session === failed.sessionId)).toMatchObject({ action: 'confirm_unpaid', result: 'expired', unresolved: false });
    const row = await staging(failed.checkoutId);
    expect(row).toMatchObject({ status: 'EXPIRED', payload_enc: null, unpaid_confirmed_at: harness.ctx.clock.now() });
    expect(row.expires_at).toEqual(new Date(T0.getTime() + 31 * 60_000));
    const success = await fetch(`${harness.server.url}/events/${event.slug}/success?session_id=${failed.sessionId}`);
    const page = await success.text();
    expect(page).toContain('Payment not completed');
    expect(page).not.toContain('Processing your payment');
  });

  it('a missed full refund and a missed dispute cancel the PAID registrations, as the reversal webhook would; nothing is refunded by us', async () => {
    harness.ctx.clock.set(T0);
    const refunded = await checkout();
    const disputed = await checkout();
    for (const { sessionId } of [refunded, disputed]) await harness.provider.deliver('checkout.session.completed', sessionId);
    const refund = harness.provider.buildEvent('charge.refunded', refunded.sessionId); // made at the provider, never delivered
    const dispute = harness.provider.buildEvent('charge.dispute.created', disputed.sessionId);

    const dry = await reconcile(false);
    expect(dry.rows).toContainEqual(expect.objectContaining({ session: refunded.sessionId, ours: 'COMPLETED/PAID', action: 'reverse' }));
    const report = await reconcile(true);

    // The provider's own events are applied first (under their ids); the session comparison then finds them in place.
    expect(report.rows).toContainEqual(expect.objectContaining({ session: refund.id, action: 'replay', result: 'cancelled' }));
    expect(report.rows).toContainEqual(expect.objectContaining({ session: dispute.id, action: 'replay', result: 'cancelled' }));
    expect(report.rows).toContainEqual(expect.objectContaining({ session: refunded.sessionId, action: 'none', unresolved: false }));
    for (const [{ checkoutId }, reason] of [[refunded, 'refund'], [disputed, 'dispute']] as const) {
      const row = await staging(checkoutId);
      expect(await db()('registrations').where({ id: row.registration_id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: reason });
    }
    expect((await reconcile(true)).rows?.filter((r) => r.action === 'reverse')).toEqual([]);
    expect(harness.provider.refundCalls).toEqual([]);
  });

  it('an inquiry, or a dispute the church won, marks the charge disputed but reverses nothing: the registration stays as the webhook left it', async () => {
    harness.ctx.clock.set(T0);
    const inquired = await checkout();
    const won = await checkout();
    for (const { sessionId } of [inquired, won]) await harness.provider.deliver('checkout.session.completed', sessionId);
    // At the provider only, never delivered: an inquiry (no money withdrawn), and a dispute opened then won.
    harness.provider.buildEvent('charge.dispute.created', inquired.sessionId, { status: 'warning_needs_response' });
    harness.provider.buildEvent('charge.dispute.created', won.sessionId);
    harness.provider.buildEvent('charge.dispute.closed', won.sessionId, { status: 'won' });

    const report = await reconcile(true);

    for (const { sessionId, checkoutId } of [inquired, won]) {
      expect(report.rows?.find((r) => r.session === sessionId)).toMatchObject({ action: 'none', unresolved: false });
      const row = await staging(checkoutId);
      expect(await db()('registrations').where({ id: row.registration_id }).first()).toMatchObject({ status: 'PAID', cancel_reason: null });
    }
    expect(report.outcome).toBe('ok');
  });

  it('an expired checkout still open at the provider is expired there (its only write) and recorded as confirmed unpaid', async () => {
    harness.ctx.clock.set(T0);
    const abandoned = await checkout();
    const expiredThere = await checkout();
    harness.ctx.clock.set(new Date(T0.getTime() + 40 * 60_000));
    await sweepWithoutProvider();
    harness.provider.sessions.set(expiredThere.sessionId, { ...harness.provider.sessions.get(expiredThere.sessionId), status: 'expired' });
    const expireCallsBefore = harness.provider.sessionExpireCalls().length;

    const report = await reconcile(true);

    expect(report.rows).toContainEqual(expect.objectContaining({ session: abandoned.sessionId, action: 'expire_at_provider', result: 'expired' }));
    expect(report.rows).toContainEqual(expect.objectContaining({ session: expiredThere.sessionId, action: 'confirm_unpaid', result: 'expired' }));
    const calls = harness.provider.sessionExpireCalls().slice(expireCallsBefore);
    expect(calls.map((call) => call.path)).toEqual([`/v1/checkout/sessions/${abandoned.sessionId}/expire`]);
    expect(harness.provider.sessions.get(abandoned.sessionId)?.status).toBe('expired');
    for (const { checkoutId } of [abandoned, expiredThere]) {
      const row = await staging(checkoutId);
      expect(row).toMatchObject({ status: 'EXPIRED', payload_enc: null });
      expect(row.unpaid_confirmed_at).toEqual(harness.ctx.clock.now());
    }
    // Only POSTs to create and expire sessions ever reach the provider.
    expect(harness.provider.requests.filter((r) => r.method === 'POST').every((r) => /^\/v1\/checkout\/sessions(\/[^/]+\/expire)?$/.test(r.path))).toBe(true);
  });

  it('a checkout paid at the moment reconcile expires it stays a difference (exit 1) and the next run completes it', async () => {
    harness.ctx.clock.set(T0);
    const lastMinute = await checkout();
    harness.ctx.clock.set(new Date(T0.getTime() + 40 * 60_000));
    await sweepWithoutProvider();
    harness.provider.payAtExpiry(lastMinute.sessionId);

    const first = await reconcile(true);

    expect(first.rows?.find((row) => row.session === lastMinute.sessionId)).toMatchObject({
      action: 'expire_at_provider',
      unresolved: true,
      result: expect.stringContaining('left for the next run'),
    });
    expect(first.outcome).toBe('partial');
    const second = await reconcile(true);
    expect(second.rows?.find((row) => row.session === lastMinute.sessionId)).toMatchObject({ action: 'complete', unresolved: false });
    expect(await staging(lastMinute.checkoutId)).toMatchObject({ status: 'COMPLETED' });
  });

  it('a COMPLETED checkout the provider does not know, or knows with another amount, raises one reconcile_mismatch alert, not one per run, and exits 1 until a person resolves it', async () => {
    harness.ctx.clock.set(T0);
    const differs = await checkout();
    await harness.provider.deliver('checkout.session.completed', differs.sessionId);
    harness.provider.sessions.set(differs.sessionId, { ...harness.provider.sessions.get(differs.sessionId), amount_total: 1 });
    const [ghost] = await db()('checkout_sessions')
      .insert({ event_id: event.id, status: 'COMPLETED', expires_at: T0, net_minor: 12000, provider_session_id: providerId('cs_test'), created_at: T0, updated_at: T0 })
      .returning<Array<{ id: string }>>('id');

    const first = await reconcile(true);
    const second = await reconcile(true);

    expect(first.outcome).toBe('partial');
    expect(second.outcome).toBe('partial');
    for (const checkoutId of [differs.checkoutId, ghost?.id]) {
      const alerts = await db()('operations_alerts').where({ kind: 'reconcile_mismatch', checkout_session_id: checkoutId });
      expect(alerts).toHaveLength(1);
      await resolveOperationsAlert(db(), alerts[0].id, 'checked in the dashboard', harness.ctx.clock.now(), harness.ctx.config.regional.timeZone);
    }
    expect(first.rows).toContainEqual(expect.objectContaining({ session: differs.sessionId, action: 'alert_mismatch' }));
    expect(first.rows).toContainEqual(expect.objectContaining({ ours: 'COMPLETED', provider: 'missing', action: 'alert_mismatch' }));
    expect((await reconcile(true)).outcome).toBe('ok');
  });

  it('lists the window with one call per 100 sessions through auto-pagination, and leaves sessions created before the window out', async () => {
    harness.ctx.clock.set(T0);
    const created = Math.floor(T0.getTime() / 1000);
    for (let i = 0; i < 230; i += 1) {
      const id = providerId('cs_test');
      harness.provider.sessions.set(id, buildCheckoutSession({ id, created: created - 60 }));
    }
    const old = providerId('cs_test');
    harness.provider.sessions.set(old, buildCheckoutSession({ id: old, created: created - 73 * 3600, status: 'complete', payment_status: 'paid', metadata: { eventops_checkout_id: '00000000-0000-4000-8000-0000000000aa' } }));
    const inWindow = [...harness.provider.sessions.values()].filter((s) => (s.created as number) >= created - 72 * 3600).length;
    const callsBefore = harness.provider.sessionListCalls().length;

    const report = await reconcile(false);

    expect(report.listed).toBe(inWindow);
    const calls = harness.provider.sessionListCalls().slice(callsBefore);
    expect(calls).toHaveLength(Math.ceil(inWindow / 100));
    expect(calls[0]?.body).toMatchObject({ limit: '100', created: { gte: String(created - 72 * 3600) }, expand: ['data.payment_intent.latest_charge'] });
    expect(calls[1]?.body.starting_after).toEqual(expect.stringMatching(/^cs_test_/));
    expect(report.rows?.some((row) => row.session === old)).toBe(false);
  });

  it('POST /api/cron/reconcile runs the same job with --apply semantics, recorded with trigger http', async () => {
    harness.ctx.clock.set(T0);
    const paid = await checkout();
    harness.provider.completeSession(paid.sessionId);

    const response = await fetch(`${harness.server.url}/api/cron/reconcile`, { method: 'POST', headers: { authorization: 'Bearer test-cron-secret' } });

    expect(response.status).toBe(200);
    const summary = (await response.json()) as { job: string; outcome: string; runId: number; dryRun: boolean };
    expect(summary).toMatchObject({ job: 'reconcile', outcome: 'ok', dryRun: false });
    expect(await db()('job_runs').where({ id: summary.runId }).first()).toMatchObject({ job: 'reconcile', trigger: 'http', outcome: 'ok' });
    expect(await staging(paid.checkoutId)).toMatchObject({ status: 'COMPLETED' });
  });

  it('a payment made just before the server was down for four days, scrubbed by the first sweep after it, is still found and kept with an alert, never silently; an abandoned checkout beside it is recorded unpaid once', async () => {
    harness.ctx.clock.set(T0);
    const paid = await checkout();
    const abandoned = await checkout();
    // The payer pays as the server goes down; the provider's retries all fail, and it expires the abandoned session.
    harness.provider.setWebhookOutage(true);
    harness.provider.completeSession(paid.sessionId);
    harness.provider.sessions.set(abandoned.sessionId, { ...harness.provider.sessions.get(abandoned.sessionId), status: 'expired' });
    const paymentIntent = harness.provider.sessions.get(paid.sessionId)?.payment_intent as string;
    // Back four days later: the sweep runs first and scrubs both, neither confirmed by the provider.
    harness.ctx.clock.set(new Date(T0.getTime() + 4 * 86_400_000));
    await sweepExpiredCheckouts(harness.ctx, { trigger: 'scheduler' });
    for (const { checkoutId } of [paid, abandoned]) {
      expect(await staging(checkoutId)).toMatchObject({ status: 'EXPIRED', payload_enc: null, scrubbed_at: harness.ctx.clock.now(), unpaid_confirmed_at: null });
    }
    harness.provider.setWebhookOutage(false);

    const report = await reconcile(true);

    expect(report.rows?.find((row) => row.session === paid.sessionId)).toMatchObject({ ours: 'EXPIRED (scrubbed)', provider: 'complete/paid', action: 'complete', result: 'unfulfilled', unresolved: false });
    expect(await staging(paid.checkoutId)).toMatchObject({ status: 'UNFULFILLED', unfulfilled_reason: 'checkout_expired', payment_intent_id: paymentIntent });
    expect(await db()('operations_alerts').where({ checkout_session_id: paid.checkoutId })).toEqual([
      expect.objectContaining({ kind: 'checkout_expired', payment_intent_id: paymentIntent }),
    ]);
    expect(report.rows?.find((row) => row.session === abandoned.sessionId)).toMatchObject({ action: 'confirm_unpaid', result: 'expired', unresolved: false });
    expect((await staging(abandoned.checkoutId)).unpaid_confirmed_at).toEqual(harness.ctx.clock.now());
    expect(harness.provider.refundCalls).toEqual([]);

    // The abandoned one is settled and not read again; the kept payment is read for a refund the office may make, and nothing more is raised.
    const retrieved = () => harness.provider.requests.filter((r) => r.method === 'GET' && /^\/v1\/checkout\/sessions\/cs_/.test(r.path)).map((r) => r.path);
    const retrievesBefore = retrieved().length;
    const again = await reconcile(true);
    expect(again.rows?.some((row) => row.session === abandoned.sessionId)).toBe(false);
    expect(again.rows?.find((row) => row.session === paid.sessionId)).toMatchObject({ ours: 'UNFULFILLED', action: 'none', unresolved: false });
    expect(retrieved().slice(retrievesBefore)).toEqual([`/v1/checkout/sessions/${paid.sessionId}`]);
    expect(await db()('operations_alerts').where({ checkout_session_id: paid.checkoutId })).toHaveLength(1);
  });

  it('a session the provider keeps failing to return is reported unresolved and the run goes on to the others, instead of one lookup stopping every repair', async () => {
    harness.ctx.clock.set(T0);
    const unreadable = await checkout();
    const paid = await checkout();
    harness.provider.setWebhookOutage(true);
    harness.provider.completeSession(paid.sessionId);
    harness.provider.sessions.set(unreadable.sessionId, { ...harness.provider.sessions.get(unreadable.sessionId), status: 'expired' });
    // Four days on, both scrubbed without the provider's word: each is read on its own, and one read keeps failing.
    harness.ctx.clock.set(new Date(T0.getTime() + 4 * 86_400_000));
    await sweepExpiredCheckouts(harness.ctx, { trigger: 'scheduler' });
    harness.provider.setWebhookOutage(false);
    harness.provider.failPath(`/v1/checkout/sessions/${unreadable.sessionId}`, 500);
    try {
      const report = await reconcile(true);

      expect(report.rows?.find((row) => row.session === unreadable.sessionId)).toMatchObject({
        action: 'none',
        unresolved: true,
        result: expect.stringMatching(/^failed: could not read the session/),
      });
      expect(report.rows?.find((row) => row.session === paid.sessionId)).toMatchObject({ action: 'complete', result: 'unfulfilled', unresolved: false });
      expect(await db()('operations_alerts').where({ checkout_session_id: paid.checkoutId })).toEqual([expect.objectContaining({ kind: 'checkout_expired' })]);
      expect(await staging(unreadable.checkoutId)).toMatchObject({ status: 'EXPIRED', unpaid_confirmed_at: null });
    } finally {
      harness.provider.failPath(`/v1/checkout/sessions/${unreadable.sessionId}`, undefined);
    }
    // Once the provider answers again, the next run settles it.
    const again = await reconcile(true);
    expect(again.rows?.find((row) => row.session === unreadable.sessionId)).toMatchObject({ action: 'confirm_unpaid', unresolved: false });
  });

  it('without card payments configured the job is skipped, not failed', async () => {
    const summary = await reconcileCheckouts({ ...harness.ctx, config: { ...harness.ctx.config, payments: undefined } }, { trigger: 'scheduler' });
    expect(summary).toMatchObject({ job: 'reconcile', outcome: 'skipped' });
  });
});
