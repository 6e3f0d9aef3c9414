import { describe, expect, it } from 'vitest';
import type { JobName } from '../../src/jobs/types.js';
import { duePeriod, jobAvailability, nextDueTimes, periodAt } from '../../src/scheduler/periods.js';
import { testConfig } from '../support/env.js';

const allOn = testConfig({
  APP_TIMEZONE: 'Australia/Sydney',
  CLEARANCE_DIGEST: 'true',
  ERROR_DIGEST: 'true',
  TRACKER_TOKEN: 'tracker-token',
  TRACKER_REPO: 'grace/eventops',
});
const defaults = testConfig({ APP_TIMEZONE: 'Australia/Sydney' });
const at = (iso: string) => new Date(iso);
const dueKey = (job: JobName, iso: string, config = allOn) => duePeriod(config, job, at(iso))?.key;

describe('30-minute jobs', () => {
  it('are due in every 30-minute slot, keyed by the slot start in UTC', () => {
    expect(dueKey('send-reminders', '2026-11-22T10:44:59Z')).toBe('send-reminders:2026-11-22T10:30Z');
    expect(dueKey('sweep-checkouts', '2026-11-22T11:00:00Z')).toBe('sweep-checkouts:2026-11-22T11:00Z');
    expect(dueKey('send-reminders', '2026-11-22T10:29:59Z', defaults)).toBe('send-reminders:2026-11-22T10:00Z');
  });

  it('keep a 30-minute rhythm through the hour Sydney repeats when daylight saving ends', () => {
    // 2026-04-05 03:00 AEDT becomes 02:00 AEST: 15:30Z and 16:30Z are both 02:30 local, and still two different slots.
    expect(dueKey('send-reminders', '2026-04-04T15:30:00Z')).toBe('send-reminders:2026-04-04T15:30Z');
    expect(dueKey('send-reminders', '2026-04-04T16:30:00Z')).toBe('send-reminders:2026-04-04T16:30Z');
  });
});

describe('send-celebrations: once per local day from 07:00', () => {
  it('is not due before 07:00 Sydney and due from 07:00 until midnight, keyed by the local date', () => {
    expect(dueKey('send-celebrations', '2026-11-21T19:59:59Z')).toBeUndefined(); // 06:59:59 AEDT
    expect(dueKey('send-celebrations', '2026-11-21T20:00:00Z')).toBe('send-celebrations:2026-11-22'); // 07:00 AEDT
    expect(dueKey('send-celebrations', '2026-11-22T12:59:59Z')).toBe('send-celebrations:2026-11-22'); // 23:59:59
    expect(dueKey('send-celebrations', '2026-11-22T13:00:00Z')).toBeUndefined(); // 00:00 on the 23rd
  });

  it('opens at 07:00 local on the day daylight saving ends (2026-04-05, a 25-hour day)', () => {
    const day = periodAt(allOn, 'send-celebrations', at('2026-04-05T01:00:00Z'));
    expect(day.key).toBe('send-celebrations:2026-04-05');
    expect(day.startsAt.toISOString()).toBe('2026-04-04T13:00:00.000Z'); // 00:00 AEDT (+11)
    expect(day.opensAt.toISOString()).toBe('2026-04-04T21:00:00.000Z'); // 07:00 AEST (+10)
    expect(day.endsAt.toISOString()).toBe('2026-04-05T14:00:00.000Z'); // 00:00 AEST
    expect(day.endsAt.getTime() - day.startsAt.getTime()).toBe(25 * 3600_000);
    expect(dueKey('send-celebrations', '2026-04-04T20:55:00Z')).toBeUndefined(); // 06:55 AEST
    expect(dueKey('send-celebrations', '2026-04-04T21:00:00Z')).toBe('send-celebrations:2026-04-05');
    // The day before, 07:00 was still AEDT: 24 + 1 hours between the two openings.
    expect(periodAt(allOn, 'send-celebrations', at('2026-04-04T01:00:00Z')).opensAt.toISOString()).toBe('2026-04-03T20:00:00.000Z');
  });

  it('opens at 07:00 local on the day daylight saving starts (2026-10-04, a 23-hour day)', () => {
    const day = periodAt(allOn, 'send-celebrations', at('2026-10-04T01:00:00Z'));
    expect(day.key).toBe('send-celebrations:2026-10-04');
    expect(day.startsAt.toISOString()).toBe('2026-10-03T14:00:00.000Z'); // 00:00 AEST (+10)
    expect(day.opensAt.toISOString()).toBe('2026-10-03T20:00:00.000Z'); // 07:00 AEDT (+11)
    expect(day.endsAt.getTime() - day.startsAt.getTime()).toBe(23 * 3600_000);
    expect(dueKey('send-celebrations', '2026-10-03T19:55:00Z')).toBeUndefined(); // 06:55 AEDT
    expect(dueKey('send-celebrations', '2026-10-03T20:00:00Z')).toBe('send-celebrations:2026-10-04');
    // Between 02:00 and 03:00 (the skipped hour) the day exists and the job is not yet due.
    expect(dueKey('send-celebrations', '2026-10-03T16:00:00Z')).toBeUndefined();
  });

  it('follows APP_TIMEZONE, not Sydney, for a church elsewhere', () => {
    const london = testConfig({ APP_TIMEZONE: 'Europe/London' });
    expect(dueKey('send-celebrations', '2026-11-22T06:59:00Z', london)).toBeUndefined();
    expect(dueKey('send-celebrations', '2026-11-22T07:00:00Z', london)).toBe('send-celebrations:2026-11-22');
  });
});

