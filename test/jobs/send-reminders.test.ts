import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock, type Clock } from '../../src/clock.js';
import { createEvent, updateEvent } from '../../src/office/events.js';
import type { Db } from '../../src/db/connect.js';
import { sendEventReminders } from '../../src/jobs/send-reminders.js';
import type { Mailer, MailMessage } from '../../src/mail/types.js';
import { silentLogger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/create.js';
import { verifyRegistrationToken } from '../../src/payments/links.js';
import { OPENING_LEASE_MS } from '../../src/payments/pay-now.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig } from '../support/env.js';
import { insertCheckoutSession, insertEvent, insertRegistration } from '../support/factories.js';
import { startMailApiServer } from '../support/mail-api-server.js';
import type { SinkMessage } from '../support/smtp-sink.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

const NOW = new Date('2026-11-22T00:00:00Z');
// 19:00 on Saturday 5 December in Sydney (AEDT, UTC+11).
const STARTS_AT = new Date('2026-12-05T08:00:00Z');
/** As emails write it, the zone named so a member elsewhere does not read it as their own time. */
const SYDNEY_START = /Saturday,? 5 December 2026 at 7:00\spm AEDT/;
const when = (time: RegExp) => new RegExp(`When: ${time.source}`);
const PSP = { PSP_SECRET_KEY: 'sk_test_reminders', PSP_WEBHOOK_SECRET: 'whsec_reminders' };

let tdb: TestDatabase;
let rejectRecipient: (address: string) => boolean = () => false;
let dropAfterDataTo: (address: string) => boolean = () => false;

const mail = useSinkAndMailer({
  rejectRecipient: (address) => rejectRecipient(address),
  dropAfterData: (message) => message.envelope.to.some((address) => dropAfterDataTo(address)),
});

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  rejectRecipient = () => false;
  dropAfterDataTo = () => false;
  await tdb.db.raw('TRUNCATE registrations, checkout_sessions, events, job_runs, error_logs, app_settings CASCADE');
});

function context(env: Record<string, string | undefined> = {}, clock: Clock = new FixedClock(NOW), via: Mailer = mail.mailer) {
  return createTestContext({ db: tdb.db, mailer: via, clock, env: { ...mail.sink.configEnv(), APP_TIMEZONE: 'Australia/Sydney', ...env } });
}

function dueEvent(overrides: Record<string, unknown> = {}) {
  return insertEvent(tdb.db, {
    title: 'Family Camp',
    location: 'Church Hall, 1 Main St',
    starts_at: STARTS_AT,
    reminder_at: new Date(NOW.getTime() - 60 * 60_000),
    ...overrides,
  });
}

/** The event file of a published, free event whose reminder is due, as the office writes it. */
function dueEventFile(slug: string) {
  return {
    slug,
    title: 'Family Camp',
    location: 'Church Hall, 1 Main St',
    startsAt: STARTS_AT,
    capacity: null,
    published: true,
    reminderAt: new Date(NOW.getTime() - 60 * 60_000),
    pricing: { tiers: [{ id: 'adult', label: 'Adult', price: 0 }] },
  };
}

function register(eventId: string, email: string, overrides: Record<string, unknown> = {}) {
  const cipher = context().cipher;
  return insertRegistration(tdb.db, cipher, eventId, { email, contact_name: `Member ${email.split('@')[0]}`, ...overrides });
}

async function eventRow(db: Db, id: string) {
  return db('events')
    .where({ id })
    .first<{ reminder_claimed_at: Date | null; reminder_sent_at: Date | null }>('reminder_claimed_at', 'reminder_sent_at');
}

/**
 * The sink's mailer, with `meanwhile` done once, as the first message is sent (something another process does
 * mid-run). No send is handed over before it has committed, so the renewal before the next chunk (which starts
 * only after 24 of the first chunk's sends) always sees it, however loaded the machine.
 */
function afterFirstSend(meanwhile: () => Promise<unknown>): Mailer {
  let done: Promise<unknown> | undefined;
  return {
    kind: 'smtp',
    close: async () => undefined,
    async send(message: MailMessage) {
      done ??= meanwhile();
      await done;
      return mail.mailer.send(message);
    },
  };
}

const recipients = (messages: SinkMessage[]) => messages.flatMap((m) => m.envelope.to).sort();
const messageTo = (address: string) => mail.sink.messages.find((m) => m.envelope.to.includes(address));

