import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { LeaseHeldError } from '../../src/errors.js';
import { JobFailedError } from '../../src/jobs/run-recorded.js';
import { sendClearanceDigest } from '../../src/jobs/send-clearance-digest.js';
import { silentLogger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/create.js';
import type { Mailer } from '../../src/mail/types.js';
import { getSetting, setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig } from '../support/env.js';
import { insertPerson, insertUser } from '../support/factories.js';
import { startMailApiServer } from '../support/mail-api-server.js';
import type { SinkMessage } from '../support/smtp-sink.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

// 01:00 on 1 December in Sydney (AEDT, UTC+11) while it is still 30 November in UTC.
const NOW = new Date('2026-11-30T14:00:00Z');
const MONTH = '2026-12';
const CLEARANCE_NUMBER = 'WWC0123456E';

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
  await tdb.db.raw('TRUNCATE people, ministry_roles, clearances, users, app_settings, leases, job_runs, error_logs CASCADE');
});

function context(clock = new FixedClock(NOW)) {
  return createTestContext({ db: tdb.db, mailer: mail.mailer, clock, env: { ...mail.sink.configEnv(), APP_TIMEZONE: 'Australia/Sydney' } });
}

async function volunteer(
  first: string,
  last: string,
  roles: string[],
  clearances: Array<{ kind: string; expiresOn: string | null; number?: string }> = [],
): Promise<string> {
  const ctx = context();
  const person = await insertPerson(tdb.db, ctx.cipher, { first_name: first, last_name: last });
  if (roles.length > 0) await tdb.db('ministry_roles').insert(roles.map((role) => ({ person_id: person.id, role })));
  for (const clearance of clearances) {
    await tdb.db('clearances').insert({
      person_id: person.id,
      kind: clearance.kind,
      expires_on: clearance.expiresOn,
      number_enc: ctx.cipher.encrypt(clearance.number ?? CLEARANCE_NUMBER),
    });
  }
  return person.id;
}

/** One person whose clearance lapsed, so there is something to report. */
async function somethingToReport(): Promise<void> {
  await volunteer('Erin', 'Expired', ['Kids Church'], [{ kind: 'WWCC', expiresOn: '2026-10-01' }]);
}

async function staff(): Promise<void> {
  const cipher = context().cipher;
  await insertUser(tdb.db, cipher, { email: 'admin@example.org', name: 'Ada Admin', role: 'ADMIN' });
  await insertUser(tdb.db, cipher, { email: 'pastor@example.org', name: 'Paul Pastor', role: 'PASTOR' });
  await insertUser(tdb.db, cipher, { email: 'staff@example.org', name: 'Sam Staff', role: 'STAFF' });
}

const recipients = (messages: SinkMessage[]) => messages.flatMap((m) => m.envelope.to).sort();
/**
 * The recorded list, with each entry shown as the address it stands for: the
 * list holds email lookup hashes (app_settings is not encrypted), never addresses.
 */
const delivered = async () => {
  const recorded = (await getSetting(tdb.db, 'clearanceDigestDelivered')) ?? null;
  if (!recorded) return null;
  if (recorded.addresses.some((entry) => entry.includes('@'))) throw new Error('the delivered list holds a plaintext address');
  const known = ['admin@example.org', 'pastor@example.org', 'staff@example.org', 'former@example.org'];
  const byHash = new Map(known.map((address) => [context().cipher.lookupHash('email', address), address]));
  return { ...recorded, addresses: recorded.addresses.map((entry) => byHash.get(entry) ?? entry) };
};
const lastMonth = async () => (await getSetting(tdb.db, 'clearanceDigestLastMonth')) ?? null;

