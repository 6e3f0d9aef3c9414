import { formatInTimeZone } from 'date-fns-tz';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { setSetting } from '../../src/settings.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { testConfig, testEnv } from '../support/env.js';
import { insertPerson } from '../support/factories.js';

let tdb: TestDatabase;
const refused = new Set<string>();
const mail = useSmtpSink({ rejectRecipient: (address) => refused.has(address) });

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

interface Summary {
  job: string;
  outcome: string;
  dryRun: boolean;
  birthdays: number;
  anniversaries: number;
  failed: number;
  skipped: number;
  runId?: number;
  wouldDo?: string[];
}

describe('eventops send-celebrations under cron (no TTY)', () => {
  it('prints the JSON summary and exits 0 when skipped or all sent, 1 when some sends failed', async () => {
    const env = testEnv({ ...mail.sink.configEnv(), DATABASE_URL: tdb.url });
    const cipher = createFieldCipher(testConfig().keyring);
    // The command runs on the real clock: today's birthday in APP_TIMEZONE (default Australia/Sydney); 1992 had a 29 February.
    const monthDay = formatInTimeZone(new Date(), 'Australia/Sydney', 'MM-dd');
    await insertPerson(tdb.db, cipher, { first_name: 'Ada', email: 'ada@example.org', birth_date: `1992-${monthDay}` });
    await insertPerson(tdb.db, cipher, { first_name: 'Bo', email: 'bo@example.org', birth_date: `1992-${monthDay}` });

    const off = await runCli(['send-celebrations', '--json'], { env });
    expect(off.code).toBe(0);
    expect(JSON.parse(off.stdout)).toMatchObject({ job: 'send-celebrations', outcome: 'skipped', birthdays: 0 });
    // Skipped says why, and which setting turns it on.
    const offInWords = await runCli(['send-celebrations'], { env });
    expect(offInWords.stdout).toContain('send-celebrations: skipped (birthday and anniversary emails are both off in Settings');
    expect(offInWords.stdout).toContain('eventops settings set celebrations.birthdays true');
    // Turned on after a run from the command line found them off: that run settles nothing (cron runs again), so no hint.
    const turnedOn = await runCli(['settings', 'set', 'celebrations.birthdays', 'true'], { env });
    expect(turnedOn.code).toBe(0);
    expect(turnedOn.stdout).toBe('celebrations.birthdays = true\n');

    await setSetting(tdb.db, 'celebrations.birthdays', true, new Date());
    const dry = await runCli(['send-celebrations', '--dry-run', '--json'], { env });
    expect(dry.code).toBe(0);
    // In words, a dry run's counts say they are what a real run would do, not what was done.
    const dryInWords = await runCli(['send-celebrations', '--dry-run'], { env });
    expect(dryInWords.stdout.split('\n')[0]).toBe(
      'send-celebrations: ok, birthdays 2, anniversaries 0, failed 0, skipped 0 (dry run: nothing was sent or changed; a real run would do this)',
    );
    const planned = JSON.parse(dry.stdout) as Summary;
    expect(planned).toMatchObject({ outcome: 'ok', dryRun: true, birthdays: 2 });
    expect(planned.wouldDo?.sort()).toEqual(['email Ada Member ada@example.org (birthday)', 'email Bo Member bo@example.org (birthday)']);
    expect(mail.sink.messages).toHaveLength(0);

    refused.add('bo@example.org');
    const partial = await runCli(['send-celebrations', '--json'], { env });
    expect(partial.code).toBe(1);
    const partialSummary = JSON.parse(partial.stdout) as Summary;
    expect(partialSummary).toMatchObject({ outcome: 'partial', birthdays: 1, failed: 1, skipped: 0 });
    expect(await tdb.db('job_runs').where({ id: partialSummary.runId }).first()).toMatchObject({ trigger: 'cli', outcome: 'partial' });
    expect(mail.sink.messages.map((m) => m.envelope.to)).toEqual([['ada@example.org']]);

    refused.clear();
    const retry = await runCli(['send-celebrations', '--json'], { env });
    expect(retry.code).toBe(0);
    expect(JSON.parse(retry.stdout)).toMatchObject({ outcome: 'ok', birthdays: 1, failed: 0, skipped: 1 });
    expect(mail.sink.messages.map((m) => m.envelope.to)).toEqual([['ada@example.org'], ['bo@example.org']]);

    const human = await runCli(['send-celebrations'], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toBe('send-celebrations: ok, birthdays 0, anniversaries 0, failed 0, skipped 2\n');
  });
});
