import { describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { sendCelebrations } from '../../src/jobs/send-celebrations.js';
import { createTestContext } from '../support/context.js';
import { useCelebrationsDatabase } from '../support/celebrations-db.js';
import { insertPerson } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

/** 22 November in Sydney. */
const SYDNEY_22_NOV = '2026-11-21T22:00:00Z';
const tdb = useCelebrationsDatabase(new Date(SYDNEY_22_NOV));
const mail = useSinkAndMailer();
const context = () => createTestContext({ db: tdb.db, mailer: mail.mailer, clock: new FixedClock(new Date(SYDNEY_22_NOV)) });

async function person(first: string, fields: Record<string, unknown> & { email?: string }): Promise<string> {
  return (await insertPerson(tdb.db, context().cipher, { first_name: first, last_name: 'Member', ...fields })).id;
}

async function marry(a: string, b: string): Promise<void> {
  await tdb.db('people').where({ id: a }).update({ spouse_id: b });
  await tdb.db('people').where({ id: b }).update({ spouse_id: a });
}

async function turnOff(id: string, by: 'office' | 'unsubscribe'): Promise<void> {
  await tdb.db('people').where({ id }).update({ celebrations_off_at: new Date('2026-10-01T00:00:00Z'), celebrations_off_by: by });
}

const sent = () => mail.sink.messages.map((m) => `${m.subject} → ${[...m.envelope.to].sort().join(',')}`).sort();

describe('send-celebrations and people whose celebration emails are off', () => {
  it('skips the birthday of a person whose emails are off, and still greets everyone else', async () => {
    const ada = await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
    await person('Ben', { email: 'ben@example.org', birth_date: '1980-11-22' });
    await turnOff(ada, 'unsubscribe');

    const summary = await sendCelebrations(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', birthdays: 1, skipped: 0 });
    expect(sent()).toEqual(['Happy birthday, Ben! → ben@example.org']);
    expect(await tdb.db('celebration_claims').where({ person_id: ada })).toEqual([]);
    const dryRun = await sendCelebrations(context(), { trigger: 'cli', dryRun: true });
    expect(dryRun.wouldDo?.join('\n') ?? '').not.toContain('Ada');
  });

  it('the office turns off a late husband: no birthday for him, no anniversary for the couple, and the widow’s own birthday goes on', async () => {
    const widow = await person('Mary', { email: 'mary@example.org', birth_date: '1950-11-22', wedding_date: '1975-11-22' });
    const late = await person('John', { email: 'john@example.org', birth_date: '1948-11-22', wedding_date: '1975-11-22' });
    await marry(widow, late);
    await turnOff(late, 'office');

    const summary = await sendCelebrations(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', birthdays: 1, anniversaries: 0, failed: 0 });
    expect(sent()).toEqual(['Happy birthday, Mary! → mary@example.org']);
  });

  it('skips a couple’s anniversary when either spouse is off, whichever of them carries the wedding date and whichever id is smaller', async () => {
    const id = (n: number) => `00000000-0000-4000-8000-0000000000${String(n).padStart(2, '0')}`;
    // The date on the spouse who is off, on the other one, on both; the smaller id off or not.
    const couples: Array<[Record<string, unknown>, Record<string, unknown>]> = [
      [{ wedding_date: '1990-11-22' }, {}],
      [{}, { wedding_date: '1990-11-22' }],
      [{ wedding_date: '1990-11-22' }, { wedding_date: '1990-11-22' }],
    ];
    let n = 0;
    for (const [offFields, onFields] of couples) {
      for (const offFirst of [true, false]) {
        n += 1;
        const off = await person(`Off${n}`, { id: id(offFirst ? 2 * n : 2 * n + 1), email: `off${n}@example.org`, ...offFields });
        const on = await person(`On${n}`, { id: id(offFirst ? 2 * n + 1 : 2 * n), email: `on${n}@example.org`, ...onFields });
        await marry(off, on);
        await turnOff(off, n % 2 === 0 ? 'office' : 'unsubscribe');
      }
    }
    // A couple with both on is still greeted.
    const tom = await person('Tom', { email: 'tom@example.org', wedding_date: '1996-11-22' });
    const lan = await person('Lan', { email: 'lan@example.org', wedding_date: '1996-11-22' });
    await marry(tom, lan);

    const summary = await sendCelebrations(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', anniversaries: 1, skipped: 0 });
    expect(sent()).toHaveLength(1);
    expect(sent()[0]).toMatch(/^Happy 30th wedding anniversary, (Tom and Lan|Lan and Tom)! → lan@example.org,tom@example.org$/);
  });

  it('a person linked to a spouse who is off is not greeted alone either, even when their dates differ', async () => {
    const widow = await person('Mary', { email: 'mary@example.org', wedding_date: '1975-11-22' });
    const late = await person('John', { email: 'john@example.org', wedding_date: '1975-06-01' });
    await marry(widow, late);
    await turnOff(late, 'office');

    const summary = await sendCelebrations(context(), { trigger: 'cli' });

    expect(summary).toMatchObject({ outcome: 'ok', anniversaries: 0 });
    expect(mail.sink.messages).toHaveLength(0);
  });
});