describe('send-clearance-digest', () => {
  it('rule 5: the month is the APP_TIMEZONE month (2026-11-30T14:00Z is December in Sydney) and is recorded when sent', async () => {
    await staff();
    // Expired as of 1 December in Sydney, although it is still 30 November in UTC.
    await volunteer('Nina', 'November', ['Youth'], [{ kind: 'WWCC', expiresOn: '2026-11-30' }]);

    const summary = await sendClearanceDigest(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ job: 'send-clearance-digest', outcome: 'ok', status: 'sent', month: MONTH, sent: 2, people: 1 });
    expect(await lastMonth()).toBe(MONTH);
    expect(mail.sink.messages[0]?.subject).toBe('Clearance digest for December 2026: 1 person needs attention');
    expect(mail.sink.messages[0]?.text).toMatch(/Expired \(1\)\n- Nina November \(Youth\): WWCC, expiry 30 November 2026/);
  });

  it('content: people with a ministry role grouped as missing, expired and expiring within 60 days, never the clearance number', async () => {
    await staff();
    await volunteer('Molly', 'Missing', ['Kids Church', 'Music']);
    await volunteer('Ed', 'Expired', ['Youth'], [{ kind: 'WWCC', expiresOn: '2026-11-15', number: 'WWC9999999A' }]);
    await volunteer('Tess', 'Today', ['Welcome'], [{ kind: 'Police check', expiresOn: '2026-12-01' }]);
    await volunteer('Ella', 'Edge', ['Kids Church'], [{ kind: 'WWCC', expiresOn: '2027-01-30' }]);
    await volunteer('Olly', 'Outside', ['Kids Church'], [{ kind: 'WWCC', expiresOn: '2027-01-31' }]);
    await volunteer('Ivy', 'InOrder', ['Music'], [{ kind: 'WWCC', expiresOn: '2029-05-01' }]);
    // Two clearances: only the lapsed one is listed.
    await volunteer('Max', 'Mixed', ['Youth'], [
      { kind: 'WWCC', expiresOn: '2029-05-01' },
      { kind: 'First aid', expiresOn: '2026-09-01' },
    ]);
    // No ministry role: not part of the digest, whatever the clearance.
    await volunteer('Nora', 'NoRole', []);

    const summary = await sendClearanceDigest(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', status: 'sent', people: 5 });
    const message = mail.sink.messages.find((m) => m.envelope.to.includes('admin@example.org'));
    if (!message) throw new Error('the admin got no digest');
    for (const body of [message.html, message.text]) {
      expect(body).not.toContain(CLEARANCE_NUMBER);
      expect(body).not.toContain('WWC9999999A');
      for (const listed of ['Molly Missing', 'Ed Expired', 'Tess Today', 'Ella Edge', 'Max Mixed']) expect(body).toContain(listed);
      for (const absent of ['Olly Outside', 'Ivy InOrder', 'Nora NoRole']) expect(body).not.toContain(absent);
    }
    expect(message.subject).toBe('Clearance digest for December 2026: 5 people need attention');
    const text = message.text;
    const section = (title: string) => text.slice(text.indexOf(`${title} (`)).split('\n\n')[0] ?? '';
    expect(section('Missing')).toBe('Missing (1)\n- Molly Missing (Kids Church, Music): no clearance on record');
    expect(section('Expired')).toBe(
      'Expired (2)\n- Max Mixed (Youth): First aid, expiry 1 September 2026\n- Ed Expired (Youth): WWCC, expiry 15 November 2026',
    );
    expect(section('Expiring soon')).toBe(
      'Expiring soon (2)\n- Tess Today (Welcome): Police check, expiry 1 December 2026\n- Ella Edge (Kids Church): WWCC, expiry 30 January 2027',
    );
    expect(message.html).toContain('Expiring soon (2)');
    expect(message.html).toContain('Molly Missing');
  });

  it('recipients are ADMIN and PASTOR users only; a STAFF user gets nothing', async () => {
    await staff();
    await somethingToReport();

    await sendClearanceDigest(context(), { trigger: 'cli' });

    expect(recipients(mail.sink.messages)).toEqual(['admin@example.org', 'pastor@example.org']);
    expect(mail.sink.messages.find((m) => m.envelope.to.includes('pastor@example.org'))?.text).toContain('Hi Paul Pastor,');
    expect(await delivered()).toEqual({ month: MONTH, addresses: expect.arrayContaining(['admin@example.org', 'pastor@example.org']) });
    expect((await delivered())?.addresses).toHaveLength(2);
  });

  it('rule 6: once the month went out, a run without force answers already-sent with the month and sends nothing', async () => {
    await staff();
    await somethingToReport();
    await sendClearanceDigest(context(), { trigger: 'cli' });
    mail.sink.clear();

    const again = await sendClearanceDigest(context(), { trigger: 'http' });

    expect(again).toMatchObject({ job: 'send-clearance-digest', outcome: 'ok', status: 'already-sent', month: MONTH, sent: 0 });
    expect(mail.sink.messages).toHaveLength(0);
    const runs = await tdb.db('job_runs').orderBy('id').select('outcome', 'summary');
    expect(runs[1]).toMatchObject({ outcome: 'ok', summary: { status: 'already-sent', month: MONTH } });
  });

  it('rule 8: force emails everyone again and replaces the recorded list', async () => {
    await staff();
    await somethingToReport();
    await setSetting(tdb.db, 'clearanceDigestLastMonth', MONTH, NOW);
    await setSetting(tdb.db, 'clearanceDigestDelivered', { month: MONTH, addresses: ['admin@example.org', 'former@example.org'] }, NOW);

    const summary = await sendClearanceDigest(context(), { trigger: 'cli', force: true });

    expect(summary).toMatchObject({ outcome: 'ok', status: 'sent', sent: 2 });
    expect(recipients(mail.sink.messages)).toEqual(['admin@example.org', 'pastor@example.org']);
    expect([...((await delivered())?.addresses ?? [])].sort()).toEqual(['admin@example.org', 'pastor@example.org']);
    expect(await lastMonth()).toBe(MONTH);
  });

  it("rule 8: a plain run that finishes a forced round sends with that round's idempotency key, so the mail API does not answer it with the first round", async () => {
    const api = await startMailApiServer();
    const apiMailer = await createMailer(testConfig(api.configEnv()), silentLogger(), { timeoutMs: 2_000 });
    // Times on 1 December in Sydney (AEDT, UTC+11).
    const at = (iso: string) =>
      createTestContext({
        db: tdb.db,
        mailer: apiMailer,
        clock: new FixedClock(new Date(iso)),
        env: { ...api.configEnv(), APP_TIMEZONE: 'Australia/Sydney' },
      });
    const to = (address: string) => (request: { body: Record<string, unknown> }) => (request.body.to as string[]).includes(address);
    try {
      await staff();
      await insertUser(tdb.db, context().cipher, { email: 'office@example.org', name: 'Olive Office', role: 'ADMIN' });
      await somethingToReport();

      // 07:00: the month's plain run.
      expect(await sendClearanceDigest(at('2026-11-30T20:00:00Z'), { trigger: 'scheduler' })).toMatchObject({ status: 'sent', sent: 3 });
      // The office corrects the data and forces the digest at 09:00; the send to one admin fails.
      await volunteer('Carl', 'Corrected', ['Youth'], [{ kind: 'WWCC', expiresOn: '2026-11-20' }]);
      api.failWhere(to('office@example.org'), 422);
      const forced = await sendClearanceDigest(at('2026-11-30T22:00:00Z'), { trigger: 'cli', force: true });
      expect(forced).toMatchObject({ outcome: 'partial', status: 'partial', sent: 2, failed: 1 });
      expect(await lastMonth()).toBeNull();
      // 10:00: a plain run finishes the forced round.
      api.failWhere(undefined);
      const completing = await sendClearanceDigest(at('2026-11-30T23:00:00Z'), { trigger: 'scheduler' });

      expect(completing).toMatchObject({ outcome: 'ok', status: 'sent', sent: 1, failed: 0 });
      expect(await lastMonth()).toBe(MONTH);
      const keys = (address: string) => api.requests.filter(to(address)).map((request) => request.idempotencyKey);
      const [original, forcedKey, completingKey] = keys('office@example.org');
      expect(keys('office@example.org')).toHaveLength(3);
      expect(forcedKey).not.toBe(original);
      expect(completingKey).toBe(forcedKey);
      // Every send of the forced round names the same round in its key (what follows the month and the user id).
      const round = (key: string | undefined) => key?.split(':').slice(3).join(':');
      const [adaOriginal, adaForced] = keys('admin@example.org');
      expect(round(adaOriginal)).toBe('');
      expect(round(completingKey)).not.toBe('');
      expect(round(adaForced)).toBe(round(completingKey));
      // The office admin got the first digest and then the corrected one; nobody got the forced round twice.
      const officeSent = api.sent.filter(to('office@example.org'));
      expect(officeSent).toHaveLength(2);
      expect(officeSent[1]?.body.text).toContain('Carl Corrected');
      expect(api.sent.filter(to('admin@example.org'))).toHaveLength(2);
      expect(api.sent.filter(to('pastor@example.org'))).toHaveLength(2);
    } finally {
      await apiMailer.close();
      await api.close();
    }
  });

  it('rule 7: a failed send leaves the month open; the retry emails only the unrecorded address and then marks the month done', async () => {
    await staff();
    await somethingToReport();
    rejectRecipient = (address) => address === 'pastor@example.org';

    const first = await sendClearanceDigest(context(), { trigger: 'cli' });

    expect(first).toMatchObject({ outcome: 'partial', status: 'partial', sent: 1, failed: 1 });
    expect(await lastMonth()).toBeNull();
    expect(await delivered()).toEqual({ month: MONTH, addresses: ['admin@example.org'] });
    expect(recipients(mail.sink.messages)).toEqual(['admin@example.org']);
    const errors = await tdb.db('error_logs').select('source', 'message', 'context');
    expect(errors).toEqual([expect.objectContaining({ source: 'job:send-clearance-digest' })]);
    expect(JSON.stringify(errors)).not.toContain('pastor@example.org');

    rejectRecipient = () => false;
    mail.sink.clear();
    const retry = await sendClearanceDigest(context(), { trigger: 'scheduler' });

    expect(retry).toMatchObject({ outcome: 'ok', status: 'sent', sent: 1, failed: 0 });
    expect(recipients(mail.sink.messages)).toEqual(['pastor@example.org']);
    expect(await lastMonth()).toBe(MONTH);
  });

  it('rule 7: when every send fails the run is failed and the month stays open', async () => {
    await staff();
    await somethingToReport();
    rejectRecipient = () => true;

    const summary = await sendClearanceDigest(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'failed', status: 'partial', sent: 0, failed: 2 });
    expect(await lastMonth()).toBeNull();
  });

  it('rule 7: an ambiguous mail-server error (connection dropped after DATA) counts as sent', async () => {
    await staff();
    await somethingToReport();
    dropAfterDataTo = (address) => address === 'pastor@example.org';

    const summary = await sendClearanceDigest(context(), { trigger: 'cli' });

    expect(mail.sink.unanswered.map((m) => m.envelope.to[0])).toEqual(['pastor@example.org']);
    expect(summary).toMatchObject({ outcome: 'ok', status: 'sent', sent: 2, failed: 0 });
    expect([...((await delivered())?.addresses ?? [])].sort()).toEqual(['admin@example.org', 'pastor@example.org']);
    expect(await lastMonth()).toBe(MONTH);
  });

  it('rule 7: a list from an earlier month no longer counts; everyone is emailed this month', async () => {
    await staff();
    await somethingToReport();
    await setSetting(tdb.db, 'clearanceDigestDelivered', { month: '2026-11', addresses: ['admin@example.org', 'pastor@example.org'] }, NOW);

    await sendClearanceDigest(context(), { trigger: 'cli' });

    expect(recipients(mail.sink.messages)).toEqual(['admin@example.org', 'pastor@example.org']);
    expect((await delivered())?.month).toBe(MONTH);
  });

  it('rule 7: when the list cannot be saved, failed sends are not retried and the month is marked done anyway; if that fails too, the run fails', async () => {
    await staff();
    await somethingToReport();
    rejectRecipient = (address) => address === 'pastor@example.org';
    await refuseSettings(['clearanceDigestDelivered']);
    try {
      const summary = await sendClearanceDigest(context(), { trigger: 'cli' });
      expect(summary).toMatchObject({ outcome: 'partial', status: 'sent', sent: 1, failed: 1 });
      expect(await lastMonth()).toBe(MONTH);
      expect(await delivered()).toBeNull();

      await tdb.db('app_settings').delete();
      mail.sink.clear();
      await refuseSettings(['clearanceDigestDelivered', 'clearanceDigestLastMonth']);
      await expect(sendClearanceDigest(context(), { trigger: 'cli' })).rejects.toBeInstanceOf(JobFailedError);
      expect(recipients(mail.sink.messages)).toEqual(['admin@example.org']);
      expect(await tdb.db('job_runs').orderBy('id', 'desc').first('outcome')).toEqual({ outcome: 'failed' });
      // The lease is released, so a later run may send again (rule 7's last sentence).
      expect(await tdb.db('leases').where({ name: 'clearance-digest' }).first()).toBeUndefined();
    } finally {
      await tdb.db.raw('DROP TRIGGER IF EXISTS refuse_settings ON app_settings');
    }
  });

  it('with no ADMIN or PASTOR user the run fails and says so, and the month stays open for the user added next', async () => {
    const cipher = context().cipher;
    await insertUser(tdb.db, cipher, { email: 'staff@example.org', name: 'Sam Staff', role: 'STAFF' });
    await somethingToReport();

    const plan = await sendClearanceDigest(context(), { trigger: 'cli', dryRun: true });
    expect(plan).toMatchObject({ status: 'no-recipients', people: 1 });
    expect(plan.wouldDo?.join('\n')).toContain('no ADMIN or PASTOR user');

    const summary = await sendClearanceDigest(context(), { trigger: 'cli' });
    expect(summary).toMatchObject({ outcome: 'failed', status: 'no-recipients', month: MONTH, sent: 0, people: 1 });
    expect(mail.sink.messages).toHaveLength(0);
    expect(await lastMonth()).toBeNull();

    await insertUser(tdb.db, cipher, { email: 'pastor@example.org', name: 'Paul Pastor', role: 'PASTOR' });
    expect(await sendClearanceDigest(context(), { trigger: 'scheduler' })).toMatchObject({ outcome: 'ok', status: 'sent', sent: 1 });
    expect(recipients(mail.sink.messages)).toEqual(['pastor@example.org']);
    expect(await lastMonth()).toBe(MONTH);
  });

  it('rule 9: nothing is sent in a month in which every clearance is in order, and the month is marked done', async () => {
    await staff();
    await volunteer('Ivy', 'InOrder', ['Music'], [{ kind: 'WWCC', expiresOn: '2029-05-01' }]);
    await volunteer('Nora', 'NoRole', []);

    const summary = await sendClearanceDigest(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', status: 'nothing-to-report', month: MONTH, sent: 0, people: 0 });
    expect(mail.sink.messages).toHaveLength(0);
    expect(await lastMonth()).toBe(MONTH);
    expect(await sendClearanceDigest(context(), { trigger: 'cli', force: true })).toMatchObject({ status: 'nothing-to-report' });
    expect(mail.sink.messages).toHaveLength(0);
  });

  it('rule 5: while another run holds the lease the run fails with LeaseHeldError and sends nothing', async () => {
    await staff();
    await somethingToReport();
    await tdb.db('leases').insert({
      name: 'clearance-digest',
      holder: 'other-process',
      acquired_at: new Date(NOW.getTime() - 5 * 60_000),
      expires_at: new Date(NOW.getTime() + 25 * 60_000),
    });

    await expect(sendClearanceDigest(context(), { trigger: 'cli' })).rejects.toBeInstanceOf(LeaseHeldError);

    expect(mail.sink.messages).toHaveLength(0);
    expect(await lastMonth()).toBeNull();
    expect(await tdb.db('job_runs').first('outcome')).toEqual({ outcome: 'skipped' });
  });

  it('rule 5: a lease left by a crashed run more than 30 minutes ago is taken over', async () => {
    await staff();
    await somethingToReport();
    await tdb.db('leases').insert({
      name: 'clearance-digest',
      holder: 'crashed-process',
      acquired_at: new Date(NOW.getTime() - 31 * 60_000),
      expires_at: new Date(NOW.getTime() - 60_000),
    });

    const summary = await sendClearanceDigest(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', status: 'sent', sent: 2 });
    expect(await tdb.db('leases').where({ name: 'clearance-digest' }).first()).toBeUndefined();
  });

  it('rule 5: the lease is renewed before every send, so sends that outlast its 30 minutes keep it and a run starting then sends nothing', async () => {
    await staff();
    for (const n of [1, 2]) await insertUser(tdb.db, context().cipher, { email: `pastor${n}@example.org`, name: `Pastor ${n}`, role: 'PASTOR' });
    await somethingToReport();
    let calls = 0;
    let backDate: Promise<unknown> | undefined;
    let overlapping: unknown;
    // The first send takes longer than the lease lasts: the lease is back-dated to 31 minutes old while it is in
    // flight, and the sends that started beside it wait for that. The fourth send's turn comes after, and a new run
    // starts as it is handed over.
    const slowMailer: Mailer = {
      kind: 'smtp',
      async send(message) {
        calls++;
        if (calls === 1) {
          backDate = tdb.db('leases').where({ name: 'clearance-digest' }).update({ expires_at: new Date(NOW.getTime() - 60_000) }).then(() => undefined);
        }
        await backDate;
        if (calls === 4) {
          overlapping = await sendClearanceDigest(context(), { trigger: 'http' }).then(
            (summary) => summary,
            (error: unknown) => error,
          );
        }
        return mail.mailer.send(message);
      },
      close: async () => undefined,
    };
    const ctx = createTestContext({ db: tdb.db, mailer: slowMailer, clock: new FixedClock(NOW), env: { ...mail.sink.configEnv(), APP_TIMEZONE: 'Australia/Sydney' } });

    const summary = await sendClearanceDigest(ctx, { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', status: 'sent', sent: 4, failed: 0 });
    expect(overlapping).toBeInstanceOf(LeaseHeldError);
    expect(recipients(mail.sink.messages)).toEqual(['admin@example.org', 'pastor1@example.org', 'pastor2@example.org', 'pastor@example.org']);
    expect(await lastMonth()).toBe(MONTH);
  });

  it('rule 5: a run that lost its lease mid-run (expired and taken by another run) sends no more and leaves the month open', async () => {
    await staff();
    for (const n of [1, 2]) await insertUser(tdb.db, context().cipher, { email: `pastor${n}@example.org`, name: `Pastor ${n}`, role: 'PASTOR' });
    await somethingToReport();
    let takeover: Promise<unknown> | undefined;
    // While the first three sends are in flight, another run takes over the lease this one let expire.
    const takenOver: Mailer = {
      kind: 'smtp',
      async send(message) {
        takeover ??= tdb.db('leases')
          .where({ name: 'clearance-digest' })
          .update({ holder: 'other-process:1', expires_at: new Date(NOW.getTime() + 30 * 60_000) })
          .then(() => undefined);
        await takeover;
        return mail.mailer.send(message);
      },
      close: async () => undefined,
    };
    const ctx = createTestContext({ db: tdb.db, mailer: takenOver, clock: new FixedClock(NOW), env: { ...mail.sink.configEnv(), APP_TIMEZONE: 'Australia/Sydney' } });

    const digestErrors = async () => (await tdb.db('error_logs').where({ source: 'job:send-clearance-digest' })).length;
    const errorsBefore = await digestErrors();
    const summary = await sendClearanceDigest(ctx, { trigger: 'cli' });

    // The sends that renewed before the takeover committed go out (one to three, as the three connections
    // race the update); none renews after it, so the fourth recipient is never sent to by this run.
    expect(summary).toMatchObject({ outcome: 'partial', status: 'partial' });
    expect(summary.sent).toBeGreaterThanOrEqual(1);
    expect(summary.sent).toBeLessThanOrEqual(3);
    // The rest are the other run's to send: handed over, not failed, and no failure in the error log.
    expect(summary.failed).toBe(0);
    expect((summary.sent ?? 0) + (summary.handedOver ?? 0)).toBe(4);
    expect(await digestErrors()).toBe(errorsBefore);
    expect(mail.sink.messages).toHaveLength(summary.sent as number);
    expect(await lastMonth()).toBeNull();
    expect(await tdb.db('leases').where({ name: 'clearance-digest' }).first()).toMatchObject({ holder: 'other-process:1' });
  });

  it('rule 5: a run whose lease is taken over before its first send hands every recipient over: partial, not failed, and nothing in the error log', async () => {
    await staff();
    await somethingToReport();
    const base = createTestContext({ db: tdb.db, mailer: mail.mailer, clock: new FixedClock(NOW), env: { ...mail.sink.configEnv(), APP_TIMEZONE: 'Australia/Sydney' } });
    // Another run takes the lease over while this one is getting its mail transport ready.
    const ctx = {
      ...base,
      mailer: async () => {
        await tdb.db('leases').where({ name: 'clearance-digest' }).update({ holder: 'other-process:1', expires_at: new Date(NOW.getTime() + 30 * 60_000) });
        return base.mailer();
      },
    };
    const errorsBefore = (await tdb.db('error_logs').where({ source: 'job:send-clearance-digest' })).length;

    const summary = await sendClearanceDigest(ctx, { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'partial', status: 'partial', sent: 0, failed: 0, handedOver: 2 });
    expect(mail.sink.messages).toHaveLength(0);
    expect((await tdb.db('error_logs').where({ source: 'job:send-clearance-digest' })).length).toBe(errorsBefore);
    expect(await lastMonth()).toBeNull();
  });

  it('rule 5: two overlapping runs email each recipient once', async () => {
    await staff();
    await somethingToReport();

    const settled = await Promise.allSettled([
      sendClearanceDigest(context(), { trigger: 'cli' }),
      sendClearanceDigest(context(), { trigger: 'http' }),
    ]);

    expect(recipients(mail.sink.messages)).toEqual(['admin@example.org', 'pastor@example.org']);
    const sent = settled.filter((s) => s.status === 'fulfilled' && s.value.status === 'sent');
    expect(sent).toHaveLength(1);
    for (const other of settled.filter((s) => !sent.includes(s))) {
      if (other.status === 'rejected') expect(other.reason).toBeInstanceOf(LeaseHeldError);
      else expect(other.value.status).toBe('already-sent');
    }
  });

  it('dry run: reports whom it would email and sends, claims and writes nothing', async () => {
    await staff();
    await somethingToReport();
    await setSetting(tdb.db, 'clearanceDigestDelivered', { month: MONTH, addresses: ['admin@example.org'] }, NOW);

    const summary = await sendClearanceDigest(context(), { trigger: 'cli', dryRun: true });

    expect(summary).toMatchObject({ dryRun: true, month: MONTH, sent: 1, people: 1 });
    expect(summary.wouldDo).toEqual([expect.stringMatching(/^email Paul Pastor pastor@example\.org \(clearance digest for 2026-12: 1 person; 1 expired\)$/)]);
    expect(mail.sink.messages).toHaveLength(0);
    expect(await lastMonth()).toBeNull();
    expect(await tdb.db('job_runs').count({ n: '*' }).first()).toEqual({ n: 0 });
    expect(await tdb.db('leases').count({ n: '*' }).first()).toEqual({ n: 0 });
  });
});

/** Makes writes of these settings keys fail, as a database that refuses the write would. */
async function refuseSettings(keys: string[]): Promise<void> {
  await tdb.db.raw(`
    CREATE OR REPLACE FUNCTION refuse_settings() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.key = ANY(TG_ARGV) THEN RAISE EXCEPTION 'settings write refused for %', NEW.key; END IF;
      RETURN NEW;
    END $$`);
  await tdb.db.raw('DROP TRIGGER IF EXISTS refuse_settings ON app_settings');
  await tdb.db.raw(
    `CREATE TRIGGER refuse_settings BEFORE INSERT OR UPDATE ON app_settings FOR EACH ROW EXECUTE FUNCTION refuse_settings(${keys
      .map((key) => `'${key}'`)
      .join(', ')})`,
  );
}
