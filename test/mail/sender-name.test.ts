import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { silentLogger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/create.js';
import { deliverQueuedMail, enqueueMail } from '../../src/mail/queue.js';
import { defineEmailTemplate, loadEmailBranding } from '../../src/mail/render.js';
import type { Mailer } from '../../src/mail/types.js';
import { setSetting } from '../../src/settings.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig } from '../support/env.js';
import { startMailApiServer, type MailApiServer } from '../support/mail-api-server.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

const NOW = new Date('2026-11-22T00:00:00Z');
const notice = defineEmailTemplate<{ name: string }>({ subject: 'Hello {{name}}', html: '<p>Hi {{name}}</p>', text: 'Hi {{name}}' });

let tdb: TestDatabase;
let api: MailApiServer;
const mail = useSinkAndMailer();

beforeAll(async () => {
  tdb = await createTestDatabase();
  api = await startMailApiServer();
});
afterAll(async () => {
  await api.close();
  await tdb.drop();
});
beforeEach(async () => {
  api.requests.length = 0;
  await tdb.db('queued_mail').delete();
  await tdb.db('app_settings').delete();
});

/** Renders and queues a message as the product does, then delivers the queue through `mailer`. */
async function queueAndDeliver(mailer: Mailer, env: Record<string, string> = {}): Promise<void> {
  const ctx = createTestContext({ db: tdb.db, mailer, clock: new FixedClock(NOW), env });
  const rendered = notice({ name: 'Ann' }, await loadEmailBranding(tdb.db, ctx.config));
  await enqueueMail(tdb.db, ctx.cipher, { kind: 'notice', message: { to: ['ann@example.org'], ...rendered } }, NOW);
  // Settings changed after queuing do not reach mail already queued: it goes out as it was rendered.
  await setSetting(tdb.db, 'church.name', 'Renamed Meanwhile', NOW);
  expect(await deliverQueuedMail(ctx)).toMatchObject({ sent: 1 });
}

describe('the From of every email names the church', () => {
  it('over SMTP: the church name from Settings, as it was when the message was queued, beside MAIL_FROM', async () => {
    await setSetting(tdb.db, 'church.name', "St Mark's Church", NOW);
    await queueAndDeliver(mail.mailer, mail.sink.configEnv());
    const [received] = await mail.sink.waitFor(1);
    expect(received?.from).toEqual({ name: "St Mark's Church", address: 'events@example.org' });
    expect(received?.raw.toString()).toMatch(/^From: "St Mark's Church" <events@example\.org>\r$/m);
    expect(received?.envelope.from).toBe('events@example.org');
  });

  it('over SMTP: CHURCH_NAME when Settings have no name; a name with quotes, commas or accents arrives whole', async () => {
    await queueAndDeliver(mail.mailer, mail.sink.configEnv());
    await setSetting(tdb.db, 'church.name', 'Église "Saint-Étienne", Lyon', NOW);
    await queueAndDeliver(mail.mailer, mail.sink.configEnv());
    const received = await mail.sink.waitFor(2);
    expect(received.map((m) => m.from)).toEqual([
      { name: 'Grace Community Church', address: 'events@example.org' },
      { name: 'Église "Saint-Étienne", Lyon', address: 'events@example.org' },
    ]);
  });

  it('through the mail API: `"Name" <address>`, as the SMTP header writes it', async () => {
    const apiMailer = await createMailer(testConfig(api.configEnv()), silentLogger());
    await setSetting(tdb.db, 'church.name', "St Mark's Church", NOW);
    await queueAndDeliver(apiMailer, api.configEnv());
    await setSetting(tdb.db, 'church.name', 'Grace, Hope & Love', NOW);
    await queueAndDeliver(apiMailer, api.configEnv());
    await apiMailer.close();
    expect(api.requests.map((r) => r.body.from)).toEqual([`"St Mark's Church" <events@example.org>`, '"Grace, Hope & Love" <events@example.org>']);
    expect(api.requests.map((r) => r.from)).toEqual([
      { name: "St Mark's Church", address: 'events@example.org' },
      { name: 'Grace, Hope & Love', address: 'events@example.org' },
    ]);
  });

  it('MAIL_FROM written with a display name keeps it: the administrator chose it over the church name', async () => {
    const env = { ...mail.sink.configEnv(), MAIL_FROM: '"Parish Office" <office@example.org>' };
    const named = await createMailer(testConfig(env), silentLogger(), { timeoutMs: 2_000 });
    try {
      await setSetting(tdb.db, 'church.name', "St Mark's Church", NOW);
      await queueAndDeliver(named, env);
    } finally {
      await named.close();
    }
    const [received] = await mail.sink.waitFor(1);
    expect(received?.from).toEqual({ name: 'Parish Office', address: 'office@example.org' });
  });
});
