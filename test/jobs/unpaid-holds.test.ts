import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { insertOfficePayment } from '../../src/registrations/ledger.js';
import { sweepExpiredCheckouts } from '../../src/jobs/sweep-checkouts.js';
import { releaseUnpaidHolds, remindUnpaidHolds } from '../../src/jobs/unpaid-holds.js';
import { OPENING_LEASE_MS } from '../../src/payments/pay-now.js';
import { seatsLeft } from '../../src/registrations/registrations.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

let tdb: TestDatabase;
const mail = useSinkAndMailer({ timeoutMs: 5_000 });

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const HOUR = 60 * 60_000;

describe('sweep-checkouts releases unpaid bank-transfer holds after the event’s unpaidHoldDays (APP_TIMEZONE Australia/Sydney)', () => {
  it('reminds one local day before and releases at the same local time N days on, across the end of daylight saving', async () => {
    // Made Friday 2 April 2027 10:00 AEDT (+11). Daylight saving ends Sunday 4 April 03:00 → 02:00 (AEST, +10),
    // so 3 local days later (Monday 5 April 10:00 AEST) is 73 hours later, not 72.
    const madeAt = new Date('2027-04-01T23:00:00Z');
    const clock = new FixedClock(madeAt);
    const ctx = createTestContext({ db: tdb.db, clock, mailer: mail.mailer, env: mail.sink.configEnv() });
    const event = await insertEvent(tdb.db, { capacity: 5, unpaid_hold_days: 3, starts_at: new Date('2027-05-01T08:00:00Z'), title: 'Autumn Retreat' });
    const unlimitedHold = await insertEvent(tdb.db, { starts_at: new Date('2027-05-01T08:00:00Z') });

    const held = await insertRegistration(tdb.db, ctx.cipher, event.id, {
      email: 'held@example.org', contact_name: 'Held Family', status: 'PENDING', attendee_count: 2,
      attendees: JSON.stringify([{ name: 'A', tier: 'adult' }, { name: 'B', tier: 'adult' }]), created_at: madeAt,
    });
    const paid = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PAID', paid_at: madeAt, created_at: madeAt });
    const partlyPaid = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: madeAt });
    await tdb.db('registration_payments').insert({ registration_id: partlyPaid.id, amount_minor: 5000, method: 'cash', recorded_by: 'office', recorded_at: madeAt });
    const payingByCard = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: madeAt });
    const noLimit = await insertRegistration(tdb.db, ctx.cipher, unlimitedHold.id, { status: 'PENDING', created_at: madeAt });
    expect(await seatsLeft(tdb.db, { id: event.id, capacity: 5 }, clock.now())).toBe(0);
    // A pay-now checkout in flight keeps its registration's hold (no reminder, no release) until it is settled.
    const inFlight = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, {
      registration_id: payingByCard.id, payload_enc: null, expires_at: new Date('2027-04-05T00:20:00Z'),
    });

    const sweepAt = async (iso: string) => {
      clock.set(new Date(iso));
      return sweepExpiredCheckouts(ctx, { trigger: 'cli' });
    };
    const statusOf = async (id: string) => (await tdb.db('registrations').where({ id }).first()).status as string;

    expect(await sweepAt('2027-04-03T23:59:00Z')).toMatchObject({ holdsReleased: 0, holdReminders: 0 });

    // 10:00 AEST on Sunday 4 April: one local day before the release.
    expect(await sweepAt('2027-04-04T00:00:00Z')).toMatchObject({ holdsReleased: 0, holdReminders: 1 });
    expect(await sweepAt('2027-04-04T06:00:00Z')).toMatchObject({ holdsReleased: 0, holdReminders: 0 });
    await deliverQueuedMail(ctx);
    // After daylight saving ended: the zone says AEST, not AEDT.
    expect(mail.sink.messages.map((m) => [m.envelope.to, m.subject])).toEqual([
      [['held@example.org'], expect.stringMatching(/^Your place is held until Monday,? 5 April 2027 at 10:00\sam AEST: Autumn Retreat$/)],
    ]);
    expect(mail.sink.messages[0]?.text).toContain('we have not received your payment of $120.00 yet');

    // 72 hours after it was made is still 09:00 local: a hold counted in hours would end an hour early.
    expect(await sweepAt('2027-04-04T23:00:00Z')).toMatchObject({ holdsReleased: 0 });
    expect(await statusOf(held.id)).toBe('PENDING');

    expect(await sweepAt('2027-04-05T00:00:00Z')).toMatchObject({ holdsReleased: 1, holdReminders: 0 });
    expect(await statusOf(held.id)).toBe('CANCELLED');
    const row = await tdb.db('registrations').where({ id: held.id }).first();
    expect(row).toMatchObject({ cancel_reason: 'unpaid_hold' });
    expect(row.cancelled_at.toISOString()).toBe('2027-04-05T00:00:00.000Z');
    expect(await statusOf(paid.id)).toBe('PAID');
    expect(await statusOf(partlyPaid.id)).toBe('PENDING');
    expect(await statusOf(payingByCard.id)).toBe('PENDING');
    expect(await statusOf(noLimit.id)).toBe('PENDING');
    expect(await seatsLeft(tdb.db, { id: event.id, capacity: 5 }, clock.now())).toBe(2);
    expect(await tdb.db('registration_history').where({ registration_id: held.id }).orderBy('id').select('action', 'actor')).toEqual([
      { action: 'hold_reminder', actor: 'sweep-checkouts' },
      { action: 'hold_released', actor: 'sweep-checkouts' },
    ]);

    mail.sink.clear();
    await deliverQueuedMail(ctx);
    expect(mail.sink.messages.map((m) => [m.envelope.to, m.subject])).toEqual([[['held@example.org'], 'Registration cancelled: Autumn Retreat']]);
    expect(mail.sink.messages[0]?.text).toContain('No payment has reached us, so the places have been released');

    // Once the card checkout has expired the sweep expires it, but the hold stays while the provider may still
    // confirm a late payment (the payload is kept 72 hours); when the payload is scrubbed the hold is released, once.
    await tdb.db('checkout_sessions').where({ id: inFlight.id }).update({ expires_at: new Date('2027-04-05T00:10:00Z') });
    const later = await sweepAt('2027-04-05T01:00:00Z');
    expect(later).toMatchObject({ expired: 1, holdsReleased: 0 });
    expect(await statusOf(payingByCard.id)).toBe('PENDING');
    const afterWindow = await sweepAt('2027-04-08T01:00:00Z');
    expect(afterWindow).toMatchObject({ scrubbed: 1, holdsReleased: 1 });
    expect(await statusOf(payingByCard.id)).toBe('CANCELLED');
    expect(await sweepAt('2027-04-08T02:00:00Z')).toMatchObject({ holdsReleased: 0, holdReminders: 0 });

    const preview = await sweepExpiredCheckouts(ctx, { trigger: 'cli', dryRun: true });
    expect(preview).toMatchObject({ holdsReleased: 0, holdReminders: 0 });
  });

  it('a hold being marked paid (row locked) is skipped, and once its part-payment is recorded it is kept', async () => {
    const clock = new FixedClock(new Date('2026-11-23T00:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db, { unpaid_hold_days: 1, starts_at: new Date('2027-01-10T00:00:00Z') });
    const due = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: new Date('2026-11-21T00:00:00Z') });

    // mark-paid --partial in progress: it holds the row lock while the sweep runs (a sweep that waited would hang here).
    await tdb.db.transaction(async (trx) => {
      await trx('registrations').where({ id: due.id }).forUpdate().first();
      expect(await releaseUnpaidHolds(ctx, clock.now())).toBe(0);
      await insertOfficePayment(trx, { registrationId: due.id, amountMinor: 5000, method: 'cash', actor: 'office', now: clock.now() });
    });
    expect(await releaseUnpaidHolds(ctx, clock.now())).toBe(0);
    expect(await tdb.db('registrations').where({ id: due.id }).first()).toMatchObject({ status: 'PENDING' });
    expect(await tdb.db('registration_money').where({ registration_id: due.id }).first()).toMatchObject({ office_paid_minor: 5000 });
  });

  it('a hold whose pay-now checkout is being opened is neither reminded nor released, though pay-now changes no column of the registration', async () => {
    const clock = new FixedClock(new Date('2026-11-23T00:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db, { unpaid_hold_days: 2, starts_at: new Date('2027-01-10T00:00:00Z') });
    // Made a day and a half ago: its reminder is due; its release is due half a day later.
    const held = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: new Date('2026-11-21T12:00:00Z') });

    for (const [job, at] of [
      [remindUnpaidHolds, '2026-11-23T00:00:00Z'],
      [releaseUnpaidHolds, '2026-11-23T13:00:00Z'],
    ] as const) {
      clock.set(new Date(at));
      // pay-now: the registration's row lock, then the checkout, committed while the sweep is under way.
      const payNow = await tdb.db.transaction();
      await payNow('registrations').where({ id: held.id }).forUpdate().first();
      const checkout = await insertCheckoutSession(payNow, ctx.cipher, event.id, {
        registration_id: held.id, payload_enc: null, expires_at: new Date('2026-11-24T00:00:00Z'),
      });
      let settled = false;
      const sweep = job(ctx, clock.now()).finally(() => (settled = true));
      while (!settled) {
        const waiting = await tdb.db.raw<{ rows: unknown[] }>(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%registrations r%'`);
        if (waiting.rows.length > 0) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
      await payNow.commit();
      expect(await sweep).toBe(0);
      // Looked at again by the next sweep, it finds the open checkout and leaves the hold alone.
      expect(await job(ctx, clock.now())).toBe(0);
      expect(await tdb.db('registrations').where({ id: held.id }).first()).toMatchObject({ status: 'PENDING', hold_reminder_sent_at: null });
      await tdb.db('checkout_sessions').where({ id: checkout.id }).delete();
    }
    // Out of the way of the tests after this one, which count the holds due.
    await tdb.db('registrations').where({ id: held.id }).update({ status: 'CANCELLED' });
  });

  it('a hold whose card payment was kept without settling it (UNFULFILLED, alert open) is neither reminded nor released until the office resolves the alert', async () => {
    const clock = new FixedClock(new Date('2026-11-23T13:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db, { unpaid_hold_days: 2, starts_at: new Date('2027-01-10T00:00:00Z') });
    const held = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: new Date('2026-11-21T12:00:00Z') });
    // Paid by card with pay-now, but the amount differed from the one staged: the money is kept and the office alerted.
    const kept = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, {
      registration_id: held.id, payload_enc: null, expires_at: new Date('2026-11-22T00:00:00Z'), status: 'UNFULFILLED',
    });
    const [alert] = await tdb.db('operations_alerts')
      .insert({ kind: 'amount_mismatch', reason: 'charged another amount', checkout_session_id: kept.id, amount_minor: 9000, created_at: clock.now() })
      .returning<Array<{ id: number }>>('id');

    expect(await remindUnpaidHolds(ctx, clock.now())).toBe(0);
    expect(await releaseUnpaidHolds(ctx, clock.now())).toBe(0);
    expect(await tdb.db('registrations').where({ id: held.id }).first()).toMatchObject({ status: 'PENDING', hold_reminder_sent_at: null });

    // The office refunded the payment at the provider and resolved the alert: the hold runs its course again.
    await tdb.db('operations_alerts').where({ id: alert?.id }).update({ resolved_at: clock.now(), resolution: 'refunded' });
    expect(await releaseUnpaidHolds(ctx, clock.now())).toBe(1);
    expect(await tdb.db('registrations').where({ id: held.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'unpaid_hold' });
  });

  it("the hold-ending notice offers pay-now only for a balance the card provider can charge (at least AUD 0.50)", async () => {
    const madeAt = new Date('2027-09-01T00:00:00Z');
    const clock = new FixedClock(madeAt);
    const ctx = createTestContext({
      db: tdb.db,
      clock,
      mailer: mail.mailer,
      env: { ...mail.sink.configEnv(), PSP_SECRET_KEY: 'sk_test_holds', PSP_WEBHOOK_SECRET: 'whsec_holds', APP_URL: 'http://127.0.0.1:3000' },
    });
    const event = await insertEvent(tdb.db, { online_payment: true, unpaid_hold_days: 2, starts_at: new Date('2027-10-01T00:00:00Z') });
    await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: madeAt, total_minor: 40, email: 'candle@example.org' });
    const dinner = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: madeAt, total_minor: 2500, email: 'dinner@example.org' });
    mail.sink.messages.length = 0;

    clock.set(new Date('2027-09-02T00:00:00Z'));
    expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ holdReminders: 2 });
    await deliverQueuedMail(ctx);

    const to = (address: string) => mail.sink.messages.find((m) => m.envelope.to.includes(address));
    expect(to('candle@example.org')?.text).toContain('$0.40');
    expect(to('candle@example.org')?.text).not.toContain('Pay now by card');
    expect(to('dinner@example.org')?.text).toContain(`Pay now by card: http://127.0.0.1:3000/registrations/${dinner.id}/pay?token=`);
  });

  it('a one-day hold is reminded halfway through it, not by the first sweep after the registration was made', async () => {
    // After every earlier test's event has started, so only this hold is due.
    const madeAt = new Date('2027-06-01T00:00:00Z');
    const clock = new FixedClock(madeAt);
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db, { unpaid_hold_days: 1, starts_at: new Date('2027-08-01T00:00:00Z') });
    const held = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: madeAt });
    const sweepAt = (iso: string) => {
      clock.set(new Date(iso));
      return sweepExpiredCheckouts(ctx, { trigger: 'cli' });
    };

    expect(await sweepAt('2027-06-01T01:00:00Z')).toMatchObject({ holdsReleased: 0, holdReminders: 0 });
    expect(await sweepAt('2027-06-01T11:59:00Z')).toMatchObject({ holdsReleased: 0, holdReminders: 0 });
    expect(await sweepAt('2027-06-01T12:00:00Z')).toMatchObject({ holdsReleased: 0, holdReminders: 1 });
    expect((await tdb.db('registrations').where({ id: held.id }).first()).hold_reminder_sent_at).toEqual(new Date('2027-06-01T12:00:00Z'));
    expect(await sweepAt('2027-06-02T00:00:00Z')).toMatchObject({ holdsReleased: 1, holdReminders: 0 });
  });

  it('a limit set after registrations were made reminds them first and releases them a day after the change, not at the next sweep', async () => {
    // After every earlier test's event has started, so only these holds are due.
    const clock = new FixedClock(new Date('2027-07-01T00:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db, { unpaid_hold_days: null, starts_at: new Date('2027-09-01T00:00:00Z') });
    const threeWeeksOld = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: new Date('2027-06-10T00:00:00Z') });
    const fiveDaysOld = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: new Date('2027-06-26T00:00:00Z') });
    // What `events update` records when the office sets the limit (test/office/events.test.ts).
    await tdb.db('events').where({ id: event.id }).update({ unpaid_hold_days: 7, unpaid_hold_since: clock.now() });
    const sweepAt = (iso: string) => {
      clock.set(new Date(iso));
      return sweepExpiredCheckouts(ctx, { trigger: 'cli' });
    };
    const stateOf = async (id: string) => tdb.db('registrations').where({ id }).first('status', 'hold_reminder_sent_at');

    // The three-week-old hold is past 7 days but is reminded, not released; the five-day-old one keeps its own days.
    expect(await sweepAt('2027-07-01T00:30:00Z')).toMatchObject({ holdsReleased: 0, holdReminders: 1 });
    expect(await stateOf(threeWeeksOld.id)).toEqual({ status: 'PENDING', hold_reminder_sent_at: new Date('2027-07-01T00:30:00Z') });
    expect(await sweepAt('2027-07-01T23:30:00Z')).toMatchObject({ holdsReleased: 0, holdReminders: 0 });
    // A day after the change the old hold ends; the newer one, made 26 June, is reminded then and ends on 3 July.
    expect(await sweepAt('2027-07-02T00:00:00Z')).toMatchObject({ holdsReleased: 1, holdReminders: 1 });
    expect((await stateOf(threeWeeksOld.id)).status).toBe('CANCELLED');
    expect((await stateOf(fiveDaysOld.id)).status).toBe('PENDING');
    expect(await sweepAt('2027-07-03T00:00:00Z')).toMatchObject({ holdsReleased: 1 });
    expect((await stateOf(fiveDaysOld.id)).status).toBe('CANCELLED');
  });

  it('a dry run lists the holds it would release and changes nothing', async () => {
    const clock = new FixedClock(new Date('2026-11-23T00:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db, { unpaid_hold_days: 1, starts_at: new Date('2027-01-10T00:00:00Z') });
    const old = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: new Date('2026-11-21T00:00:00Z') });
    const fresh = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: new Date('2026-11-22T12:00:00Z') });

    const dry = await sweepExpiredCheckouts(ctx, { trigger: 'cli', dryRun: true });
    expect(dry).toMatchObject({ holdsReleased: 1, holdReminders: 1 });
    expect(dry.wouldDo?.join('\n')).toContain('release the unpaid hold of');
    // The office reads the church's local time, named, not UTC.
    expect(dry.wouldDo?.find((line) => line.startsWith('remind'))).toMatch(/ends \d{4}-\d{2}-\d{2} \d{2}:\d{2} Australia\/Sydney$/);
    expect((await tdb.db('registrations').where({ id: old.id }).first()).status).toBe('PENDING');
    expect((await tdb.db('registrations').where({ id: fresh.id }).first()).hold_reminder_sent_at).toBeNull();
  });

  it('an APP_TIMEZONE alias Intl knows but PostgreSQL does not (US/Pacific-New) still releases holds: both compute in the canonical zone', async () => {
    // Before the holds the dry run above left PENDING come due, so this run releases only its own.
    const clock = new FixedClock(new Date('2026-11-21T12:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock, env: { APP_TIMEZONE: 'US/Pacific-New' } });
    expect(ctx.config.regional.timeZone).toBe('America/Los_Angeles');
    const event = await insertEvent(tdb.db, { unpaid_hold_days: 1, starts_at: new Date('2027-01-10T00:00:00Z') });
    const old = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: new Date('2026-11-19T00:00:00Z') });

    expect(await sweepExpiredCheckouts(ctx, { trigger: 'cli' })).toMatchObject({ holdsReleased: 1 });
    expect((await tdb.db('registrations').where({ id: old.id }).first()).status).toBe('CANCELLED');
  });

  it('a pay-now claim abandoned before its provider session was recorded (past its lease) does not keep a hold; a claim still within its lease does', async () => {
    // After every earlier test's event has started, so only these holds are due.
    const clock = new FixedClock(new Date('2027-10-01T00:00:00Z'));
    const ctx = createTestContext({ db: tdb.db, clock });
    const event = await insertEvent(tdb.db, { unpaid_hold_days: 1, starts_at: new Date('2027-12-01T00:00:00Z') });
    const heldWithClaim = async (ageMs: number) => {
      const held = await insertRegistration(tdb.db, ctx.cipher, event.id, { status: 'PENDING', created_at: new Date('2027-09-29T00:00:00Z') });
      const claim = await insertCheckoutSession(tdb.db, ctx.cipher, event.id, {
        registration_id: held.id, payload_enc: null, provider_session_id: null, expires_at: new Date(clock.now().getTime() + 29 * 60_000),
      });
      await tdb.db.raw('UPDATE checkout_sessions SET created_at = ? WHERE id = ?', [new Date(clock.now().getTime() - ageMs), claim.id]);
      return held;
    };
    const abandoned = await heldWithClaim(OPENING_LEASE_MS);
    const opening = await heldWithClaim(OPENING_LEASE_MS - 1_000);

    expect(await releaseUnpaidHolds(ctx, clock.now())).toBe(1);
    expect(await tdb.db('registrations').where({ id: abandoned.id }).first()).toMatchObject({ status: 'CANCELLED', cancel_reason: 'unpaid_hold' });
    expect(await tdb.db('registrations').where({ id: opening.id }).first()).toMatchObject({ status: 'PENDING' });
  });
});
