import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { createEvent, updateEvent } from '../../src/office/events.js';
import { sendEventReminders } from '../../src/jobs/send-reminders.js';
import type { Mailer, MailMessage } from '../../src/mail/types.js';
import { buildServer, type BuiltServer } from '../../src/http/server.js';
import { createScheduler } from '../../src/scheduler/scheduler.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

// A reminder round is named by its event's reminder_at: a run taking over a round left unfinished sends only to
// the registrations that round has not reached; a round asked for by moving reminderAt reaches everyone again.

const NOW = new Date('2026-11-22T00:00:00Z');
const STARTS_AT = new Date('2026-12-05T08:00:00Z');
const REMINDER_AT = new Date(NOW.getTime() - 60 * 60_000);

let tdb: TestDatabase;
const mail = useSinkAndMailer();

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db.raw('TRUNCATE registrations, checkout_sessions, events, job_runs, error_logs, app_settings, scheduler_periods CASCADE');
  await tdb.db.raw('DROP TRIGGER IF EXISTS refuse_records ON registration_emails');
});

function context(clock = new FixedClock(NOW), via: Mailer = mail.mailer) {
  return createTestContext({ db: tdb.db, mailer: via, clock, env: { ...mail.sink.configEnv(), APP_TIMEZONE: 'Australia/Sydney', CRON_SECRET: 'cron-secret-for-tests' } });
}

async function eventWith(addresses: string[], overrides: Record<string, unknown> = {}) {
  const event = await insertEvent(tdb.db, { starts_at: STARTS_AT, reminder_at: REMINDER_AT, ...overrides });
  const registrations = [];
  for (const email of addresses) registrations.push({ email, ...(await insertRegistration(tdb.db, context().cipher, event.id, { email })) });
  return { event, registrations };
}

const addressesOf = (count: number, prefix: string) => Array.from({ length: count }, (_, i) => `${prefix}${String(i).padStart(2, '0')}@example.org`);
const delivered = () => mail.sink.messages.flatMap((m) => m.envelope.to).sort();
const eventRow = (id: string) => tdb.db('events').where({ id }).first<{ reminder_claimed_at: Date | null; reminder_sent_at: Date | null }>('reminder_claimed_at', 'reminder_sent_at');
const roundRecords = (reminderAt: Date) => tdb.db('registration_emails').where({ reminder_at: reminderAt }).select<Array<{ registration_id: string }>>('registration_id');

/** The sink's mailer, calling `beforeSend` with the number of the send before each one goes out. */
function watching(beforeSend: (n: number) => Promise<void> | void): Mailer {
  let n = 0;
  return {
    kind: 'smtp',
    close: async () => undefined,
    async send(message: MailMessage) {
      await beforeSend(++n);
      return mail.mailer.send(message);
    },
  };
}

