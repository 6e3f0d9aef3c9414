import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRegistration } from '../../src/office/registrations/add.js';
import { FixedClock } from '../../src/clock.js';
import type { AppContext } from '../../src/context.js';
import { handleWebhookAction } from '../../src/payments/webhook/handle.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';
import { providerId } from '../support/provider-fixtures.js';
import { PAYMENTS_ENV, stageNewRegistrationCheckout } from '../support/webhook-events.js';

let tdb: TestDatabase;
let ctx: AppContext;
const NOW = new Date('2026-11-22T00:00:00Z');
const STARTED = new Date('2026-11-21T23:00:00Z');

beforeAll(async () => {
  tdb = await createTestDatabase();
  ctx = createTestContext({ db: tdb.db, env: PAYMENTS_ENV, clock: new FixedClock(NOW) });
});
afterAll(async () => {
  await tdb.drop();
});

describe('once an event has started only the public form is closed', () => {
  it('a card payment made before the start and completed after it still registers: the money is never left without a registration', async () => {
    const event = await insertEvent(tdb.db, { online_payment: true, starts_at: STARTED });
    const staged = await stageNewRegistrationCheckout(ctx, event);

    const outcome = await handleWebhookAction(
      ctx,
      { id: providerId('evt'), type: 'checkout.session.completed' },
      {
        kind: 'complete',
        providerSessionId: staged.providerSessionId,
        ids: { checkoutId: staged.checkoutId },
        paymentIntentId: providerId('pi_test'),
        amountTotal: staged.amount,
        currency: 'aud',
      },
    );

    expect(outcome).toBe('completed');
    expect(await tdb.db('registrations').where({ event_id: event.id }).select('status')).toEqual([{ status: 'PAID' }]);
  });

  it('the office still registers by hand (a walk-in), PENDING by bank transfer', async () => {
    const event = await insertEvent(tdb.db, { starts_at: STARTED });

    const added = await addRegistration(ctx, {
      eventSlug: event.slug,
      contact: { name: 'Walk In', email: 'walk-in@example.org' },
      attendees: [{ name: 'Walk In', tier: 'adult' }],
      family: false,
      paid: 'none',
      overCapacity: false,
      actor: 'office',
    });

    expect(added.status).toBe('PENDING');
    expect(await tdb.db('registrations').where({ event_id: event.id }).select('status', 'payment_method')).toEqual([
      { status: 'PENDING', payment_method: 'bank' },
    ]);
  });
});
