import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { celebrationsSkippedToday } from '../../src/office/celebrations-hint.js';
import { getAdminSettings, resolveMembershipSecretaryEmail, setAdminSetting } from '../../src/office/settings.js';
import { FixedClock } from '../../src/clock.js';
import { AppError, UsageError } from '../../src/errors.js';
import { getCardFeeRate, getSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';

let tdb: TestDatabase;
let ctx: ReturnType<typeof createTestContext>;
beforeAll(async () => {
  tdb = await createTestDatabase();
  ctx = createTestContext({ db: tdb.db });
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  await tdb.db('app_settings').del();
});

async function usageErrorOf(promise: Promise<unknown>): Promise<UsageError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UsageError);
  expect((error as AppError).exitCode).toBe(2);
  return error as UsageError;
}

describe('settings get', () => {
  it('lists every admin key; unset card fee shows its default 1.7% + 30, celebrations default off, the rest unset', async () => {
    const views = await getAdminSettings(ctx);
    expect(views.map((v) => v.key)).toEqual([
      'church.name',
      'church.address',
      'church.abn',
      'church.website',
      'cardFee.percent',
      'cardFee.fixed',
      'celebrations.birthdays',
      'celebrations.anniversaries',
      'membershipSecretaryEmail',
      'bank.accountName',
      'bank.bsb',
      'bank.accountNumber',
    ]);
    expect(views.find((v) => v.key === 'cardFee.percent')).toEqual({ key: 'cardFee.percent', value: 1.7, source: 'default' });
    expect(views.find((v) => v.key === 'cardFee.fixed')).toEqual({ key: 'cardFee.fixed', value: 30, source: 'default' });
    expect(views.find((v) => v.key === 'celebrations.birthdays')).toEqual({ key: 'celebrations.birthdays', value: false, source: 'default' });
    expect(views.find((v) => v.key === 'church.name')).toEqual({ key: 'church.name', value: null, source: 'unset' });
  });

  it('one key shows its stored value; an unknown key is a usage error listing the valid keys', async () => {
    await setAdminSetting(ctx, 'church.name', 'Grace Community Church');
    expect(await getAdminSettings(ctx, 'church.name')).toEqual([{ key: 'church.name', value: 'Grace Community Church', source: 'setting' }]);
    const error = await usageErrorOf(getAdminSettings(ctx, 'church.colour'));
    expect(error.message).toContain('church.colour');
    expect(error.suggestion).toContain('cardFee.percent');
  });
});

describe('settings set', () => {
  it('card fee values are stored as numbers and used by the card fee rate', async () => {
    await setAdminSetting(ctx, 'cardFee.percent', '9.9999');
    expect(await getSetting(tdb.db, 'cardFee.percent')).toBe(9.9999);
    await setAdminSetting(ctx, 'cardFee.percent', '1.75');
    await setAdminSetting(ctx, 'cardFee.fixed', '25');
    const rows = await tdb.db('app_settings').whereIn('key', ['cardFee.percent', 'cardFee.fixed']).orderBy('key').select('key', 'value');
    expect(rows).toEqual([
      { key: 'cardFee.fixed', value: 25 },
      { key: 'cardFee.percent', value: 1.75 },
    ]);
    expect(await getCardFeeRate(tdb.db)).toEqual({ percent: 1.75, fixed: 25 });
  });

  it('celebrations accept only true or false and are stored as booleans', async () => {
    await setAdminSetting(ctx, 'celebrations.birthdays', 'false');
    expect(await getSetting(tdb.db, 'celebrations.birthdays')).toBe(false);
    const error = await usageErrorOf(setAdminSetting(ctx, 'celebrations.anniversaries', 'yes'));
    expect(error.message).toContain('celebrations.anniversaries');
    expect(error.message).toContain('true or false');
  });

  it('a value of the wrong type is refused naming the key and what it expects, and nothing is stored', async () => {
    const cases: Array<[string, string, string]> = [
      ['cardFee.percent', 'abc', 'a percentage from 0 up to (not including) 10'],
      ['cardFee.percent', '12', 'a percentage from 0 up to (not including) 10'],
      ['cardFee.percent', '10', 'a percentage from 0 up to (not including) 10'],
      ['cardFee.percent', '-0.5', 'a percentage from 0 up to (not including) 10'],
      ['cardFee.percent', '1.75501', 'with at most 4 decimals'],
      ['cardFee.fixed', '30.5', 'a whole number from 0 to 10000'],
      ['membershipSecretaryEmail', 'not-an-email', 'an email address'],
      ['church.website', 'gracechurch', 'an http:// or https:// URL'],
      // It becomes a link in every email's footer.
      ['church.website', 'javascript:alert(1)', 'an http:// or https:// URL'],
      ['church.website', 'data:text/html,hi', 'an http:// or https:// URL'],
      ['church.name', '  ', 'non-empty text'],
    ];
    for (const [key, value, expected] of cases) {
      const error = await usageErrorOf(setAdminSetting(ctx, key, value));
      expect(error.message).toContain(key);
      expect(error.message).toContain(expected);
    }
    expect(await tdb.db('app_settings').count({ n: '*' }).first()).toEqual({ n: 0 });
  });

  it('keys written by jobs are not administrator settings', async () => {
    const error = await usageErrorOf(setAdminSetting(ctx, 'clearanceDigestLastMonth', '2026-11'));
    expect(error.suggestion).toContain('church.name');
  });
});

