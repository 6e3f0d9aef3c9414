import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { SENT_MAIL_KEPT_DAYS } from '../../src/jobs/forget-sent-mail.js';
import { purgeSensitiveAnswers } from '../../src/jobs/purge-answers.js';
import { deliverQueuedMail, enqueueMail } from '../../src/mail/queue.js';
import { showRegistration } from '../../src/office/registrations/show.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { insertEvent, insertRegistration } from '../support/factories.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';
import { FIXED_TEST_NOW } from '../support/test-now.js';

/**
 * The weekly purge empties the body of mail sent SENT_MAIL_KEPT_DAYS ago: names, addresses, answers and the family's
 * private links stay in their inbox, not in the database. The subject stays, for `registrations show`.
 */

const DAY = 86_400_000;
const T0 = FIXED_TEST_NOW;
const mail = useSinkAndMailer({ timeoutMs: 5_000 });
let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});

describe('sent mail keeps its body for a while, then only its subject', () => {
  it(`empties sent and given-up mail ${SENT_MAIL_KEPT_DAYS} days on, keeps newer and unsent mail whole, and a dry run changes nothing`, async () => {
    const clock = new FixedClock(T0);
    const ctx = createTestContext({ db: tdb.db, mailer: mail.mailer, clock });
    const event = await insertEvent(tdb.db);
    const { id } = await insertRegistration(tdb.db, ctx.cipher, event.id, { email: 'kim@example.org', status: 'PAID' });
    const queue = (subject: string, secret: string) =>
      enqueueMail(tdb.db, ctx.cipher, { kind: 'receipt', registrationId: id, message: { to: ['kim@example.org'], subject, text: `Manage: ${secret}`, html: `<p>${secret}</p>` } }, clock.now());
    const bodyOf = async (mailId: number) => JSON.parse(ctx.cipher.decrypt((await tdb.db('queued_mail').where({ id: mailId }).first()).message_enc));

    const old = await queue('Receipt: Family Camp', 'old-private-link');
    const givenUp = await queue('Registration confirmed: Family Camp', 'given-up-private-link');
    await deliverQueuedMail(ctx, { limit: 10 });
    expect(mail.sink.messages.map((m) => m.subject).sort()).toEqual(['Receipt: Family Camp', 'Registration confirmed: Family Camp']);
    await tdb.db('queued_mail').where({ id: givenUp }).update({ status: 'FAILED', sent_at: null, last_error: 'refused' });
    // Queued as long ago, still waiting to be sent (its next try far off): never touched.
    const unsent = await queue('Payment reminder: Family Camp', 'unsent-private-link');
    await tdb.db('queued_mail').where({ id: unsent }).update({ next_attempt_at: new Date(T0.getTime() + 365 * DAY) });

    clock.set(new Date(T0.getTime() + (SENT_MAIL_KEPT_DAYS - 1) * DAY));
    const recent = await queue('Receipt again: Family Camp', 'recent-private-link');
    await deliverQueuedMail(ctx, { limit: 10 });
    expect(await tdb.db('queued_mail').where({ id: unsent }).first('status')).toEqual({ status: 'PENDING' });

    clock.set(new Date(T0.getTime() + (SENT_MAIL_KEPT_DAYS + 1) * DAY));
    const dry = await purgeSensitiveAnswers(ctx, { trigger: 'cli', dryRun: true });
    expect(dry.sentMailForgotten).toBe(2);
    expect(dry.wouldDo).toContain(`empty the body of 2 email(s) sent over ${SENT_MAIL_KEPT_DAYS} days ago, keeping the subject`);
    expect((await bodyOf(old)).text).toBe('Manage: old-private-link');

    // One this server cannot read (under a key it lacks) is left whole for a run that can: its subject is not lost.
    const [unreadable] = await tdb
      .db('queued_mail')
      .insert({ kind: 'receipt', registration_id: id, message_enc: 'v9:not-under-any-key-here', status: 'SENT', created_at: T0, sent_at: T0 })
      .returning<Array<{ id: number }>>('id');

    expect(await purgeSensitiveAnswers(ctx, { trigger: 'cli' })).toMatchObject({ outcome: 'ok', sentMailForgotten: 2 });
    expect(await tdb.db('queued_mail').where({ id: unreadable?.id }).first('message_enc', 'body_forgotten_at')).toEqual({ message_enc: 'v9:not-under-any-key-here', body_forgotten_at: null });
    expect(await bodyOf(old)).toEqual({ subject: 'Receipt: Family Camp' });
    expect(await bodyOf(givenUp)).toEqual({ subject: 'Registration confirmed: Family Camp' });
    expect(await tdb.db('queued_mail').where({ id: old }).first('status', 'body_forgotten_at')).toEqual({ status: 'SENT', body_forgotten_at: clock.now() });
    expect((await bodyOf(recent)).text).toBe('Manage: recent-private-link');
    expect((await bodyOf(unsent)).text).toBe('Manage: unsent-private-link');

    // The office still sees every email the registration was sent, by its subject.
    const shown = await showRegistration(ctx, id);
    expect(shown.emails.map((e) => e.subject)).toEqual(['Receipt: Family Camp', 'Registration confirmed: Family Camp', 'Payment reminder: Family Camp', null, 'Receipt again: Family Camp']);

    expect(await purgeSensitiveAnswers(ctx, { trigger: 'cli' })).toMatchObject({ sentMailForgotten: 0 });
  });
});