describe('send-clearance-digest: the 1st from 07:00, catching up through the 7th', () => {
  it('is due from the 1st 07:00 local until the end of the 7th, keyed by the local month', () => {
    expect(dueKey('send-clearance-digest', '2026-10-31T19:55:00Z')).toBeUndefined(); // 1 Nov 06:55 AEDT
    expect(dueKey('send-clearance-digest', '2026-10-31T20:00:00Z')).toBe('send-clearance-digest:2026-11');
    expect(dueKey('send-clearance-digest', '2026-11-04T03:00:00Z')).toBe('send-clearance-digest:2026-11');
    expect(dueKey('send-clearance-digest', '2026-11-07T12:59:59Z')).toBe('send-clearance-digest:2026-11'); // 7th 23:59:59
    expect(dueKey('send-clearance-digest', '2026-11-07T13:00:00Z')).toBeUndefined(); // 8th 00:00
    expect(dueKey('send-clearance-digest', '2026-11-20T03:00:00Z')).toBeUndefined();
  });

  it('uses the local month at the UTC month boundary', () => {
    // 2026-12-31T20:00Z is 1 January 2027 07:00 AEDT.
    expect(dueKey('send-clearance-digest', '2026-12-31T20:00:00Z')).toBe('send-clearance-digest:2027-01');
  });

  it('is never due unless CLEARANCE_DIGEST is true', () => {
    expect(dueKey('send-clearance-digest', '2026-10-31T21:00:00Z', defaults)).toBeUndefined();
  });
});

describe('error-issues: once per ISO week from Monday 09:00', () => {
  it('is due from Monday 09:00 local to the end of Sunday, keyed by the ISO week', () => {
    expect(dueKey('error-issues', '2026-11-15T21:55:00Z')).toBeUndefined(); // Mon 16 Nov 08:55 AEDT
    expect(dueKey('error-issues', '2026-11-15T22:00:00Z')).toBe('error-issues:2026-W47'); // 09:00
    expect(dueKey('error-issues', '2026-11-22T12:59:59Z')).toBe('error-issues:2026-W47'); // Sun 23:59:59
    expect(dueKey('error-issues', '2026-11-22T13:00:00Z')).toBeUndefined(); // Mon 23 Nov 00:00
  });

  it('uses the ISO week-year across the new year', () => {
    // Friday 1 January 2027 belongs to ISO week 2026-W53, which began Monday 28 December.
    const week = periodAt(allOn, 'error-issues', at('2026-12-31T22:00:00Z'));
    expect(week.key).toBe('error-issues:2026-W53');
    expect(week.opensAt.toISOString()).toBe('2026-12-27T22:00:00.000Z');
  });

  it('keeps Monday 09:00 local in the week daylight saving ends', () => {
    // Week 2026-W14: Monday 30 March is AEDT, the following Monday 6 April AEST.
    const week = periodAt(allOn, 'error-issues', at('2026-04-05T10:00:00Z'));
    expect(week.key).toBe('error-issues:2026-W14');
    expect(week.opensAt.toISOString()).toBe('2026-03-29T22:00:00.000Z');
    expect(week.endsAt.toISOString()).toBe('2026-04-05T14:00:00.000Z');
    expect(periodAt(allOn, 'error-issues', week.endsAt).opensAt.toISOString()).toBe('2026-04-05T23:00:00.000Z');
  });

  it('without ERROR_DIGEST, or without the tracker settings, is still due weekly, to purge old rows only (it files nothing)', () => {
    const noTracker = testConfig({ APP_TIMEZONE: 'Australia/Sydney', ERROR_DIGEST: 'true' });
    const noFlag = testConfig({ APP_TIMEZONE: 'Australia/Sydney', TRACKER_TOKEN: 't', TRACKER_REPO: 'grace/eventops' });
    expect(dueKey('error-issues', '2026-11-16T03:00:00Z', noTracker)).toBe('error-issues:2026-W47');
    expect(dueKey('error-issues', '2026-11-16T03:00:00Z', noFlag)).toBe('error-issues:2026-W47');
    expect(jobAvailability(noTracker, 'error-issues')).toEqual({ enabled: true, purgeOnly: 'TRACKER_TOKEN and TRACKER_REPO are not set' });
    expect(jobAvailability(noFlag, 'error-issues')).toEqual({ enabled: true, purgeOnly: 'ERROR_DIGEST is not true' });
  });
});