describe('membership secretary email', () => {
  const withEnv = (env: Record<string, string>) => createTestContext({ db: tdb.db, env });
  const smtp = { SMTP_USER: 'smtp-office@example.org', SMTP_APP_PASSWORD: 'app-password' };

  it('Settings win over MEMBERSHIP_SECRETARY_EMAIL and SMTP_USER', async () => {
    await setAdminSetting(ctx, 'membershipSecretaryEmail', 'secretary@example.org');
    const c = withEnv({ ...smtp, MEMBERSHIP_SECRETARY_EMAIL: 'env-secretary@example.org' });
    expect(await resolveMembershipSecretaryEmail(c)).toBe('secretary@example.org');
  });

  it('without the setting, MEMBERSHIP_SECRETARY_EMAIL wins over SMTP_USER', async () => {
    const c = withEnv({ ...smtp, MEMBERSHIP_SECRETARY_EMAIL: 'env-secretary@example.org' });
    expect(await resolveMembershipSecretaryEmail(c)).toBe('env-secretary@example.org');
  });

  it('without either, SMTP_USER; with nothing configured, none', async () => {
    expect(await resolveMembershipSecretaryEmail(withEnv(smtp))).toBe('smtp-office@example.org');
    expect(await resolveMembershipSecretaryEmail(ctx)).toBeUndefined();
  });

  it('without either and with an SMTP_USER that is a provider login, not an address, MAIL_FROM', async () => {
    const login = withEnv({ SMTP_USER: 'apikey', SMTP_APP_PASSWORD: 'app-password', MAIL_FROM: 'office@example.org' });
    expect(await resolveMembershipSecretaryEmail(login)).toBe('office@example.org');
  });
});

describe('turning celebrations on after today’s in-app run had them off', () => {
  it('hints to send today’s now only when the in-app scheduler’s run of today (which settles the day) had that kind off', async () => {
    const now = new Date('2026-11-24T22:00:00Z'); // 25 November, 09:00 in Sydney
    const inApp = createTestContext({ db: tdb.db, clock: new FixedClock(now), env: { IN_APP_CRON: 'true', APP_TIMEZONE: 'Australia/Sydney' } });
    const byCron = createTestContext({ db: tdb.db, clock: new FixedClock(now), env: { IN_APP_CRON: 'false', APP_TIMEZONE: 'Australia/Sydney' } });
    const ran = async (trigger: string, kinds: string[], at: Date) => {
      await tdb.db('job_runs').delete();
      await tdb.db('job_runs').insert({ job: 'send-celebrations', trigger, started_at: at, finished_at: at, outcome: kinds.length ? 'ok' : 'skipped', summary: JSON.stringify({ kinds }) });
    };
    const todayAt7 = new Date('2026-11-24T20:00:00Z');

    await ran('scheduler', [], todayAt7);
    expect(await celebrationsSkippedToday(inApp, 'celebrations.birthdays', true)).toBe(
      "today's celebrations run had birthday emails off and the in-app scheduler will not run it again today: run `eventops send-celebrations` to send today's now",
    );
    expect(await celebrationsSkippedToday(inApp, 'celebrations.birthdays', false)).toBeUndefined();
    expect(await celebrationsSkippedToday(byCron, 'celebrations.birthdays', true)).toBeUndefined();

    // Anniversaries were on, birthdays off: the run was "ok", and birthdays still wait.
    await ran('scheduler', ['anniversary'], todayAt7);
    expect(await celebrationsSkippedToday(inApp, 'celebrations.birthdays', true)).toContain('had birthday emails off');
    expect(await celebrationsSkippedToday(inApp, 'celebrations.anniversaries', true)).toBeUndefined();

    // Yesterday's run, or one from the command line, settles nothing for today.
    await ran('scheduler', [], new Date('2026-11-23T20:00:00Z'));
    expect(await celebrationsSkippedToday(inApp, 'celebrations.birthdays', true)).toBeUndefined();
    await ran('cli', [], todayAt7);
    expect(await celebrationsSkippedToday(inApp, 'celebrations.birthdays', true)).toBeUndefined();
  });
});
