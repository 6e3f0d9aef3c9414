import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock, type Clock } from '../../src/clock.js';
import { anniversaryPageQuery, birthdayPageQuery, STALE_CLAIM_MS } from '../../src/jobs/celebration-claims.js';
import { celebrationDay, sendCelebrations } from '../../src/jobs/send-celebrations.js';
import type { Mailer, MailMessage } from '../../src/mail/types.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertPerson } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

let tdb: TestDatabase;
/** Addresses the sink answers 550 at RCPT TO. */
const refused = new Set<string>();
/** Addresses whose message the sink receives in full and then drops the connection on (ambiguous). */
const droppedAfterData = new Set<string>();

const mail = useSinkAndMailer({
  rejectRecipient: (address) => refused.has(address),
  dropAfterData: (message) => message.envelope.to.some((address) => droppedAfterData.has(address)),
});

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db.raw('TRUNCATE people, celebration_claims, app_settings, job_runs, error_logs CASCADE');
  refused.clear();
  droppedAfterData.clear();
});

/** 22 November 01:30 in Sydney (AEDT, UTC+11) while it is still 21 November in UTC. */
const SYDNEY_22_NOV = '2026-11-21T14:30:00Z';

function contextAt(iso: string) {
  const ctx = createTestContext({ db: tdb.db, mailer: mail.mailer, clock: new FixedClock(new Date(iso)) });
  return ctx;
}

async function enable(settings: { birthdays?: boolean; anniversaries?: boolean }): Promise<void> {
  const now = new Date(SYDNEY_22_NOV);
  if (settings.birthdays !== undefined) await setSetting(tdb.db, 'celebrations.birthdays', settings.birthdays, now);
  if (settings.anniversaries !== undefined) await setSetting(tdb.db, 'celebrations.anniversaries', settings.anniversaries, now);
}

async function person(first: string, fields: Record<string, unknown> & { email?: string }): Promise<string> {
  const cipher = contextAt(SYDNEY_22_NOV).cipher;
  return (await insertPerson(tdb.db, cipher, { first_name: first, last_name: 'Member', ...fields })).id;
}

async function marry(a: string, b: string): Promise<void> {
  await tdb.db('people').where({ id: a }).update({ spouse_id: b });
  await tdb.db('people').where({ id: b }).update({ spouse_id: a });
}

async function claims() {
  return tdb.db('celebration_claims').orderBy(['kind', 'person_id']).select('person_id', 'kind', 'year', 'claimed_at', 'sent_at');
}

const recipientsOf = () => mail.sink.messages.map((m) => [...m.envelope.to].sort().join(','));

