import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { heldUntil } from '../../src/payments/hold-release.js';
import { registrationToken } from '../../src/payments/links.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { startPaymentsHarness, type PaymentsHarness } from '../support/payments-harness.js';

// Rule: an unpaid bank-transfer hold (the event's unpaidHoldDays) ends at the time the registrant was told.
// A pay-now checkout opened before then may be paid within its own lifetime, and the sweep waits for it;
// opening pay-now again never extends the hold: from its end no session is opened, or opened anew, and a
// session still open is handed out again rather than another opened.

const T0 = new Date('2026-11-22T00:00:00Z');
const MINUTE = 60_000;
let harness: PaymentsHarness;
beforeAll(async () => {
  harness = await startPaymentsHarness({ now: T0 });
});
afterAll(async () => {
  await harness.close();
});
beforeEach(async () => {
  harness.ctx.clock.set(T0);
  await harness.tdb.db('rate_limits').delete();
});

const db = () => harness.tdb.db;
const at = (when: Date) => harness.ctx.clock.set(when);
const plus = (from: Date, minutes: number) => new Date(from.getTime() + minutes * MINUTE);

/** A one-day unpaid hold made at T0 on an event a month away. */
async function heldRegistration() {
  const event = await insertEvent(db(), { online_payment: true, unpaid_hold_days: 1, starts_at: plus(T0, 30 * 24 * 60) });
  const { id } = await insertRegistration(db(), harness.ctx.cipher, event.id, { status: 'PENDING', payment_method: 'bank', paid_at: null, created_at: T0 });
  const releaseAt = (await heldUntil(db(), id, harness.ctx.config.regional.timeZone)) as Date;
  expect(releaseAt).toEqual(plus(T0, 24 * 60));
  return { id, releaseAt };
}

/** The pay-now button, as the registration page posts it. */
async function payNow(registrationId: string) {
  const answer = await fetch(`${harness.server.url}/registrations/${registrationId}/pay`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `token=${registrationToken(harness.ctx.config.authSecret, registrationId, 1)}`,
  });
  return { status: answer.status, location: answer.headers.get('location'), text: await answer.text() };
}

const statusOf = async (id: string) => (await db()('registrations').where({ id }).first<{ status: string }>('status')).status;

describe('pay-now never keeps an unpaid hold past its end', () => {
  it('starting pay-now every 30 minutes, with the hourly sweep running, the one-day hold is still released at its end (once the last session opened before it has expired unpaid)', async () => {
    const { id, releaseAt } = await heldRegistration();
    let released: Date | undefined;
    for (let minute = 15; minute <= 30 * 60 && !released; minute += 15) {
      at(plus(T0, minute));
      if (minute % 30 === 0) {
        const answer = await payNow(id);
        if (harness.ctx.clock.now() < releaseAt) expect(answer.status).toBe(303);
        else if (answer.status !== 303) {
          expect(answer.status).toBe(409);
          expect(answer.text).toContain('The time to pay for this registration has ended');
        }
      }
      if (minute % 60 === 45) {
        await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' });
        if ((await statusOf(id)) === 'CANCELLED') released = harness.ctx.clock.now();
      }
    }
    expect(released).toBeDefined();
    // The first hourly sweep after the last session (opened before the end, 31 minutes long) has expired.
    expect((released as Date).getTime()).toBeLessThanOrEqual(plus(releaseAt, 60 + 31).getTime());
    const checkouts = await db()('checkout_sessions').where({ registration_id: id }).orderBy('created_at');
    expect(checkouts.every((row: { created_at: Date }) => row.created_at < releaseAt)).toBe(true);
    // Never two sessions live at once: each opened once the one before had ended.
    for (let n = 1; n < checkouts.length; n += 1) expect(checkouts[n].created_at.getTime()).toBeGreaterThanOrEqual(checkouts[n - 1].updated_at.getTime() - 1);
    expect(await db()('registration_history').where({ registration_id: id, action: 'hold_released' })).toHaveLength(1);
  });

  it('a session opened just before the end is handed out again after it, with the time it has left, and may be paid; none is opened anew', async () => {
    const { id, releaseAt } = await heldRegistration();
    at(plus(releaseAt, -5));
    const opened = await payNow(id);
    expect(opened.status).toBe(303);

    at(plus(releaseAt, 20));
    const again = await payNow(id);
    expect(again).toMatchObject({ status: 303, location: opened.location });
    // The sweep waits for it: a payment may still come.
    await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' });
    expect(await statusOf(id)).toBe('PENDING');

    const [checkout] = await db()('checkout_sessions').where({ registration_id: id });
    const delivered = await harness.provider.deliver('checkout.session.completed', checkout.provider_session_id);
    expect(JSON.parse(delivered.body)).toMatchObject({ outcome: 'completed' });
    expect(await statusOf(id)).toBe('PAID');
    expect(await db()('checkout_sessions').where({ registration_id: id })).toHaveLength(1);
  });

  it('after the end, with no session open, pay-now opens nothing and the pages offer no card payment', async () => {
    const { id, releaseAt } = await heldRegistration();
    at(releaseAt);
    const refused = await payNow(id);
    expect(refused.status).toBe(409);
    expect(refused.text).toContain('The time to pay for this registration has ended');
    const token = registrationToken(harness.ctx.config.authSecret, id, 1);
    const page = await (await fetch(`${harness.server.url}/registrations/${id}/pay?token=${token}`)).text();
    expect(page).toContain('The time to pay for this registration has ended');
    expect(await db()('checkout_sessions').where({ registration_id: id })).toEqual([]);
    await sweepExpiredCheckouts(harness.ctx, { trigger: 'cli' });
    expect(await statusOf(id)).toBe('CANCELLED');
  });
});