describe('send-reminders resumes a round stopped mid-event', () => {
  it('a run that takes over a crashed run\'s stale claim sends only to the registrations the round has not reached', async () => {
    const { event, registrations } = await eventWith(addressesOf(5, 'crash'));
    // The dead run reached the first two (and recorded them) and left its claim, 20 minutes old.
    await tdb.db('registration_emails').insert(
      registrations.slice(0, 2).map((r) => ({ registration_id: r.id, kind: 'event-reminder', sent_at: new Date(NOW.getTime() - 21 * 60_000), reminder_at: REMINDER_AT })),
    );
    await tdb.db('events').where({ id: event.id }).update({ reminder_claimed_at: new Date(NOW.getTime() - 20 * 60_000) });

    const summary = await sendEventReminders(context(), { trigger: 'scheduler' });

    expect(summary).toMatchObject({ outcome: 'ok', events: 1, sent: 3, failed: 0, alreadyReminded: 2 });
    expect(delivered()).toEqual(registrations.slice(2).map((r) => r.email).sort());
    expect(await eventRow(event.id)).toEqual({ reminder_claimed_at: NOW, reminder_sent_at: NOW });
    // Each registration has exactly one record of the round.
    expect((await roundRecords(REMINDER_AT)).map((r) => r.registration_id).sort()).toEqual(registrations.map((r) => r.id).sort());
  });

  it('rule 2 across runs: when the registrations a crashed run left are all failing, the round that reached others is marked sent, not retried by every later run', async () => {
    const { event, registrations } = await eventWith(addressesOf(3, 'left'));
    await tdb.db('registration_emails').insert(
      registrations.slice(0, 2).map((r) => ({ registration_id: r.id, kind: 'event-reminder', sent_at: new Date(NOW.getTime() - 21 * 60_000), reminder_at: REMINDER_AT })),
    );
    await tdb.db('events').where({ id: event.id }).update({ reminder_claimed_at: new Date(NOW.getTime() - 20 * 60_000) });
    const refusing = watching(() => {
      throw new Error('550 mailbox unavailable');
    });

    const summary = await sendEventReminders(context(new FixedClock(NOW), refusing), { trigger: 'scheduler' });

    expect(summary).toMatchObject({ events: 1, sent: 0, failed: 1, alreadyReminded: 2 });
    expect(await eventRow(event.id)).toEqual({ reminder_claimed_at: NOW, reminder_sent_at: NOW });
    const later = await sendEventReminders(context(new FixedClock(new Date(NOW.getTime() + 60 * 60_000)), refusing), { trigger: 'scheduler' });
    expect(later).toMatchObject({ events: 0, sent: 0, failed: 0 });
    expect(delivered()).toEqual([]);
  });

  it('a dry run of a round left unfinished lists only the registrations it has not reached', async () => {
    const { event, registrations } = await eventWith(addressesOf(3, 'dry'));
    await tdb.db('registration_emails').insert({ registration_id: registrations[0]?.id, kind: 'event-reminder', sent_at: NOW, reminder_at: REMINDER_AT });
    await tdb.db('events').where({ id: event.id }).update({ reminder_claimed_at: new Date(NOW.getTime() - 20 * 60_000) });

    const summary = await sendEventReminders(context(), { trigger: 'cli', dryRun: true });

    expect(summary).toMatchObject({ events: 1, sent: 2, alreadyReminded: 1 });
    expect(summary.wouldDo?.join('\n')).not.toContain(registrations[0]?.email);
  });

  it('a round asked for by moving reminderAt reaches everyone again, also when moved earlier than the round before; records of other rounds do not count', async () => {
    const clock = new FixedClock(NOW);
    const ctx = context(clock);
    const file = {
      slug: 'rounds-camp',
      title: 'Family Camp',
      location: 'Church Hall, 1 Main St',
      startsAt: STARTS_AT,
      capacity: null,
      published: true,
      reminderAt: REMINDER_AT,
      pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 0 }] },
    };
    const { event } = await createEvent(ctx, file);
    const addresses = addressesOf(3, 'round');
    const registrations = [];
    for (const email of addresses) registrations.push(await insertRegistration(tdb.db, ctx.cipher, event.id, { email }));
    expect(await sendEventReminders(ctx, { trigger: 'scheduler' })).toMatchObject({ sent: 3, alreadyReminded: 0 });

    // The office asks again with a reminder time earlier than the first round's.
    clock.advance(60 * 60_000);
    const earlier = new Date(REMINDER_AT.getTime() - 3 * 60 * 60_000);
    await updateEvent(ctx, { ...file, reminderAt: earlier });
    expect(await sendEventReminders(ctx, { trigger: 'scheduler' })).toMatchObject({ outcome: 'ok', sent: 3, alreadyReminded: 0 });

    // And once more, later; this round's run dies after reaching the first registration.
    clock.advance(60 * 60_000);
    const later = clock.now();
    await updateEvent(ctx, { ...file, reminderAt: later });
    await tdb.db('registration_emails').insert({ registration_id: registrations[0]?.id, kind: 'event-reminder', sent_at: later, reminder_at: later });
    await tdb.db('events').where({ id: event.id }).update({ reminder_claimed_at: new Date(later.getTime() - 20 * 60_000) });
    clock.advance(60_000);
    expect(await sendEventReminders(ctx, { trigger: 'scheduler' })).toMatchObject({ outcome: 'ok', sent: 2, alreadyReminded: 1 });

    const count = (address: string) => delivered().filter((to) => to === address).length;
    expect(addresses.map(count)).toEqual([2, 3, 3]);
    expect(await roundRecords(earlier)).toHaveLength(3);
    expect(await roundRecords(later)).toHaveLength(3);
  });

  it('a crash repeats at most the 6 sends in flight: no send starts while 6 others are still unrecorded', async () => {
    // 65 registrations: three chunks of sends (30, 30, 5), so records written per chunk would lag up to a chunk behind.
    const { event } = await eventWith(addressesOf(65, 'bound'));
    let worstUnrecorded = 0;
    const countingUnrecorded = watching(async (n) => {
      const recorded = Number((await tdb.db('registration_emails').count<{ n: string }>({ n: '*' }).first())?.n ?? 0);
      // This send and every one started before it, less those recorded: what a crash now would send again.
      worstUnrecorded = Math.max(worstUnrecorded, n - recorded);
    });

    const summary = await sendEventReminders(context(new FixedClock(NOW), countingUnrecorded), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', sent: 65 });
    expect(worstUnrecorded).toBeGreaterThan(0);
    expect(worstUnrecorded).toBeLessThanOrEqual(6);
    expect(await roundRecords(REMINDER_AT)).toHaveLength(65);
    expect((await eventRow(event.id))?.reminder_sent_at).toEqual(NOW);
  });

  it('a send that cannot be recorded stops the sends and fails the run, leaving the claim for a run that skips those recorded', async () => {
    const { event } = await eventWith(addressesOf(40, 'norecord'));
    await tdb.db.raw(`CREATE OR REPLACE FUNCTION refuse_records() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full'; END $$`);
    await tdb.db.raw('CREATE TRIGGER refuse_records BEFORE INSERT ON registration_emails FOR EACH STATEMENT EXECUTE FUNCTION refuse_records()');

    await expect(sendEventReminders(context(), { trigger: 'cli' })).rejects.toThrow(/disk full/);

    // Only the sends already in the window went out; each would be repeated, nothing more.
    expect(mail.sink.messages.length).toBeGreaterThan(0);
    expect(mail.sink.messages.length).toBeLessThanOrEqual(6);
    expect(await eventRow(event.id)).toEqual({ reminder_claimed_at: NOW, reminder_sent_at: null });
    expect(await tdb.db('job_runs').first()).toMatchObject({ job: 'send-reminders', outcome: 'failed' });
  });
});