describe('reconcile (hourly)', () => {
  const withPayments = testConfig({ APP_TIMEZONE: 'Australia/Sydney', PSP_SECRET_KEY: 'sk_test_x', PSP_WEBHOOK_SECRET: 'whsec_x' });

  it('is due in every hour, keyed by the hour start in UTC', () => {
    expect(dueKey('reconcile', '2026-11-22T10:00:00Z', withPayments)).toBe('reconcile:2026-11-22T10Z');
    expect(dueKey('reconcile', '2026-11-22T10:59:59Z', withPayments)).toBe('reconcile:2026-11-22T10Z');
    expect(dueKey('reconcile', '2026-11-22T11:00:00Z', withPayments)).toBe('reconcile:2026-11-22T11Z');
    expect(periodAt(withPayments, 'reconcile', at('2026-11-22T10:20:00Z'))).toMatchObject({ kind: 'hour', closesAt: at('2026-11-22T11:00:00Z') });
  });

  it('is never due without card payments configured, and says why', () => {
    expect(dueKey('reconcile', '2026-11-22T10:00:00Z', defaults)).toBeUndefined();
    const next = nextDueTimes(defaults, at('2026-11-22T10:10:00Z')).find((entry) => entry.job === 'reconcile');
    expect(next).toEqual({ job: 'reconcile', enabled: false, reason: 'PSP_SECRET_KEY and PSP_WEBHOOK_SECRET are not set' });
  });
});

describe('nextDueTimes for eventops status', () => {
  const byJob = (entries: ReturnType<typeof nextDueTimes>) => Object.fromEntries(entries.map((entry) => [entry.job, entry]));

  it('shows the next local due time of each job, moving past periods that are done', () => {
    const now = at('2026-11-22T10:10:00Z'); // Sunday 22 Nov 21:10 AEDT
    const next = byJob(
      nextDueTimes(allOn, now, new Set(['send-celebrations:2026-11-22', 'error-issues:2026-W47', 'send-reminders:2026-11-22T10:00Z'])),
    );
    expect(next['send-reminders']).toMatchObject({ enabled: true, periodKey: 'send-reminders:2026-11-22T10:30Z', local: '2026-11-22 21:30 +11:00', dueNow: false });
    expect(next['sweep-checkouts']).toMatchObject({ periodKey: 'sweep-checkouts:2026-11-22T10:00Z', dueAt: now, dueNow: true });
    expect(next['send-celebrations']).toMatchObject({ periodKey: 'send-celebrations:2026-11-23', local: '2026-11-23 07:00 +11:00' });
    expect(next['send-clearance-digest']).toMatchObject({ periodKey: 'send-clearance-digest:2026-12', local: '2026-12-01 07:00 +11:00' });
    expect(next['error-issues']).toMatchObject({ periodKey: 'error-issues:2026-W48', local: '2026-11-23 09:00 +11:00' });
  });

  it('shows a period still open as due now, and a waiting retry at its retry time', () => {
    const now = at('2026-11-03T01:00:00Z'); // 3 Nov 12:00 AEDT, digest month open
    const next = byJob(nextDueTimes(allOn, now, new Set(), new Map([['send-celebrations:2026-11-03', at('2026-11-03T01:20:00Z')]])));
    expect(next['send-clearance-digest']).toMatchObject({ periodKey: 'send-clearance-digest:2026-11', dueAt: now, dueNow: true });
    expect(next['send-celebrations']).toMatchObject({ local: '2026-11-03 12:20 +11:00', dueNow: false });
  });

  it('crosses the daylight-saving start: the next 07:00 is in AEDT', () => {
    const next = byJob(nextDueTimes(allOn, at('2026-10-03T12:00:00Z'), new Set(['send-celebrations:2026-10-03'])));
    expect(next['send-celebrations']).toMatchObject({ dueAt: at('2026-10-03T20:00:00Z'), local: '2026-10-04 07:00 +11:00' });
  });

  it('names why a job is off', () => {
    const next = byJob(nextDueTimes(defaults, at('2026-11-22T10:10:00Z')));
    expect(next['send-clearance-digest']).toEqual({ job: 'send-clearance-digest', enabled: false, reason: 'CLEARANCE_DIGEST is not true' });
    expect(next['error-issues']).toMatchObject({ job: 'error-issues', enabled: true, purgeOnly: 'ERROR_DIGEST is not true' });
  });
});

