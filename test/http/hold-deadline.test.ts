import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { registrationPath } from '../../src/http/registration-view.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';
import { startTestServer } from '../support/http.js';
import { queuedMessages } from '../support/webhook-events.js';

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
  await setSetting(tdb.db, 'bank.accountName', 'Grace Community Church', new Date());
  await setSetting(tdb.db, 'bank.bsb', '062-000', new Date());
  await setSetting(tdb.db, 'bank.accountNumber', '1234 5678', new Date());
});
afterAll(async () => {
  await tdb.drop();
});

const registration = (name: string, email: string) =>
  new URLSearchParams([
    ['name', name],
    ['email', email],
    ['payment', 'bank'],
    ['attendee_name', name],
    ['attendee_tier', 'adult'],
  ]).toString();

async function register(url: string, name: string, email: string): Promise<string> {
  const answer = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: registration(name, email) });
  expect(answer.status).toBe(303);
  return answer.headers.get('location') as string;
}

describe('the registrant is told until when an unpaid bank-transfer place is held', () => {
  it('on an event with unpaidHoldDays the confirmation and the registration page name the moment the sweep releases it; without a limit they do not', async () => {
    // Made Friday 2 April 2027 10:00 AEDT; held 3 local days, across the end of daylight saving: Monday 5 April 10:00 AEST.
    const clock = new FixedClock(new Date('2027-04-01T23:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const limited = await insertEvent(tdb.db, { capacity: 20, unpaid_hold_days: 3, starts_at: new Date('2027-05-01T08:00:00Z'), title: 'Autumn Retreat' });
    const unlimited = await insertEvent(tdb.db, { capacity: 20, starts_at: new Date('2027-05-01T08:00:00Z'), title: 'Open Day' });
    const server = await startTestServer(ctx);
    try {
      const limitedPage = await register(`${server.url}/events/${limited.slug}/register`, 'Held Family', 'held@example.org');
      await register(`${server.url}/events/${unlimited.slug}/register`, 'Open Family', 'open@example.org');

      const [held, open] = [
        (await queuedMessages(ctx, 'registration-confirmation')).find((m) => m.to.includes('held@example.org')),
        (await queuedMessages(ctx, 'registration-confirmation')).find((m) => m.to.includes('open@example.org')),
      ];
      const deadline = /Your place is held until Monday,? 5 April 2027 at 10:00\sam AEST; please pay \$\d+\.\d\d by then to confirm it\. If we have not received it by then, your place is released for others\./;
      expect(held?.text).toMatch(deadline);
      expect(held?.html).toMatch(deadline);
      expect(open?.text).toMatch(/Your place is held; please pay \$\d+\.\d\d to confirm it\./);
      expect(open?.text).not.toContain('held until');

      const page = await (await fetch(`${server.url}${limitedPage}`)).text();
      expect(page).toMatch(/Your places are held until Monday,? 5 April 2027 at 10:00\sam AEST\. Your registration is confirmed once we receive your payment; if it has not reached us by then, the places are released for others\./);

      // What they were told is what the sweep does.
      clock.set(new Date('2027-04-04T23:59:00Z'));
      expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ holdsReleased: 0 });
      clock.set(new Date('2027-04-05T00:00:00Z'));
      expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ holdsReleased: 1 });
      const released = await (await fetch(`${server.url}${limitedPage}`)).text();
      expect(released).not.toContain('held until');
    } finally {
      await server.close();
    }
  });

  it('after a card attempt that charged nothing, the page still says until when the places are held (the sweep releases them then)', async () => {
    const clock = new FixedClock(new Date('2027-04-01T23:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const limited = await insertEvent(tdb.db, { capacity: 20, unpaid_hold_days: 3, starts_at: new Date('2027-05-01T08:00:00Z'), title: 'Autumn Retreat' });
    const { id } = await insertRegistration(tdb.db, ctx.cipher, limited.id, { status: 'PENDING', payment_method: 'bank', total_minor: 12000, paid_at: null, created_at: clock.now() });
    await insertCheckoutSession(tdb.db, ctx.cipher, limited.id, {
      registration_id: id,
      status: 'EXPIRED',
      payload_enc: null,
      expires_at: new Date('2027-04-02T00:00:00Z'),
      unpaid_confirmed_at: new Date('2027-04-02T00:05:00Z'),
      scrubbed_at: new Date('2027-04-02T00:05:00Z'),
    });
    clock.set(new Date('2027-04-02T01:00:00Z'));
    const server = await startTestServer(ctx);
    try {
      const page = await (await fetch(`${server.url}${registrationPath(ctx.config.authSecret, id, 1)}`)).text();
      expect(page).toMatch(/Your last card payment was not completed, and nothing was charged\. Your places are held until Monday,? 5 April 2027 at 10:00\sam AEST; if your payment has not reached us by then, the places are released for others\./);
    } finally {
      await server.close();
    }
  });

  it('a hold that would end at or after the event starts is never released, so nothing is said about it', async () => {
    const clock = new FixedClock(new Date('2027-04-01T23:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const soon = await insertEvent(tdb.db, { capacity: 20, unpaid_hold_days: 7, starts_at: new Date('2027-04-03T08:00:00Z'), title: 'Weekend Camp' });
    const server = await startTestServer(ctx);
    try {
      const pagePath = await register(`${server.url}/events/${soon.slug}/register`, 'Late Family', 'late@example.org');
      const confirmation = (await queuedMessages(ctx, 'registration-confirmation')).find((m) => m.to.includes('late@example.org'));
      expect(confirmation?.text).toMatch(/Your place is held; please pay/);
      expect(await (await fetch(`${server.url}${pagePath}`)).text()).not.toContain('held until');
    } finally {
      await server.close();
    }
  });
});
