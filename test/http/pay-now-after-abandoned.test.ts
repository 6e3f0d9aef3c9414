import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { registrationToken } from '../../src/payments/links.js';
import { startExistingRegistrationCheckout } from '../../src/payments/pay-now.js';
import type { TestDatabase } from '../support/db.js';
import type { FakeProvider } from '../support/fake-provider.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import type { TestServer } from '../support/http.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

// Rule: a member who abandoned a card attempt can pay by card as soon as it has expired: the pay-now page
// (where the reminder's link lands) and the pay-now button ask the provider instead of waiting 72 hours.

const T0 = new Date('2026-11-22T00:00:00Z');
let harness: PaymentsHarness;
let tdb: TestDatabase;
let ctx: AppContext & { clock: FixedClock };
let fake: FakeProvider;
let server: TestServer;

beforeAll(async () => {
  harness = await startPaymentsHarness({ now: T0 });
  ({ tdb, ctx, provider: fake, server } = harness);
});
afterAll(() => harness.close());

describe('pay-now after an abandoned card attempt', () => {
  it('the pay-now page, opened after the attempt expired, asks the provider and offers card payment; the button opens a new session at once', async () => {
    ctx.clock.set(T0);
    const event = await insertEvent(tdb.db, { online_payment: true });
    const registration = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank' });
    const first = await startExistingRegistrationCheckout(ctx, { registrationId: registration.id });
    const firstSession = (await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).provider_session_id as string;
    const token = registrationToken(ctx.config.authSecret, registration.id, 1);

    ctx.clock.set(new Date(T0.getTime() + 40 * 60_000));
    const page = await fetch(`${server.url}/registrations/${registration.id}/pay?token=${token}`);
    const html = await page.text();

    expect(page.status).toBe(200);
    expect(html).not.toContain('may still be on its way');
    expect(fake.sessions.get(firstSession)?.status).toBe('expired');
    expect(await tdb.db('checkout_sessions').where({ id: first.checkoutId }).first()).toMatchObject({ status: 'EXPIRED', unpaid_confirmed_at: ctx.clock.now() });

    const post = await fetch(`${server.url}/registrations/${registration.id}/pay`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `token=${token}`,
    });
    expect(post.status).toBe(303);
    const second = await tdb.db('checkout_sessions').where({ registration_id: registration.id, status: 'OPEN' }).first();
    expect(post.headers.get('location')).toBe(second.provider_url);
    expect(second.provider_session_id).not.toBe(firstSession);
  });
});