describe('a day whose local midnight daylight saving skips', () => {
  const zone = (timeZone: string) =>
    testConfig({ APP_TIMEZONE: timeZone, CLEARANCE_DIGEST: 'true', ERROR_DIGEST: 'true', TRACKER_TOKEN: 't', TRACKER_REPO: 'grace/eventops' });
  // Asia/Beirut jumps from 00:00 (+02:00) to 01:00 (+03:00) on Sunday 2025-03-30; America/Santiago
  // from 00:00 (-04:00) to 01:00 (-03:00) on Sunday 2025-09-07.
  const beirut = zone('Asia/Beirut');
  const santiago = zone('America/Santiago');

  it.each([
    { config: beirut, dayBefore: '2025-03-29', days: ['2025-03-28T22:00:00.000Z', '2025-03-29T22:00:00.000Z', '2025-03-30T21:00:00.000Z'] },
    { config: santiago, dayBefore: '2025-09-06', days: ['2025-09-06T04:00:00.000Z', '2025-09-07T04:00:00.000Z', '2025-09-08T03:00:00.000Z'] },
  ])('$config.regional.timeZone: the skipped day starts at 01:00, when the clocks jump, and the day before ends there', ({ config, dayBefore, days }) => {
    const [beforeStart, jump, afterStart] = days.map(at) as [Date, Date, Date];
    const before = periodAt(config, 'send-celebrations', new Date(beforeStart.getTime() + 12 * 3600_000));
    expect(before).toMatchObject({ key: `send-celebrations:${dayBefore}`, startsAt: beforeStart, endsAt: jump });
    const skipped = periodAt(config, 'send-celebrations', before.endsAt);
    expect(skipped.key).not.toBe(before.key);
    expect(skipped).toMatchObject({ startsAt: jump, endsAt: afterStart });
    expect(skipped.endsAt.getTime() - skipped.startsAt.getTime()).toBe(23 * 3600_000);
    expect(periodAt(config, 'send-celebrations', skipped.endsAt).startsAt).toEqual(afterStart);
    // The last instant before the jump is still the day before.
    expect(periodAt(config, 'send-celebrations', new Date(jump.getTime() - 1)).key).toBe(before.key);
  });

  it('moves past a done day to the skipped one, where eventops status and serve used to spin forever', () => {
    const celebrations = (config: typeof beirut, now: string, done: string) =>
      nextDueTimes(config, at(now), new Set([done])).find((entry) => entry.job === 'send-celebrations');
    expect(celebrations(beirut, '2025-03-29T10:00:00Z', 'send-celebrations:2025-03-29')).toMatchObject({
      periodKey: 'send-celebrations:2025-03-30',
      local: '2025-03-30 07:00 +03:00',
    });
    expect(celebrations(santiago, '2025-09-06T15:00:00Z', 'send-celebrations:2025-09-06')).toMatchObject({
      periodKey: 'send-celebrations:2025-09-07',
      local: '2025-09-07 07:00 -03:00',
    });
  });

  it('starts a week or a month whose first midnight is skipped at 01:00 too', () => {
    // Asia/Tehran skipped Monday 2021-03-22 00:00 (+03:30 to +04:30).
    const tehran = zone('Asia/Tehran');
    const week = periodAt(tehran, 'error-issues', at('2021-03-18T12:00:00Z'));
    expect(week).toMatchObject({ key: 'error-issues:2021-W11', endsAt: at('2021-03-21T20:30:00Z') });
    expect(periodAt(tehran, 'error-issues', week.endsAt)).toMatchObject({ key: 'error-issues:2021-W12', startsAt: week.endsAt });
    // America/Asuncion skipped 2023-10-01 00:00 (-04:00 to -03:00).
    const asuncion = zone('America/Asuncion');
    const month = periodAt(asuncion, 'send-clearance-digest', at('2023-09-15T12:00:00Z'));
    expect(month).toMatchObject({ key: 'send-clearance-digest:2023-09', endsAt: at('2023-10-01T04:00:00Z') });
    expect(periodAt(asuncion, 'send-clearance-digest', month.endsAt)).toMatchObject({ key: 'send-clearance-digest:2023-10', startsAt: month.endsAt });
    const next = nextDueTimes(asuncion, at('2023-09-15T12:00:00Z'), new Set(['send-clearance-digest:2023-09'])).find((e) => e.job === 'send-clearance-digest');
    expect(next).toMatchObject({ periodKey: 'send-clearance-digest:2023-10', local: '2023-10-01 07:00 -03:00' });
  });
});