describe('send-reminders', () => {
  it('a due reminder reaches every registration that is not CANCELLED, with date and time in APP_TIMEZONE, the place and an .ics file', async () => {
    const event = await dueEvent();
    await register(event.id, 'ann@example.org', { contact_name: 'Ann <Lee> & Co' });
    await register(event.id, 'bob@example.org');
    await register(event.id, 'cat@example.org', { status: 'CANCELLED', cancelled_at: NOW });

    const summary = await sendEventReminders(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ job: 'send-reminders', outcome: 'ok', dryRun: false, events: 1, sent: 2, failed: 0, skipped: 0, paymentReminders: 0 });
    expect(recipients(mail.sink.messages)).toEqual(['ann@example.org', 'bob@example.org']);
    const ann = messageTo('ann@example.org');
    expect(ann?.subject).toBe('Reminder: Family Camp');
    expect(ann?.from).toEqual({ name: 'Grace Community Church', address: 'events@example.org' });
    expect(ann?.text).toMatch(when(SYDNEY_START));
    expect(ann?.text).toContain('Where: Church Hall, 1 Main St');
    expect(ann?.text).toContain('Hi Ann <Lee> & Co,');
    expect(ann?.html).toContain('Ann &lt;Lee&gt; &amp; Co');
    expect(ann?.html).not.toContain('Ann <Lee>');
    expect(ann?.attachments).toHaveLength(1);
    const ics = ann?.attachments[0];
    expect(ics?.filename).toBe('event.ics');
    expect(ics?.contentType).toBe('text/calendar');
    expect(ann?.raw.toString('utf8')).toMatch(/Content-Type: text\/calendar; method=PUBLISH; charset=utf-8/i);
    const calendar = ics?.content.toString('utf8') ?? '';
    expect(calendar).toContain('METHOD:PUBLISH');
    expect(calendar).toContain('DTSTART:20261205T080000Z');
    expect(calendar).toContain(`UID:${event.id}@eventops`);
    expect(calendar).toContain('SUMMARY:Family Camp');
    expect(calendar).toContain('LOCATION:Church Hall\\, 1 Main St');
    // Stamped by the run's clock, not the machine's.
    expect(calendar).toContain('\r\nDTSTAMP:20261122T000000Z\r\n');

    const row = await eventRow(tdb.db, event.id);
    expect(row?.reminder_sent_at).toEqual(NOW);
    const run = await tdb.db('job_runs').where({ id: summary.runId }).first();
    expect(run).toMatchObject({ job: 'send-reminders', trigger: 'cli', outcome: 'ok', summary: { sent: 2, events: 1 } });
  });

  it('an event that ends: the reminder says from when to when, and its calendar entry runs to the end', async () => {
    // The camp runs from Saturday 19:00 to Monday 15:00 in Sydney.
    const event = await dueEvent({ ends_at: new Date('2026-12-07T04:00:00Z') });
    await register(event.id, 'ends@example.org');

    await sendEventReminders(context(), { trigger: 'cli' });

    const message = messageTo('ends@example.org');
    expect(message?.text).toMatch(when(new RegExp(`${SYDNEY_START.source}\\s?–\\s?Monday,? 7 December 2026 at 3:00\\spm AEDT`)));
    const calendar = message?.attachments[0]?.content.toString('utf8') ?? '';
    expect(calendar).toContain('\r\nDTEND:20261207T040000Z\r\n');
    expect(calendar).not.toContain('DURATION');
  });

  it('calendar lines are folded at 75 octets, never inside a character, so a long non-Latin title and place arrive whole', async () => {
    const title = 'Семейный лагерь: молитва, музыка; ужин — Gia đình Trại hè 2026 ' + '日本語のタイトル'.repeat(4);
    const location = 'Église Saint-Étienne, 12 rue de l’Hôtel-de-Ville; salle paroissiale près du presbytère';
    const event = await dueEvent({ title, location });
    await register(event.id, 'fold@example.org');

    await sendEventReminders(context(), { trigger: 'cli' });

    const calendar = messageTo('fold@example.org')?.attachments[0]?.content ?? Buffer.alloc(0);
    const lines = calendar.toString('utf8').split('\r\n');
    for (const line of lines) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
    expect(calendar.toString('utf8')).not.toContain('\uFFFD');
    const unfolded = calendar.toString('utf8').replace(/\r\n[ \t]/g, '');
    const escape = (text: string) => text.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,');
    expect(unfolded).toContain(`\r\nSUMMARY:${escape(title)}\r\n`);
    expect(unfolded).toContain(`\r\nLOCATION:${escape(location)}\r\n`);
  });

  it('a moved event reminded again carries the same calendar UID with a higher SEQUENCE, so calendars update the entry instead of keeping the old time', async () => {
    const clock = new FixedClock(new Date(NOW.getTime() - 24 * 60 * 60_000));
    const ctx = context({}, clock);
    const file = dueEventFile('moved-camp');
    const { event } = await createEvent(ctx, file);
    await register(event.id, 'seq@example.org');
    clock.set(NOW);
    await sendEventReminders(ctx, { trigger: 'cli' });
    // The office moves the event a day later and asks for a fresh reminder.
    clock.advance(60 * 60_000);
    await updateEvent(ctx, { ...file, startsAt: new Date('2026-12-06T08:00:00Z'), reminderAt: clock.now() });
    await sendEventReminders(ctx, { trigger: 'cli' });

    const calendars = mail.sink.messages.map((m) => m.attachments[0]?.content.toString('utf8') ?? '');
    expect(calendars).toHaveLength(2);
    const field = (calendar: string, name: string) => new RegExp(`\\r\\n${name}:([^\\r]*)\\r\\n`).exec(calendar)?.[1];
    expect(field(calendars[1] as string, 'DTSTART')).toBe('20261206T080000Z');
    expect(field(calendars[1] as string, 'UID')).toBe(field(calendars[0] as string, 'UID'));
    const sequences = calendars.map((calendar) => Number(field(calendar, 'SEQUENCE')));
    expect(sequences[0]).toBeGreaterThanOrEqual(0);
    expect(sequences[1]).toBeGreaterThan(sequences[0] as number);
  });

  it('through the mail API, a reminder the office asks for again (a new reminderAt) reaches everyone again, and a crashed run repeated is still dropped as a duplicate', async () => {
    const api = await startMailApiServer();
    const apiMailer = await createMailer(testConfig(api.configEnv()), silentLogger(), { timeoutMs: 2_000 });
    try {
      const clock = new FixedClock(NOW);
      const ctx = createTestContext({ db: tdb.db, mailer: apiMailer, clock, env: { ...api.configEnv(), APP_TIMEZONE: 'Australia/Sydney' } });
      const file = dueEventFile('api-camp');
      const { event } = await createEvent(ctx, file);
      await register(event.id, 'ann@example.org');
      await register(event.id, 'bob@example.org');
      expect(await sendEventReminders(ctx, { trigger: 'scheduler' })).toMatchObject({ outcome: 'ok', sent: 2 });

      // A run that died after its sends, before marking the reminder sent: the next run skips those it recorded.
      await tdb.db('events').where({ id: event.id }).update({ reminder_sent_at: null, reminder_claimed_at: null });
      expect(await sendEventReminders(ctx, { trigger: 'scheduler' })).toMatchObject({ outcome: 'ok', sent: 0, alreadyReminded: 2 });
      // One that died before it could record its sends: the next run repeats them, and the mail API drops them
      // as the duplicates they are.
      await tdb.db('events').where({ id: event.id }).update({ reminder_sent_at: null, reminder_claimed_at: null });
      await tdb.db('registration_emails').delete();
      expect(await sendEventReminders(ctx, { trigger: 'scheduler' })).toMatchObject({ outcome: 'ok', sent: 2 });
      expect(api.sent).toHaveLength(2);

      // Two hours later the office moves the event an hour earlier and asks for a fresh reminder.
      clock.advance(2 * 60 * 60_000);
      const movedTo = new Date(STARTS_AT.getTime() - 60 * 60_000);
      await updateEvent(ctx, { ...file, startsAt: movedTo, reminderAt: clock.now() });
      const again = await sendEventReminders(ctx, { trigger: 'scheduler' });

      expect(again).toMatchObject({ outcome: 'ok', events: 1, sent: 2 });
      // The mail service really sent the new reminder to each of them, with the new time.
      expect(api.sent).toHaveLength(4);
      const resent = api.sent.slice(2);
      expect(resent.flatMap((request) => request.body.to as string[]).sort()).toEqual(['ann@example.org', 'bob@example.org']);
      for (const request of resent) expect(String(request.body.text)).toMatch(/at 6:00\spm AEDT/);
    } finally {
      await apiMailer.close();
      await api.close();
    }
  });

  it('each change of the event raises SEQUENCE, even two changes within the same second', async () => {
    // One instant for everything: a SEQUENCE counted in seconds since creation stayed 0 throughout.
    const ctx = context();
    const file = dueEventFile('busy-camp');
    const { event } = await createEvent(ctx, file);
    await register(event.id, 'busy@example.org');
    await sendEventReminders(ctx, { trigger: 'cli' });
    // The office moves the event, then corrects the place, each time asking for a fresh reminder (a new reminderAt).
    await updateEvent(ctx, { ...file, startsAt: new Date('2026-12-06T08:00:00Z'), reminderAt: new Date(NOW.getTime() - 59 * 60_000) });
    await sendEventReminders(ctx, { trigger: 'cli' });
    await updateEvent(ctx, {
      ...file,
      startsAt: new Date('2026-12-06T08:00:00Z'),
      location: 'Parish Centre',
      reminderAt: new Date(NOW.getTime() - 58 * 60_000),
    });
    await sendEventReminders(ctx, { trigger: 'cli' });

    const calendars = mail.sink.messages.map((m) => m.attachments[0]?.content.toString('utf8') ?? '');
    expect(calendars).toHaveLength(3);
    const field = (calendar: string, name: string) => new RegExp(`\\r\\n${name}:([^\\r]*)\\r\\n`).exec(calendar)?.[1];
    expect(calendars.map((calendar) => field(calendar, 'SEQUENCE'))).toEqual(['0', '1', '2']);
    expect(field(calendars[2] as string, 'LOCATION')).toBe('Parish Centre');
    expect(new Set(calendars.map((calendar) => field(calendar, 'UID'))).size).toBe(1);
  });

  it('events whose reminder is not due, has no reminder, is deleted, has started or was already sent are left alone', async () => {
    const notDue = await dueEvent({ reminder_at: new Date(NOW.getTime() + 60_000) });
    const noReminder = await dueEvent({ reminder_at: null });
    const deleted = await dueEvent({ deleted_at: new Date(NOW.getTime() - 1_000) });
    const started = await dueEvent({ starts_at: new Date(NOW.getTime() - 1_000) });
    const alreadySent = await dueEvent({ reminder_sent_at: new Date(NOW.getTime() - 30 * 60_000) });
    for (const event of [notDue, noReminder, deleted, started, alreadySent]) await register(event.id, `${event.slug}@example.org`);

    const summary = await sendEventReminders(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', events: 0, sent: 0, failed: 0, skipped: 0 });
    expect(mail.sink.messages).toHaveLength(0);
    const rows = await tdb.db('events').select('id', 'reminder_claimed_at', 'reminder_sent_at');
    for (const row of rows) {
      expect(row.reminder_claimed_at).toBeNull();
      expect(row.reminder_sent_at).toEqual(row.id === alreadySent.id ? new Date(NOW.getTime() - 30 * 60_000) : null);
    }
  });

  it('a PENDING registration with an amount owing gets the payment reminder with the amount, bank details and a pay-now link that verifies', async () => {
    const ctx = context(PSP);
    await setSetting(tdb.db, 'bank.accountName', 'Grace Community Church', NOW);
    await setSetting(tdb.db, 'bank.bsb', '062-000', NOW);
    await setSetting(tdb.db, 'bank.accountNumber', '1234 5678', NOW);
    const event = await dueEvent({ online_payment: true });
    const pending = await register(event.id, 'pat@example.org', { status: 'PENDING', total_minor: 12_500 });
    await register(event.id, 'paid@example.org', { status: 'PAID' });

    const summary = await sendEventReminders(ctx, { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', sent: 2, paymentReminders: 1 });
    const pat = messageTo('pat@example.org');
    expect(pat?.subject).toBe('Payment reminder: Family Camp');
    expect(pat?.text).toContain('$125.00 still owing');
    expect(pat?.text).toMatch(SYDNEY_START);
    expect(pat?.text).toContain('BSB: 062-000');
    expect(pat?.text).toContain('Account number: 1234 5678');
    const link = /Pay by card: (\S+)/.exec(pat?.text ?? '')?.[1];
    expect(link).toBeDefined();
    const url = new URL(link as string);
    expect(`${url.origin}${url.pathname}`).toBe(`http://127.0.0.1:3000/registrations/${pending.id}/pay`);
    expect(verifyRegistrationToken(ctx.config.authSecret, pending.id, 1, url.searchParams.get('token') ?? '')).toBe(true);
    expect(pat?.html).toContain(`/registrations/${pending.id}/pay?token`);
    expect(pat?.attachments).toHaveLength(0);

    const paid = messageTo('paid@example.org');
    expect(paid?.subject).toBe('Reminder: Family Camp');
    expect(paid?.text).not.toContain('/pay?token');
  });

  it("the payment reminder's card button asks for what the card will be charged: with the card fee passed on, the fee included, as the pay-now page charges it", async () => {
    // Default card fee 1.7% + 30 cents: on $120.00 the surcharge is floor((12000 × 0.017 + 30) / 0.983) = 238.
    const withFee = await dueEvent({ online_payment: true, pass_card_fee: true });
    const owing = await register(withFee.id, 'fee@example.org', { status: 'PENDING', total_minor: 12_000 });
    const withoutFee = await dueEvent({ online_payment: true, pass_card_fee: false });
    await register(withoutFee.id, 'nofee@example.org', { status: 'PENDING', total_minor: 12_000 });
    const ctx = context(PSP);

    expect(await sendEventReminders(ctx, { trigger: 'cli' })).toMatchObject({ sent: 2, paymentReminders: 2 });

    const fee = messageTo('fee@example.org');
    expect(fee?.text).toContain('$120.00 still owing');
    expect(fee?.html).toContain('Pay $122.38 by card');
    expect(fee?.html).not.toContain('Pay $120.00 by card');
    expect(fee?.html).toContain('includes a $2.38 card processing fee');
    expect(fee?.text).toContain('By card the total is $122.38, which includes a $2.38 card processing fee.');
    expect(fee?.text).toContain(`/registrations/${owing.id}/pay?token=`);
    const plain = messageTo('nofee@example.org');
    expect(plain?.html).toContain('Pay $120.00 by card');
    expect(plain?.html).not.toContain('card processing fee');
    expect(plain?.text).not.toContain('card processing fee');
  });

  it("the payment reminder has no pay-now link for a balance below the card provider's minimum charge (AUD 0.50), fee included: it asks for a bank transfer", async () => {
    const cheap = await dueEvent({ online_payment: true });
    await register(cheap.id, 'candle@example.org', { status: 'PENDING', total_minor: 40 });
    // 20 cents plus today's card fee (1.7% + 30 cents, grossed up: 30 cents) is 50 cents by card: chargeable.
    const withFee = await dueEvent({ online_payment: true, pass_card_fee: true });
    const lifted = await register(withFee.id, 'lifted@example.org', { status: 'PENDING', total_minor: 20 });

    expect(await sendEventReminders(context(PSP), { trigger: 'cli' })).toMatchObject({ sent: 2, paymentReminders: 2 });

    const candle = messageTo('candle@example.org');
    expect(candle?.text).toContain('$0.40 still owing');
    expect(candle?.text).not.toContain('/pay?token');
    expect(candle?.html).not.toContain('by card');
    expect(messageTo('lifted@example.org')?.text).toContain(`/registrations/${lifted.id}/pay?token=`);
  });

  it('the payment reminder has no pay-now link when the event takes no online payment or no payment provider is configured', async () => {
    const offline = await dueEvent({ online_payment: false });
    await register(offline.id, 'offline@example.org', { status: 'PENDING', total_minor: 5_000 });
    const first = await sendEventReminders(context(PSP), { trigger: 'cli' });
    expect(first).toMatchObject({ sent: 1, paymentReminders: 1 });

    const online = await dueEvent({ online_payment: true });
    await register(online.id, 'noprovider@example.org', { status: 'PENDING', total_minor: 5_000 });
    const second = await sendEventReminders(context(), { trigger: 'cli' });
    expect(second).toMatchObject({ sent: 1, paymentReminders: 1 });

    for (const address of ['offline@example.org', 'noprovider@example.org']) {
      const message = messageTo(address);
      expect(message?.subject).toBe('Payment reminder: Family Camp');
      expect(message?.text).toContain('$50.00 still owing');
      expect(message?.text).not.toContain('/pay?token');
      expect(message?.html).not.toContain('/pay?token');
      // Without bank details in Settings none are invented.
      expect(message?.text).not.toContain('BSB');
    }
  });

  it('a PENDING registration whose pay-now card payment may still be confirmed gets the plain reminder, not a request to pay', async () => {
    const event = await dueEvent({ online_payment: true });
    const pending = await register(event.id, 'paying@example.org', { status: 'PENDING', total_minor: 12_000 });
    await insertCheckoutSession(tdb.db, context().cipher, event.id, { status: 'EXPIRED', payload_enc: null, registration_id: pending.id, net_minor: 12_000 });

    const summary = await sendEventReminders(context(PSP), { trigger: 'cli' });

    expect(summary).toMatchObject({ sent: 1, paymentReminders: 0 });
    expect(mail.sink.messages[0]?.subject).toBe('Reminder: Family Camp');
    expect(mail.sink.messages[0]?.text).not.toContain('/pay?token=');
  });

  it('a pay-now claim abandoned before its provider session was recorded (past its lease) does not hold back the payment reminder; a claim still within its lease does', async () => {
    const event = await dueEvent({ online_payment: true });
    const claimFor = async (email: string, ageMs: number) => {
      const pending = await register(event.id, email, { status: 'PENDING', total_minor: 12_000 });
      const claim = await insertCheckoutSession(tdb.db, context().cipher, event.id, {
        registration_id: pending.id, payload_enc: null, provider_session_id: null, net_minor: 12_000, expires_at: new Date(NOW.getTime() + 29 * 60_000),
      });
      await tdb.db.raw('UPDATE checkout_sessions SET created_at = ? WHERE id = ?', [new Date(NOW.getTime() - ageMs), claim.id]);
      return pending;
    };
    // Its request died while the provider opened the session: no payment page was ever handed out.
    const abandoned = await claimFor('abandoned@example.org', OPENING_LEASE_MS);
    // Its request may still be waiting for the provider, and hand the page out.
    await claimFor('opening@example.org', OPENING_LEASE_MS - 1_000);

    expect(await sendEventReminders(context(PSP), { trigger: 'cli' })).toMatchObject({ sent: 2, paymentReminders: 1 });
    const to = (address: string) => mail.sink.messages.find((m) => m.envelope.to.includes(address));
    expect(to('abandoned@example.org')?.subject).toBe('Payment reminder: Family Camp');
    expect(to('abandoned@example.org')?.text).toContain('$120.00 still owing');
    expect(to('abandoned@example.org')?.text).toContain(`/registrations/${abandoned.id}/pay?token=`);
    expect(to('opening@example.org')?.subject).toBe('Reminder: Family Camp');
    expect(to('opening@example.org')?.text).not.toContain('/pay?token=');
  });

  it('a PENDING registration whose card payment was kept with its alert still open gets the plain reminder, not a second request to pay; once the alert is resolved it is asked to pay', async () => {
    const event = await dueEvent({ online_payment: true });
    const keptFor = async (email: string, resolved: boolean) => {
      const pending = await register(event.id, email, { status: 'PENDING', total_minor: 12_000 });
      const kept = await insertCheckoutSession(tdb.db, context().cipher, event.id, { status: 'UNFULFILLED', payload_enc: null, registration_id: pending.id, net_minor: 12_000 });
      await tdb.db('operations_alerts').insert({
        kind: 'amount_mismatch', reason: 'charged another amount', checkout_session_id: kept.id, amount_minor: 9_000,
        ...(resolved ? { resolved_at: new Date(), resolution: 'refunded at the provider' } : {}),
      });
    };
    await keptFor('kept@example.org', false);
    // The office refunded this one at the provider and resolved its alert: the money is owing again.
    await keptFor('refunded@example.org', true);

    expect(await sendEventReminders(context(PSP), { trigger: 'cli' })).toMatchObject({ sent: 2, paymentReminders: 1 });
    const to = (address: string) => mail.sink.messages.find((m) => m.envelope.to.includes(address));
    expect(to('kept@example.org')?.subject).toBe('Reminder: Family Camp');
    expect(to('kept@example.org')?.text).not.toContain('/pay?token=');
    expect(to('refunded@example.org')?.subject).toBe('Payment reminder: Family Camp');
  });

  it('a PENDING registration with nothing owing gets the plain reminder', async () => {
    const event = await dueEvent({ online_payment: true });
    await register(event.id, 'free@example.org', { status: 'PENDING', total_minor: 0, payment_method: 'free' });

    const summary = await sendEventReminders(context(PSP), { trigger: 'cli' });

    expect(summary).toMatchObject({ sent: 1, paymentReminders: 0 });
    expect(mail.sink.messages[0]?.subject).toBe('Reminder: Family Camp');
    expect(mail.sink.messages[0]?.attachments[0]?.filename).toBe('event.ics');
  });

  it('rule 2: when some sends fail the event is marked sent, the run is partial, and the failed recipient is not retried', async () => {
    const event = await dueEvent();
    for (const name of ['one', 'two', 'bounce']) await register(event.id, `${name}@example.org`);
    rejectRecipient = (address) => address === 'bounce@example.org';

    const summary = await sendEventReminders(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'partial', events: 1, sent: 2, failed: 1 });
    expect(recipients(mail.sink.messages)).toEqual(['one@example.org', 'two@example.org']);
    expect((await eventRow(tdb.db, event.id))?.reminder_sent_at).toEqual(NOW);
    expect(await tdb.db('job_runs').where({ id: summary.runId }).first()).toMatchObject({ outcome: 'partial' });
    const errors = await tdb.db('error_logs').select('source', 'message', 'context');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ source: 'job:send-reminders', context: { eventId: event.id, failedSends: 1 } });
    expect(JSON.stringify(errors)).not.toContain('bounce@example.org');

    rejectRecipient = () => false;
    const again = await sendEventReminders(context(), { trigger: 'cli' });
    expect(again).toMatchObject({ outcome: 'ok', events: 0, sent: 0 });
    expect(mail.sink.messages).toHaveLength(2);
  });

  it('rule 2: when every send fails the claim is released, the run failed, and a later run sends to everyone', async () => {
    const event = await dueEvent();
    await register(event.id, 'first@example.org');
    await register(event.id, 'second@example.org');
    rejectRecipient = () => true;

    const failed = await sendEventReminders(context(), { trigger: 'cli' });

    expect(failed).toMatchObject({ outcome: 'failed', events: 1, sent: 0, failed: 2 });
    expect(await eventRow(tdb.db, event.id)).toEqual({ reminder_claimed_at: null, reminder_sent_at: null });

    rejectRecipient = () => false;
    const later = new FixedClock(new Date(NOW.getTime() + 30 * 60_000));
    const retry = await sendEventReminders(context({}, later), { trigger: 'scheduler' });
    expect(retry).toMatchObject({ outcome: 'ok', events: 1, sent: 2, failed: 0 });
    expect(recipients(mail.sink.messages)).toEqual(['first@example.org', 'second@example.org']);
    expect((await eventRow(tdb.db, event.id))?.reminder_sent_at).toEqual(later.now());
  });

  it('an ambiguous mail-server error counts as sent (the server may have the message)', async () => {
    const event = await dueEvent();
    await register(event.id, 'clear@example.org');
    await register(event.id, 'maybe@example.org');
    dropAfterDataTo = (address) => address === 'maybe@example.org';

    const summary = await sendEventReminders(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', sent: 2, failed: 0 });
    expect(mail.sink.unanswered.map((m) => m.envelope.to[0])).toEqual(['maybe@example.org']);
    expect((await eventRow(tdb.db, event.id))?.reminder_sent_at).toEqual(NOW);
  });

  it('an event whose registrations are all cancelled is marked sent without sending', async () => {
    const event = await dueEvent();
    await register(event.id, 'gone@example.org', { status: 'CANCELLED', cancelled_at: NOW });

    const summary = await sendEventReminders(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', events: 1, sent: 0, failed: 0 });
    expect(mail.sink.messages).toHaveLength(0);
    expect((await eventRow(tdb.db, event.id))?.reminder_sent_at).toEqual(NOW);
  });

  it('two overlapping runs send each reminder exactly once', async () => {
    const event = await dueEvent();
    const addresses = Array.from({ length: 7 }, (_, i) => `overlap${i}@example.org`);
    for (const address of addresses) await register(event.id, address);

    const [a, b] = await Promise.all([
      sendEventReminders(context(), { trigger: 'cli' }),
      sendEventReminders(context(), { trigger: 'scheduler' }),
    ]);

    expect(a.sent + b.sent).toBe(7);
    expect(a.events + b.events).toBe(1);
    expect(recipients(mail.sink.messages)).toEqual([...addresses].sort());
    expect((await eventRow(tdb.db, event.id))?.reminder_sent_at).toEqual(NOW);
  });

  it('a claim left by a crashed run is reclaimed after the 15-minute stale threshold', async () => {
    const event = await dueEvent();
    await register(event.id, 'late@example.org');
    await tdb.db.raw(`UPDATE events SET reminder_claimed_at = ?::timestamptz - interval '20 minutes' WHERE id = ?`, [NOW, event.id]);

    const summary = await sendEventReminders(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', events: 1, sent: 1, skipped: 0 });
    expect(recipients(mail.sink.messages)).toEqual(['late@example.org']);
    expect(await eventRow(tdb.db, event.id)).toEqual({ reminder_claimed_at: NOW, reminder_sent_at: NOW });
  });

  it('a fresh claim held by another run (1 minute old) is skipped', async () => {
    const event = await dueEvent();
    await register(event.id, 'busy@example.org');
    await tdb.db.raw(`UPDATE events SET reminder_claimed_at = ?::timestamptz - interval '1 minute' WHERE id = ?`, [NOW, event.id]);

    const summary = await sendEventReminders(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', events: 0, sent: 0, skipped: 1 });
    expect(mail.sink.messages).toHaveLength(0);
    expect(await eventRow(tdb.db, event.id)).toEqual({ reminder_claimed_at: new Date(NOW.getTime() - 60_000), reminder_sent_at: null });
  });

  it('a long run renews its claim, and stops sending for an event another run has taken over', async () => {
    const event = await dueEvent();
    for (let i = 0; i < 35; i++) await register(event.id, `long${i}@example.org`);
    // Every reading of this clock is 6 minutes after the last, so the run renews its claim before each chunk of sends.
    let tick = NOW.getTime();
    const slowClock: Clock = { now: () => new Date((tick += 6 * 60_000)) };
    const otherRunsClaim = new Date(NOW.getTime() + 24 * 60 * 60_000);
    const takenOverAfterFirstSend = afterFirstSend(() => tdb.db('events').where({ id: event.id }).update({ reminder_claimed_at: otherRunsClaim }));

    const summary = await sendEventReminders(context({}, slowClock, takenOverAfterFirstSend), { trigger: 'cli' });

    // The first chunk (30) went out under a renewed claim; the next renewal found the claim gone and stopped.
    expect(summary).toMatchObject({ outcome: 'ok', events: 1, sent: 30, failed: 0 });
    expect(mail.sink.messages).toHaveLength(30);
    // The other run's claim is left alone, for it to finish and mark sent.
    expect(await eventRow(tdb.db, event.id)).toEqual({ reminder_claimed_at: otherRunsClaim, reminder_sent_at: null });
  });

  it('an event deleted while its reminders go out stops the run at the next chunk', async () => {
    const event = await dueEvent();
    for (let i = 0; i < 65; i++) await register(event.id, `deleted-mid-run${i}@example.org`);
    const deletedAfterFirstSend = afterFirstSend(() => tdb.db('events').where({ id: event.id }).update({ deleted_at: NOW }));

    const summary = await sendEventReminders(context({}, new FixedClock(NOW), deletedAfterFirstSend), { trigger: 'cli' });

    // The first chunk was already on its way; no later one is sent.
    expect(summary).toMatchObject({ sent: 30, failed: 0 });
    expect(mail.sink.messages).toHaveLength(30);
    expect(await eventRow(tdb.db, event.id)).toMatchObject({ reminder_sent_at: null });
  });

  it('an event moved while its reminders go out: every chunk after the change carries the new time, place and calendar entry', async () => {
    const event = await dueEvent();
    for (let i = 0; i < 35; i++) await register(event.id, `moved${String(i).padStart(2, '0')}@example.org`);
    // 19:00 on Sunday 6 December in Sydney.
    const movedTo = new Date('2026-12-06T08:00:00Z');
    const movedAfterFirstSend = afterFirstSend(() =>
      tdb.db('events').where({ id: event.id }).update({ starts_at: movedTo, location: 'Parish Centre', title: 'Family Camp (new date)' }),
    );

    const summary = await sendEventReminders(context({}, new FixedClock(NOW), movedAfterFirstSend), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', sent: 35, failed: 0 });
    const moved = mail.sink.messages.filter((m) => when(/Sunday,? 6 December 2026 at 7:00\spm AEDT/).test(m.text));
    const old = mail.sink.messages.filter((m) => when(SYDNEY_START).test(m.text));
    // The first chunk of 30 was composed under the claim taken before the change; the next renewal read the move.
    expect(old).toHaveLength(30);
    expect(moved).toHaveLength(5);
    for (const message of moved) {
      expect(message.subject).toBe('Reminder: Family Camp (new date)');
      expect(message.text).toContain('Where: Parish Centre');
      const calendar = message.attachments[0]?.content.toString('utf8') ?? '';
      expect(calendar).toContain('DTSTART:20261206T080000Z');
      expect(calendar).toContain('LOCATION:Parish Centre');
    }
    expect(await eventRow(tdb.db, event.id)).toMatchObject({ reminder_sent_at: NOW });
  });

  it("renews the claim for the next chunk while the chunk before still has sends on the wire, so the window never drains at a chunk boundary", async () => {
    const event = await dueEvent();
    for (let i = 0; i < 35; i++) await register(event.id, `window${i}@example.org`);
    let releaseLastOfFirstChunk: () => void = () => undefined;
    const lastOfFirstChunkHeld = new Promise<void>((resolve) => (releaseLastOfFirstChunk = resolve));
    let sends = 0;
    let inFlight = 0;
    let inFlightAtRenewal: number | undefined;
    const onQuery = (query: { sql: string }) => {
      if (sends > 0 && inFlightAtRenewal === undefined && /^update "events" set "reminder_claimed_at"/.test(query.sql)) {
        inFlightAtRenewal = inFlight;
        releaseLastOfFirstChunk();
      }
    };
    // The 30th send, the last of the first chunk, is answered only once the next chunk's renewal has started.
    const holdsLastOfFirstChunk: Mailer = {
      kind: 'smtp',
      close: async () => undefined,
      async send(message: MailMessage) {
        const n = ++sends;
        inFlight++;
        try {
          if (n === 30) await lastOfFirstChunkHeld;
          return await mail.mailer.send(message);
        } finally {
          inFlight--;
        }
      },
    };
    tdb.db.on('query', onQuery);
    try {
      const summary = await sendEventReminders(context({}, new FixedClock(NOW), holdsLastOfFirstChunk), { trigger: 'cli' });
      expect(summary).toMatchObject({ outcome: 'ok', sent: 35, failed: 0 });
    } finally {
      tdb.db.off('query', onQuery);
    }
    expect(inFlightAtRenewal).toBeGreaterThanOrEqual(1);
    expect(mail.sink.messages).toHaveLength(35);
    expect(await tdb.db('registration_emails').count({ n: '*' }).first()).toEqual({ n: 35 });
  });

  it('each reminded registration has its one record for `registrations show` when the run ends, though sends are recorded while others are on the wire', async () => {
    const event = await dueEvent();
    // Three chunks of sends (30, 30, 5); every fifth registration owes a payment.
    const registrations = [];
    for (let i = 0; i < 65; i++) {
      registrations.push(await register(event.id, `chunked${i}@example.org`, i % 5 === 0 ? { status: 'PENDING', total_minor: 4_000 } : {}));
    }

    const summary = await sendEventReminders(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', sent: 65, paymentReminders: 13 });
    const records = await tdb.db('registration_emails').select<Array<{ registration_id: string; kind: string }>>('registration_id', 'kind');
    expect(records).toHaveLength(65);
    const kinds = new Map(records.map((r) => [r.registration_id, r.kind]));
    registrations.forEach((registration, i) => expect(kinds.get(registration.id)).toBe(i % 5 === 0 ? 'payment-reminder' : 'event-reminder'));
  });

  it('a dry run lists whom it would email and claims, sends and writes nothing', async () => {
    const event = await dueEvent({ title: 'Harvest Dinner' });
    await register(event.id, 'dee@example.org', { contact_name: 'Dee Plain' });
    await register(event.id, 'eve@example.org', { contact_name: 'Eve Owing', status: 'PENDING', total_minor: 3_000 });
    await register(event.id, 'fay@example.org', { contact_name: 'Fay Gone', status: 'CANCELLED', cancelled_at: NOW });

    const summary = await sendEventReminders(context(), { trigger: 'cli', dryRun: true });

    expect(summary).toMatchObject({ dryRun: true, outcome: 'ok', events: 1, sent: 2, paymentReminders: 1 });
    expect(summary.runId).toBeUndefined();
    expect([...(summary.wouldDo ?? [])].sort()).toEqual([
      'email Dee Plain dee@example.org (reminder for "Harvest Dinner")',
      'email Eve Owing eve@example.org (payment reminder for "Harvest Dinner")',
    ]);
    expect(mail.sink.messages).toHaveLength(0);
    expect(await eventRow(tdb.db, event.id)).toEqual({ reminder_claimed_at: null, reminder_sent_at: null });
    expect(await tdb.db('job_runs').count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('recipients are read in pages, so an event with more registrations than one page reaches each exactly once', async () => {
    const event = await dueEvent();
    const cipher = context().cipher;
    // One page is 500 rows: 501 needs a second page (and a claim renewal between them).
    const total = 501;
    const rows = Array.from({ length: total }, (_, i) => {
      const email = `bulk${i}@example.org`;
      return {
        event_id: event.id,
        status: 'PAID',
        contact_name: `Bulk ${i}`,
        contact_email_enc: cipher.encrypt(email),
        contact_email_hash: cipher.lookupHash('email', email),
        attendees: JSON.stringify([{ name: `Bulk ${i}`, tier: 'adult' }]),
        attendee_count: 1,
        payment_method: 'bank',
        line_items: JSON.stringify([{ label: 'Adult', amount: 12000 }]),
        total_minor: 12_000,
      };
    });
    await tdb.db.batchInsert('registrations', rows, 500);

    const dry = await sendEventReminders(context(), { trigger: 'cli', dryRun: true });
    expect(dry.sent).toBe(total);
    expect(new Set(dry.wouldDo).size).toBe(total);

    const real = await sendEventReminders(context(), { trigger: 'cli' });
    expect(real).toMatchObject({ outcome: 'ok', sent: total, failed: 0 });
    expect(new Set(recipients(mail.sink.messages)).size).toBe(total);
    expect(mail.sink.messages).toHaveLength(total);
  }, 120_000);
});