describe('send-reminders asked to stop (the server is stopping)', () => {
  it('stops after the sends on the wire, records them and releases the claim; the next run at once sends only to the rest', async () => {
    const { event, registrations } = await eventWith(addressesOf(20, 'stop'));
    const stopping = new AbortController();
    const stopsAtThirdSend = watching((n) => {
      if (n === 3) stopping.abort();
    });

    const first = await sendEventReminders(context(new FixedClock(NOW), stopsAtThirdSend), { trigger: 'scheduler', signal: stopping.signal });

    expect(first).toMatchObject({ outcome: 'partial', events: 1, failed: 0, stopped: true });
    // The window's first 6 were handed over before the stop; none after it.
    expect(first.sent).toBeGreaterThanOrEqual(3);
    expect(first.sent).toBeLessThanOrEqual(6);
    expect(mail.sink.messages).toHaveLength(first.sent);
    expect(await roundRecords(REMINDER_AT)).toHaveLength(first.sent);
    expect(await eventRow(event.id)).toEqual({ reminder_claimed_at: null, reminder_sent_at: null });
    expect(await tdb.db('job_runs').where({ id: first.runId }).first()).toMatchObject({ outcome: 'partial' });

    // No stale threshold to wait out: the next run, a minute later, takes the round and finishes it.
    const second = await sendEventReminders(context(new FixedClock(new Date(NOW.getTime() + 60_000))), { trigger: 'scheduler' });

    expect(second).toMatchObject({ outcome: 'ok', events: 1, sent: 20 - first.sent, alreadyReminded: first.sent });
    expect(delivered()).toEqual(registrations.map((r) => r.email).sort());
    expect((await eventRow(event.id))?.reminder_sent_at).toEqual(new Date(NOW.getTime() + 60_000));
  });

  it("the in-app scheduler's stop() asks a running send-reminders to stop, so a stopping server leaves the round for the next run", async () => {
    const { event } = await eventWith(addressesOf(20, 'serve'));
    let stopped: Promise<void> | undefined;
    const ctx = context(
      new FixedClock(NOW),
      watching((n) => {
        if (n === 3) stopped = scheduler.stop();
      }),
    );
    const scheduler = createScheduler({ ctx });

    const tick = await scheduler.tick();
    await stopped;

    expect(tick.runs.find((run) => run.job === 'send-reminders')).toMatchObject({ outcome: 'partial', done: false });
    expect(mail.sink.messages.length).toBeLessThanOrEqual(6);
    expect(await roundRecords(REMINDER_AT)).toHaveLength(mail.sink.messages.length);
    expect(await eventRow(event.id)).toEqual({ reminder_claimed_at: null, reminder_sent_at: null });
  });

  it('a server shutting down asks a send-reminders run started by its cron endpoint to stop, and answers with the stopped summary', async () => {
    const { event } = await eventWith(addressesOf(20, 'cron'));
    let server: BuiltServer | undefined;
    let idle: Promise<void> | undefined;
    const ctx = context(
      new FixedClock(NOW),
      watching((n) => {
        if (n === 3) idle = server?.idle();
      }),
    );
    server = await buildServer(ctx, { packageVersion: '0.0.0-test' });
    try {
      const address = await server.app.listen({ port: 0, host: '127.0.0.1' });
      const response = await fetch(`${address}/api/cron/send-reminders`, { method: 'POST', headers: { authorization: 'Bearer cron-secret-for-tests' } });
      await idle;

      expect(response.status).toBe(200);
      const summary = (await response.json()) as { outcome: string; stopped?: boolean; sent: number };
      expect(summary).toMatchObject({ outcome: 'partial', stopped: true });
      expect(summary.sent).toBeLessThanOrEqual(6);
      expect(mail.sink.messages).toHaveLength(summary.sent);
      expect(await roundRecords(REMINDER_AT)).toHaveLength(summary.sent);
      expect(await eventRow(event.id)).toEqual({ reminder_claimed_at: null, reminder_sent_at: null });
    } finally {
      await server.app.close();
    }
  });
});