describe('send-celebrations', () => {
  it("celebrates birthdays on today's date in APP_TIMEZONE while it is still yesterday in UTC, only for people with an email", async () => {
    await enable({ birthdays: true, anniversaries: true });
    const ada = await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
    await person('Yesterday', { email: 'yesterday@example.org', birth_date: '1990-11-21' });
    await person('Noemail', { birth_date: '1985-11-22' });

    const summary = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });

    expect(summary).toMatchObject({
      job: 'send-celebrations',
      outcome: 'ok',
      dryRun: false,
      date: '2026-11-22',
      birthdays: 1,
      anniversaries: 0,
      failed: 0,
      skipped: 0,
    });
    expect(recipientsOf()).toEqual(['ada@example.org']);
    const [message] = mail.sink.messages;
    expect(message?.subject).toBe('Happy birthday, Ada!');
    expect(message?.text).toContain('Dear Ada,');
    expect(message?.html).toContain('Dear Ada,');
    // The age is never shown (the unsubscribe link's token is random and may hold any digits).
    expect(message?.text.replace(/https?:\/\/\S+/g, '')).not.toContain('36');
    expect(await claims()).toEqual([
      expect.objectContaining({ person_id: ada, kind: 'birthday', year: 2026, sent_at: new Date(SYDNEY_22_NOV) }),
    ]);
    const run = await tdb.db('job_runs').where({ id: summary.runId }).first();
    expect(run).toMatchObject({ job: 'send-celebrations', trigger: 'cli', outcome: 'ok', summary: { birthdays: 1 } });
  });

  it('is skipped and sends nothing while both kinds are off in Settings, whether unset or set to false', async () => {
    await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22', wedding_date: '2015-11-22' });

    const unset = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });
    await enable({ birthdays: false, anniversaries: false });
    const off = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'scheduler' });

    for (const summary of [unset, off]) expect(summary).toMatchObject({ outcome: 'skipped', birthdays: 0, anniversaries: 0 });
    expect(mail.sink.messages).toHaveLength(0);
    expect(await claims()).toEqual([]);
    expect(await tdb.db('job_runs').orderBy('id').pluck('outcome')).toEqual(['skipped', 'skipped']);
  });

  it('with birthdays on and anniversaries off sends only the birthday emails (and the other way round)', async () => {
    await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22', wedding_date: '2015-11-22' });
    await enable({ birthdays: true, anniversaries: false });

    const birthdaysOnly = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });
    expect(birthdaysOnly).toMatchObject({ outcome: 'ok', birthdays: 1, anniversaries: 0 });
    expect(mail.sink.messages.map((m) => m.subject)).toEqual(['Happy birthday, Ada!']);

    await enable({ birthdays: false, anniversaries: true });
    const anniversariesOnly = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });
    expect(anniversariesOnly).toMatchObject({ outcome: 'ok', birthdays: 0, anniversaries: 1 });
    expect(mail.sink.messages.map((m) => m.subject)).toEqual(['Happy birthday, Ada!', 'Happy 11th wedding anniversary, Ada!']);
  });

  it('celebrates a 29 February birthday on 28 February in a year without one, not on 1 March, and on 29 February in a leap year once', async () => {
    await enable({ birthdays: true });
    const leapling = await person('Leap', { email: 'leap@example.org', birth_date: '2000-02-29' });
    await person('Feb28', { email: 'feb28@example.org', birth_date: '1999-02-28' });
    await person('March', { email: 'march@example.org', birth_date: '1999-03-01' });
    // Sydney is on AEDT (UTC+11) in February and March.
    const at = (localDate: string) => contextAt(new Date(`${localDate}T09:00:00+11:00`).toISOString());

    expect(celebrationDay(new Date('2027-02-27T22:00:00Z'), 'Australia/Sydney')).toEqual({
      date: '2027-02-28',
      year: 2027,
      month: 2,
      days: [28, 29],
    });
    const feb28 = await sendCelebrations(at('2027-02-28'), { trigger: 'cli' });
    expect(feb28).toMatchObject({ outcome: 'ok', birthdays: 2 });
    expect(recipientsOf().sort()).toEqual(['feb28@example.org', 'leap@example.org']);

    // Even with this year's claim gone, 1 March is not the leapling's day.
    await tdb.db('celebration_claims').where({ person_id: leapling }).delete();
    mail.sink.clear();
    const march1 = await sendCelebrations(at('2027-03-01'), { trigger: 'cli' });
    expect(march1).toMatchObject({ outcome: 'ok', birthdays: 1 });
    expect(recipientsOf()).toEqual(['march@example.org']);

    mail.sink.clear();
    const leapFeb28 = await sendCelebrations(at('2028-02-28'), { trigger: 'cli' });
    expect(recipientsOf()).toEqual(['feb28@example.org']);
    expect(leapFeb28.birthdays).toBe(1);

    mail.sink.clear();
    const leapDay = await sendCelebrations(at('2028-02-29'), { trigger: 'cli' });
    const leapDayAgain = await sendCelebrations(at('2028-02-29'), { trigger: 'cli' });
    expect(leapDay).toMatchObject({ birthdays: 1, skipped: 0 });
    expect(leapDayAgain).toMatchObject({ birthdays: 0, skipped: 1 });
    expect(recipientsOf()).toEqual(['leap@example.org']);
    expect(await tdb.db('celebration_claims').where({ person_id: leapling }).pluck('year')).toEqual([2028]);
  });

  it('emails a couple one anniversary email with both addresses, claimed once under the smaller id', async () => {
    await enable({ anniversaries: true });
    const tom = await person('Tom', { email: 'tom@example.org', wedding_date: '1996-11-22' });
    const lan = await person('Lan', { email: 'lan@example.org', wedding_date: '1996-11-22' });
    await marry(tom, lan);
    // A spouse without an email is greeted but not on the email.
    const kim = await person('Kim', { email: 'kim@example.org', wedding_date: '2025-11-22' });
    const lee = await person('Lee', { wedding_date: '2025-11-22' });
    await marry(kim, lee);

    const summary = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', anniversaries: 2, birthdays: 0, failed: 0 });
    expect(recipientsOf().sort()).toEqual(['kim@example.org', 'lan@example.org,tom@example.org']);
    const couple = mail.sink.messages.find((m) => m.envelope.to.length === 2);
    const [first, second] = tom < lan ? ['Tom', 'Lan'] : ['Lan', 'Tom'];
    expect(couple?.subject).toBe(`Happy 30th wedding anniversary, ${first} and ${second}!`);
    expect(couple?.text).toContain('30 years of marriage');
    const single = mail.sink.messages.find((m) => m.envelope.to.length === 1);
    expect(single?.text).toMatch(/Dear (Kim and Lee|Lee and Kim),/);
    expect(single?.text).toContain('1 year of marriage');
    expect((await claims()).map((c) => c.person_id).sort()).toEqual([tom < lan ? tom : lan, kim < lee ? kim : lee].sort());

    const again = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });
    expect(again).toMatchObject({ outcome: 'ok', anniversaries: 0, skipped: 2 });
    expect(mail.sink.messages).toHaveLength(2);
  });

  it('a couple whose wedding date is on one spouse only is greeted together, in one email to both, whichever id is smaller', async () => {
    await enable({ anniversaries: true });
    // The import accepts a date on one side of a couple; the spouse without one shares it.
    const id = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
    const lan = await person('Lan', { id: id(1), email: 'lan@example.org' });
    const tom = await person('Tom', { id: id(2), email: 'tom@example.org', wedding_date: '2014-11-22' });
    await marry(tom, lan);
    const bob = await person('Bob', { id: id(3), email: 'bob@example.org', wedding_date: '2003-11-22' });
    const ann = await person('Ann', { id: id(4), email: 'ann@example.org' });
    await marry(ann, bob);
    // A spouse whose own, different date is on record is not part of this anniversary.
    const kim = await person('Kim', { email: 'kim@example.org', wedding_date: '2013-11-22' });
    const lee = await person('Lee', { email: 'lee@example.org', wedding_date: '2013-06-01' });
    await marry(kim, lee);

    const summary = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', anniversaries: 3, failed: 0 });
    expect(recipientsOf().sort()).toEqual(['ann@example.org,bob@example.org', 'kim@example.org', 'lan@example.org,tom@example.org']);
    const subjects = mail.sink.messages.map((m) => m.subject).sort();
    expect(subjects).toEqual([
      'Happy 12th wedding anniversary, Tom and Lan!',
      'Happy 13th wedding anniversary, Kim!',
      'Happy 23rd wedding anniversary, Bob and Ann!',
    ]);
    expect((await claims()).map((c) => c.person_id).sort()).toEqual([tom, bob, kim].sort());

    const again = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });
    expect(again).toMatchObject({ anniversaries: 0, skipped: 3 });
    expect(mail.sink.messages).toHaveLength(3);
  });

  it('a second run on the same day sends nothing and counts everything as skipped', async () => {
    await enable({ birthdays: true, anniversaries: true });
    await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
    await person('Ben', { email: 'ben@example.org', birth_date: '1970-11-22', wedding_date: '2000-11-22' });

    const first = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'scheduler' });
    const second = await sendCelebrations(contextAt('2026-11-22T06:00:00Z'), { trigger: 'cli' });

    expect(first).toMatchObject({ outcome: 'ok', birthdays: 2, anniversaries: 1, skipped: 0 });
    expect(second).toMatchObject({ outcome: 'ok', birthdays: 0, anniversaries: 0, skipped: 3 });
    expect(mail.sink.messages).toHaveLength(3);
  });

  it('two overlapping runs send each celebration exactly once', async () => {
    await enable({ birthdays: true, anniversaries: true });
    const people = await tdb.db('people')
      .insert(
        Array.from({ length: 70 }, (_, i) => {
          const email = `member${i}@example.org`;
          const cipher = contextAt(SYDNEY_22_NOV).cipher;
          return {
            first_name: `Member${i}`,
            last_name: 'Overlap',
            email_enc: cipher.encrypt(email),
            email_hash: cipher.lookupHash('email', email),
            birth_date: '1980-11-22',
            wedding_date: i < 10 ? '2010-11-22' : null,
          };
        }),
      )
      .returning<Array<{ id: string }>>('id');
    expect(people).toHaveLength(70);

    const [a, b] = await Promise.all([
      sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' }),
      sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'scheduler' }),
    ]);

    expect(a.birthdays + b.birthdays).toBe(70);
    expect(a.anniversaries + b.anniversaries).toBe(10);
    expect(a.skipped + b.skipped).toBe(80);
    expect(a.failed + b.failed).toBe(0);
    expect(mail.sink.messages).toHaveLength(80);
    const distinct = new Set(mail.sink.messages.map((m) => `${m.subject}|${m.envelope.to.join()}`));
    expect(distinct.size).toBe(80);
    expect(await tdb.db('celebration_claims').whereNull('sent_at').count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('reclaims a claim a crashed run left unconfirmed for over 15 minutes, and skips one taken a minute ago', async () => {
    await enable({ birthdays: true });
    const crashed = await person('Crashed', { email: 'crashed@example.org', birth_date: '1990-11-22' });
    const inFlight = await person('Inflight', { email: 'inflight@example.org', birth_date: '1990-11-22' });
    const now = new Date(SYDNEY_22_NOV);
    expect(STALE_CLAIM_MS).toBe(15 * 60_000);
    await tdb.db.raw(
      `INSERT INTO celebration_claims (person_id, kind, year, claimed_at, sent_at) VALUES
        (?, 'birthday', 2026, ?::timestamptz - interval '20 minutes', NULL),
        (?, 'birthday', 2026, ?::timestamptz - interval '1 minute', NULL)`,
      [crashed, now, inFlight, now],
    );

    const summary = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', birthdays: 1, skipped: 1 });
    expect(recipientsOf()).toEqual(['crashed@example.org']);
    const rows = new Map((await claims()).map((c) => [c.person_id, c]));
    expect(rows.get(crashed)).toMatchObject({ claimed_at: now, sent_at: now });
    expect(rows.get(inFlight)).toMatchObject({ claimed_at: new Date(now.getTime() - 60_000), sent_at: null });
  });

  it('a long run renews its claims before each chunk of sends, and leaves to another run the celebrations it took over', async () => {
    await enable({ birthdays: true });
    for (let i = 0; i < 20; i++) await person(`Slow${String(i).padStart(2, '0')}`, { email: `slow${i}@example.org`, birth_date: '1990-11-22' });
    // Every reading of this clock is 6 minutes after the last, as with a mail server that stalls each send.
    let tick = new Date(SYDNEY_22_NOV).getTime();
    const slowClock: Clock = { now: () => new Date((tick += 6 * 60_000)) };
    const otherRunsClaim = new Date(new Date(SYDNEY_22_NOV).getTime() + 60 * 60_000);
    let sends = 0;
    const takenOverAfterFirstSend: Mailer = {
      kind: 'smtp',
      close: async () => undefined,
      async send(message: MailMessage) {
        // Meanwhile an overlapping run found our claims stale and took over the ones not yet sent.
        if (++sends === 1) await tdb.db('celebration_claims').whereNull('sent_at').update({ claimed_at: otherRunsClaim });
        return mail.mailer.send(message);
      },
    };
    const ctx = createTestContext({ db: tdb.db, mailer: takenOverAfterFirstSend, clock: slowClock });

    const summary = await sendCelebrations(ctx, { trigger: 'cli' });

    // The first chunk (15) was ours to send; the renewal before the next found the other 5 taken over.
    expect(summary).toMatchObject({ outcome: 'ok', birthdays: 15, skipped: 5, failed: 0 });
    expect(mail.sink.messages).toHaveLength(15);
    const rows = await claims();
    expect(rows.filter((c) => c.sent_at === null).map((c) => c.claimed_at)).toEqual(Array.from({ length: 5 }, () => otherRunsClaim));
  });

  it('renewed claims carry the time of the renewal, so the last chunk of a slow run is never stale', async () => {
    await enable({ birthdays: true });
    for (let i = 0; i < 35; i++) await person(`Slow${String(i).padStart(2, '0')}`, { email: `slow${i}@example.org`, birth_date: '1990-11-22' });
    let tick = new Date(SYDNEY_22_NOV).getTime();
    const slowClock: Clock = { now: () => new Date((tick += 6 * 60_000)) };
    const ctx = createTestContext({ db: tdb.db, mailer: mail.mailer, clock: slowClock });

    const summary = await sendCelebrations(ctx, { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', birthdays: 35, skipped: 0 });
    // Three chunks (15, 15, 5), claimed once and renewed twice: three distinct claim times, 15 minutes or more apart.
    const claimTimes = [...new Set((await claims()).map((c) => (c.claimed_at as Date).getTime()))].sort();
    expect(claimTimes).toHaveLength(3);
    for (let i = 1; i < claimTimes.length; i++) expect((claimTimes[i] as number) - (claimTimes[i - 1] as number)).toBeGreaterThanOrEqual(STALE_CLAIM_MS);
  });

  it('sends that finish together are confirmed in one statement, and no connection sends again before its own send is recorded (at most 3 unrecorded)', async () => {
    await enable({ birthdays: true });
    for (let i = 0; i < 15; i++) await person(`Together${String(i).padStart(2, '0')}`, { email: `together${i}@example.org`, birth_date: '1990-11-22' });
    const accepted = new Set<string>();
    let mostUnrecorded = 0;
    let released: Array<() => void> = [];
    // The server answers three messages at once, as a pool of three connections often sees.
    const answersInThrees: Mailer = {
      kind: 'smtp',
      close: async () => undefined,
      async send(message: MailMessage) {
        const confirmed = new Set(await tdb.db('celebration_claims').whereNotNull('sent_at').pluck('person_id'));
        mostUnrecorded = Math.max(mostUnrecorded, [...accepted].filter((id) => !confirmed.has(id)).length);
        const result = await mail.mailer.send(message);
        accepted.add(String(message.idempotencyKey?.split(':').at(-1)));
        await new Promise<void>((resolve) => {
          released.push(resolve);
          if (released.length < 3) return;
          for (const release of released) release();
          released = [];
        });
        return result;
      },
    };
    let confirmations = 0;
    const countConfirmations = (query: { sql: string }) => {
      if (/^update "celebration_claims" set "sent_at"/.test(query.sql)) confirmations++;
    };
    tdb.db.on('query', countConfirmations);
    try {
      const summary = await sendCelebrations(createTestContext({ db: tdb.db, mailer: answersInThrees, clock: new FixedClock(new Date(SYDNEY_22_NOV)) }), {
        trigger: 'cli',
      });
      expect(summary).toMatchObject({ outcome: 'ok', birthdays: 15, failed: 0 });
    } finally {
      tdb.db.off('query', countConfirmations);
    }
    expect(mail.sink.messages).toHaveLength(15);
    expect(await tdb.db('celebration_claims').whereNull('sent_at')).toEqual([]);
    // Each three answered together: the first is confirmed at once, the other two together in the next statement.
    expect(confirmations).toBe(10);
    // When a connection starts its next send, only the other two connections' sends may still be unrecorded.
    expect(mostUnrecorded).toBeLessThanOrEqual(2);
  });

  it('a refused recipient makes the run partial and removes only that claim, so a later run sends only that one', async () => {
    await enable({ birthdays: true });
    const ada = await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
    const bounced = await person('Bounced', { email: 'bounced@example.org', birth_date: '1991-11-22' });
    const cy = await person('Cy', { email: 'cy@example.org', birth_date: '1992-11-22' });
    refused.add('bounced@example.org');

    const first = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });

    expect(first).toMatchObject({ outcome: 'partial', birthdays: 2, failed: 1, skipped: 0 });
    expect(recipientsOf().sort()).toEqual(['ada@example.org', 'cy@example.org']);
    expect((await claims()).map((c) => c.person_id).sort()).toEqual([ada, cy].sort());
    const errors = await tdb.db('error_logs').select('source', 'message', 'context');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ source: 'job:send-celebrations', context: { personIds: [bounced], failedSends: 1 } });
    expect(errors[0].message).not.toContain('bounced@example.org');
    expect(await tdb.db('job_runs').where({ id: first.runId }).first()).toMatchObject({ outcome: 'partial' });

    refused.clear();
    mail.sink.clear();
    const retry = await sendCelebrations(contextAt('2026-11-21T20:00:00Z'), { trigger: 'scheduler' });
    expect(retry).toMatchObject({ outcome: 'ok', birthdays: 1, failed: 0, skipped: 2 });
    expect(recipientsOf()).toEqual(['bounced@example.org']);
  });

  it('is failed when every send fails, and every claim is released', async () => {
    await enable({ birthdays: true });
    await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
    await person('Ben', { email: 'ben@example.org', birth_date: '1991-11-22' });
    refused.add('ada@example.org');
    refused.add('ben@example.org');

    const summary = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'failed', birthdays: 0, failed: 2 });
    expect(await claims()).toEqual([]);
    // One error-log row per distinct failure, not one per person.
    expect(await tdb.db('error_logs').count({ n: '*' }).first()).toEqual({ n: 1 });
  });

  it('counts an ambiguous send (connection lost after the message) as sent and never sends it again', async () => {
    await enable({ birthdays: true });
    const ada = await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
    droppedAfterData.add('ada@example.org');

    const summary = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', birthdays: 1, failed: 0 });
    expect(mail.sink.unanswered).toHaveLength(1);
    expect(await claims()).toEqual([expect.objectContaining({ person_id: ada, sent_at: new Date(SYDNEY_22_NOV) })]);

    droppedAfterData.clear();
    const again = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli' });
    expect(again).toMatchObject({ birthdays: 0, skipped: 1 });
    expect(mail.sink.messages).toHaveLength(0);
  });

  it('a dry run lists whom it would email and why, and claims, sends and records nothing', async () => {
    await enable({ birthdays: true, anniversaries: true });
    await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
    const done = await person('Done', { email: 'done@example.org', birth_date: '1990-11-22' });
    await tdb.db('celebration_claims').insert({
      person_id: done,
      kind: 'birthday',
      year: 2026,
      claimed_at: new Date('2026-11-21T13:00:00Z'),
      sent_at: new Date('2026-11-21T13:00:01Z'),
    });
    const tom = await person('Tom', { email: 'tom@example.org', wedding_date: '1996-11-22' });
    const lan = await person('Lan', { email: 'lan@example.org', wedding_date: '1996-11-22' });
    await marry(tom, lan);

    const summary = await sendCelebrations(contextAt(SYDNEY_22_NOV), { trigger: 'cli', dryRun: true });

    expect(summary).toMatchObject({ outcome: 'ok', dryRun: true, birthdays: 1, anniversaries: 1, skipped: 1 });
    expect(summary.runId).toBeUndefined();
    const [first, second] = tom < lan ? ['Tom', 'Lan'] : ['Lan', 'Tom'];
    expect(summary.wouldDo).toEqual([
      'email Ada Member ada@example.org (birthday)',
      `email ${first} Member and ${second} Member ${first.toLowerCase()}@example.org, ${second.toLowerCase()}@example.org (30th wedding anniversary)`,
    ]);
    expect(mail.sink.messages).toHaveLength(0);
    expect(await claims()).toHaveLength(1);
    expect(await tdb.db('job_runs').count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('finds birthdays and anniversaries through their month/day indexes, not a scan of people', async () => {
    await tdb.db.raw(`
      INSERT INTO people (first_name, last_name, email_enc, birth_date, wedding_date)
      SELECT 'Person' || n, 'Bulk', 'v1:placeholder',
             date '1950-01-01' + (n * 7919 % 20000),
             CASE WHEN n % 3 = 0 THEN date '1980-01-01' + (n * 104729 % 15000) END
      FROM generate_series(1, 4000) AS n`);
    await tdb.db.raw('ANALYZE people');
    const day = celebrationDay(new Date(SYDNEY_22_NOV), 'Australia/Sydney');

    for (const [query, index] of [
      [birthdayPageQuery(day, undefined, 50), 'people_birthday_idx'],
      [anniversaryPageQuery(day, undefined, 50), 'people_anniversary_idx'],
    ] as const) {
      const plan = await tdb.db.raw<{ rows: Array<{ 'QUERY PLAN': string }> }>(`EXPLAIN ${query.sql}`, query.bindings);
      const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      expect(text).toMatch(new RegExp(`(Index|Bitmap Index) Scan (using|on) ${index}`));
      expect(text).not.toMatch(/Seq Scan on people/);
    }
  });
});
