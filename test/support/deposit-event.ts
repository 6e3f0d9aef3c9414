import { expect } from 'vitest';
import type { Db } from '../../src/db/connect.js';
import { registrationToken } from '../../src/payments/links.js';
import { insertEvent } from './factories.js';
import { postRegistrationForm } from './form-post.js';
import type { PaymentsHarness } from './payments-harness.js';
import { fromReferenceNow } from './test-now.js';

/**
 * A camp taking card payments with the fee passed on, starting in 60 days: a deposit of 5000 per attendee, the
 * balance due in 30 days, parts of at least 2000, and (unless `instalments` is null) two instalments.
 */
export async function insertDepositEvent(db: Db, options: { instalments?: { count: number } | null } = {}): Promise<{ id: string; slug: string }> {
  const balanceDueAt = fromReferenceNow({ days: 30 }).toISOString().slice(0, 10);
  const instalments = options.instalments === undefined ? { count: 2 } : options.instalments;
  return insertEvent(db, {
    online_payment: true,
    pass_card_fee: true,
    starts_at: fromReferenceNow({ days: 60 }),
    balance_terms: JSON.stringify({ deposit: { perAttendee: 5000 }, balanceDueAt, minimumPayment: 2000, ...(instalments ? { instalments } : {}), overdue: 'alert' }),
  });
}

/** Registers one adult (12000) by card choosing `plan`, and pays its first checkout (the deposit) at the provider. */
export async function payDepositByCard(
  harness: PaymentsHarness,
  slug: string,
  email: string,
  plan: 'deposit' | 'instalments' = 'deposit',
): Promise<{ registrationId: string; checkout: { id: string; provider_session_id: string; net_minor: number; surcharge_minor: number } }> {
  const db = harness.tdb.db;
  const posted = await postRegistrationForm(harness.server.url, slug, { name: 'Pat Parent', email, attendee_name: 'Kid', attendee_tier: 'adult', payment: 'card', pay_plan: plan });
  expect(posted.status).toBe(303);
  const checkout = await db('checkout_sessions').where({ provider_url: posted.headers.get('location') }).first();
  await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
  const done = await db('checkout_sessions').where({ id: checkout.id }).first();
  return { registrationId: done.registration_id as string, checkout };
}

/** Pay-now for `amount` (minor units) through the pay page's POST, as a reminder's link does: the checkout it opened. */
export async function openPartCheckout(
  harness: PaymentsHarness,
  registrationId: string,
  amount: number,
): Promise<{ id: string; provider_session_id: string; net_minor: number; surcharge_minor: number }> {
  const posted = await fetch(`${harness.server.url}/registrations/${registrationId}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${registrationToken(harness.ctx.config.authSecret, registrationId, 1)}&amount=${amount}`,
  });
  expect(posted.status).toBe(303);
  return harness.tdb.db('checkout_sessions').where({ provider_url: posted.headers.get('location') }).first();
}
