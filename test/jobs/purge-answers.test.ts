import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { purgeSensitiveAnswers } from '../../src/jobs/purge-answers.js';
import { decryptSensitiveAnswers } from '../../src/registrations/answers.js';
import { createScheduler } from '../../src/scheduler/scheduler.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent } from '../support/factories.js';
import { CAMP_PRICING, CAMP_QUESTIONS, campAnswers, insertAnsweredRegistration, setEventQuestions } from '../support/answered-registration.js';

const SYDNEY = 'Australia/Sydney';
const DAY = 24 * 3600_000;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const contextAt = (now: Date) => createTestContext({ db: tdb.db, clock: new FixedClock(now), env: { APP_TIMEZONE: SYDNEY } });

/** An event that ended (or, without an end, started) at `at`, keeping sensitive answers `retentionDays`, with one answered family. */
async function answeredEvent(now: Date, input: { endedAt?: Date; startedAt?: Date; retentionDays: number }) {
  const startsAt = input.startedAt ?? new Date((input.endedAt as Date).getTime() - 2 * DAY);
  const event = await insertEvent(tdb.db, { pricing: CAMP_PRICING, starts_at: startsAt, ends_at: input.endedAt ?? null });
  await setEventQuestions(tdb.db, event.id, CAMP_QUESTIONS, input.retentionDays);
  const { attendees, answers } = campAnswers();
  const registration = await insertAnsweredRegistration(tdb.db, contextAt(now).cipher, { eventId: event.id, questions: CAMP_QUESTIONS, attendees, answers, now: new Date(startsAt.getTime() - 30 * DAY) });
  return { event, registration };
}

const row = (id: string) => tdb.db('registrations').where({ id }).first();
const historyOf = (id: string) => tdb.db('registration_history').where({ registration_id: id, action: 'sensitive_purged' });

