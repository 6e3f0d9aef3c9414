import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { createScheduler } from '../../src/scheduler/scheduler.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';
import { captureLogger } from '../support/payments-harness.js';
import { SYDNEY, recordingRunJob } from './support.js';

// The real reminder job under the scheduler, sending through the SMTP sink.
let tdb: TestDatabase;
let rejectRecipient: (address: string) => boolean = () => false;
const mail = useSinkAndMailer({ rejectRecipient: (address) => rejectRecipient(address) });

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

const NOW = new Date('2026-11-22T00:00:00Z');
const THIRTY_MINUTES = 30 * 60_000;

interface LogLine {
  job?: string;
  msg: string;
}

describe('the scheduler log of a partly failed reminder run', () => {
  it('says what spec rule 2 does (a recipient whose send failed is not retried), and the next slot indeed sends them nothing', async () => {
    const clock = new FixedClock(NOW);
    const { logger, logs } = captureLogger('info');
    const ctx = createTestContext({ db: tdb.db, clock, logger, mailer: mail.mailer, env: { ...mail.sink.configEnv(), APP_TIMEZONE: SYDNEY } });
    const event = await insertEvent(tdb.db, { title: 'Family Camp', starts_at: new Date('2026-12-05T08:00:00Z'), reminder_at: new Date(NOW.getTime() - 60 * 60_000) });
    for (const name of ['one', 'two', 'bounce']) {
      await insertRegistration(tdb.db, ctx.cipher, event.id, { email: `${name}@example.org`, contact_name: `Member ${name}` });
    }
    rejectRecipient = (address) => address === 'bounce@example.org';
    const scheduler = createScheduler({ ctx, tickMs: 60_000 });

    const first = await scheduler.tick();
    expect(first.runs.find((run) => run.job === 'send-reminders')).toMatchObject({ outcome: 'partial' });
    expect(mail.sink.messages.flatMap((m) => m.envelope.to).sort()).toEqual(['one@example.org', 'two@example.org']);
    const warnings = logs.lines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.job === 'send-reminders' && /did not fully succeed/.test(line.msg));
    expect(warnings.map((line) => line.msg)).toEqual([
      'scheduled job did not fully succeed; a recipient whose send failed is not retried; an event none of whose reminders went out is tried again in the next slot',
    ]);

    // The mail server takes everyone again: the next slot's run sends the bounced recipient nothing.
    rejectRecipient = () => false;
    clock.advance(THIRTY_MINUTES);
    const next = await scheduler.tick();
    expect(next.runs.find((run) => run.job === 'send-reminders')).toMatchObject({ outcome: 'ok' });
    expect(mail.sink.messages).toHaveLength(2);
    expect(await tdb.db('events').where({ id: event.id }).first()).toMatchObject({ reminder_sent_at: NOW });
  });
});

describe('the scheduler log of a period job that did not fully succeed', () => {
  it('says it is tried again 30 minutes later while the period has attempts left, and when it has none', async () => {
    await tdb.db('scheduler_periods').delete();
    const clock = new FixedClock(new Date('2026-11-21T20:00:00Z')); // 07:00 in Sydney
    const { logger, logs } = captureLogger('info');
    const recorder = recordingRunJob(clock, (job) => (job === 'send-celebrations' ? 'partial' : 'ok'));
    const scheduler = createScheduler({ ctx: createTestContext({ db: tdb.db, clock, logger, env: { APP_TIMEZONE: SYDNEY } }), runJob: recorder.runJob });
    for (let i = 0; i < 3; i++, clock.advance(THIRTY_MINUTES)) await scheduler.tick();
    const warnings = logs.lines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.job === 'send-celebrations' && /did not fully succeed/.test(line.msg));
    expect(warnings.map((line) => line.msg.replace('scheduled job did not fully succeed; ', ''))).toEqual([
      'it is tried again 30 minutes later',
      'it is tried again 30 minutes later',
      'no attempts left in this period',
    ]);
    expect(await tdb.db('scheduler_periods').where({ period_key: 'send-celebrations:2026-11-22' }).first()).toMatchObject({ attempts: 3, done_at: null });
  });
});