describe('purge-answers: sensitive answers are emptied sensitiveRetentionDays after the event ends; the plain ones stay', () => {
  // Monday 7 December 2026, 09:30 in Sydney.
  const now = new Date('2026-12-06T22:30:00Z');

  it('purges only past the retention (from the end, else the start), records each purge, keeps the plain answers, and a second run does nothing', async () => {
    const past = await answeredEvent(now, { endedAt: new Date(now.getTime() - 31 * DAY), retentionDays: 30 });
    const notYet = await answeredEvent(now, { endedAt: new Date(now.getTime() - 29 * DAY), retentionDays: 30 });
    const noEnd = await answeredEvent(now, { startedAt: new Date(now.getTime() - 8 * DAY), retentionDays: 7 });
    const longKept = await answeredEvent(now, { endedAt: new Date(now.getTime() - 100 * DAY), retentionDays: 365 });
    // A cancelled registration's sensitive answers go too.
    await tdb.db('registrations').where({ id: noEnd.registration.id }).update({ status: 'CANCELLED', cancelled_at: now, cancel_reason: 'office' });
    const plainBefore = (await row(past.registration.id)).answers;
    const ctx = contextAt(now);

    const preview = await purgeSensitiveAnswers(ctx, { trigger: 'cli', dryRun: true });
    expect(preview).toMatchObject({ job: 'purge-answers', outcome: 'ok', dryRun: true, purged: 2 });
    expect(preview.wouldDo).toHaveLength(2);
    expect(preview.wouldDo?.join('\n')).toContain(`(${past.event.slug}, 30 days after the event ended)`);
    expect(await tdb.db('job_runs').where({ job: 'purge-answers' })).toEqual([]);
    expect((await row(past.registration.id)).sensitive_answers_enc).not.toBeNull();

    const summary = await purgeSensitiveAnswers(ctx, { trigger: 'cli' });
    expect(summary).toMatchObject({ job: 'purge-answers', outcome: 'ok', dryRun: false, purged: 2, runId: expect.any(Number) });

    for (const purged of [past, noEnd]) {
      expect(await row(purged.registration.id)).toMatchObject({ sensitive_answers_enc: null, sensitive_purged_at: now });
      const history = await historyOf(purged.registration.id);
      expect(history).toHaveLength(1);
      expect(history[0]).toMatchObject({ actor: 'purge-answers', created_at: now });
    }
    expect((await historyOf(past.registration.id))[0].changes).toEqual({ retentionDays: 30 });
    expect((await row(past.registration.id)).answers).toEqual(plainBefore);
    expect(plainBefore.attendees[1]).toMatchObject({ diet: 'no pork', photos: { by: 'Ruth Camper', asGuardianOf: 'Kim Camper' } });

    for (const kept of [notYet, longKept]) {
      const stored = await row(kept.registration.id);
      expect(stored.sensitive_purged_at).toBeNull();
      expect(decryptSensitiveAnswers(ctx.cipher, stored.sensitive_answers_enc).attendees[1]).toMatchObject({ allergies: 'peanuts (anaphylaxis), EpiPen' });
      expect(await historyOf(kept.registration.id)).toEqual([]);
    }

    const again = await purgeSensitiveAnswers(contextAt(new Date(now.getTime() + 60_000)), { trigger: 'cli' });
    expect(again).toMatchObject({ outcome: 'ok', purged: 0 });
    expect(await tdb.db('registration_history').where({ action: 'sensitive_purged' })).toHaveLength(2);
    expect((await row(past.registration.id)).sensitive_purged_at).toEqual(now);
    const runs = await tdb.db('job_runs').where({ job: 'purge-answers' }).orderBy('id');
    expect(runs.map((run: { trigger: string; outcome: string; summary: { purged: number } }) => [run.trigger, run.outcome, run.summary.purged])).toEqual([
      ['cli', 'ok', 2],
      ['cli', 'ok', 0],
    ]);
  });

  it('counts the retention in calendar days in the church time zone: due at the local time of the end, that many days later, across a daylight-saving change', async () => {
    // Ended Friday 20 March 2026, 17:00 in Sydney (AEDT); 30 days later is 19 April 17:00 local, in AEST: an hour
    // later than 30 × 24 hours.
    const endedAt = new Date('2026-03-20T06:00:00Z');
    const dueAt = new Date('2026-04-19T07:00:00Z');
    const { registration } = await answeredEvent(now, { endedAt, retentionDays: 30 });
    await purgeSensitiveAnswers(contextAt(new Date(dueAt.getTime() - 60_000)), { trigger: 'cli' });
    expect((await row(registration.id)).sensitive_answers_enc).not.toBeNull();
    await purgeSensitiveAnswers(contextAt(dueAt), { trigger: 'cli' });
    expect((await row(registration.id)).sensitive_answers_enc).toBeNull();
  });

  it('two runs at once purge and record each registration once', async () => {
    const events = await Promise.all(Array.from({ length: 6 }, () => answeredEvent(now, { endedAt: new Date(now.getTime() - 60 * DAY), retentionDays: 30 })));
    const later = new Date(now.getTime() + 2 * 60_000);
    const [a, b] = await Promise.all([purgeSensitiveAnswers(contextAt(later), { trigger: 'cli' }), purgeSensitiveAnswers(contextAt(later), { trigger: 'scheduler' })]);
    expect(a.purged + b.purged).toBe(6);
    for (const { registration } of events) expect(await historyOf(registration.id)).toHaveLength(1);
  });

  it('the in-app scheduler runs it weekly, from Monday 09:00 local, once a week', async () => {
    // Monday 14 December 2026, 09:05 in Sydney.
    const monday = new Date('2026-12-13T22:05:00Z');
    const { registration } = await answeredEvent(monday, { endedAt: new Date(monday.getTime() - 45 * DAY), retentionDays: 30 });
    const clock = new FixedClock(monday);
    const ctx = createTestContext({ db: tdb.db, clock, env: { APP_TIMEZONE: SYDNEY } });
    const scheduler = createScheduler({ ctx, tickMs: 60_000 });

    const tick = await scheduler.tick();
    expect(tick.runs.find((run) => run.job === 'purge-answers')).toMatchObject({ periodKey: 'purge-answers:2026-W51', outcome: 'ok', done: true });
    expect(await row(registration.id)).toMatchObject({ sensitive_answers_enc: null, sensitive_purged_at: monday });
    const run = await tdb.db('job_runs').where({ job: 'purge-answers', trigger: 'scheduler' }).orderBy('id', 'desc').first();
    // Earlier tests' events whose retention has since passed are purged by the same run.
    expect(run).toMatchObject({ outcome: 'ok', summary: expect.objectContaining({ job: 'purge-answers' }) });
    expect(run.summary.purged).toBeGreaterThanOrEqual(1);
    expect(await historyOf(registration.id)).toHaveLength(1);

    // Later the same week: not again.
    clock.set(new Date(monday.getTime() + 2 * DAY));
    expect((await scheduler.tick()).runs.map((r) => r.job)).not.toContain('purge-answers');
    // The next Monday 09:00: the next week's run.
    clock.set(new Date('2026-12-20T22:00:00Z'));
    expect((await scheduler.tick()).runs.find((r) => r.job === 'purge-answers')).toMatchObject({ periodKey: 'purge-answers:2026-W52', outcome: 'ok' });
  });
});
