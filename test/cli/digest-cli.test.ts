import { formatInTimeZone } from 'date-fns-tz';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { getSetting } from '../../src/settings.js';
import { runCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { testConfig, testEnv } from '../support/env.js';
import { insertPerson, insertUser } from '../support/factories.js';

let tdb: TestDatabase;
let rejectRecipient: (address: string) => boolean = () => false;
const mail = useSmtpSink({ rejectRecipient: (address) => rejectRecipient(address) });

beforeAll(async () => {
  tdb = await createTestDatabase();
  const cipher = createFieldCipher(testConfig().keyring);
  await insertUser(tdb.db, cipher, { email: 'admin@example.org', name: 'Ada Admin', role: 'ADMIN' });
  await insertUser(tdb.db, cipher, { email: 'pastor@example.org', name: 'Paul Pastor', role: 'PASTOR' });
  const person = await insertPerson(tdb.db, cipher, { first_name: 'Erin', last_name: 'Expired' });
  await tdb.db('ministry_roles').insert({ person_id: person.id, role: 'Kids Church' });
  await tdb.db('clearances').insert({ person_id: person.id, kind: 'WWCC', expires_on: '2020-01-31', number_enc: cipher.encrypt('WWC0000001E') });
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(async () => {
  rejectRecipient = () => false;
  await tdb.db.raw('TRUNCATE app_settings, leases, job_runs, error_logs');
});

const env = () => testEnv({ DATABASE_URL: tdb.url, ...mail.sink.configEnv(), APP_TIMEZONE: 'Australia/Sydney' });
const thisMonth = () => formatInTimeZone(new Date(), 'Australia/Sydney', 'yyyy-MM');
const recipients = () => mail.sink.messages.flatMap((m) => m.envelope.to).sort();

describe('eventops send-clearance-digest under cron', () => {
  it('sends once a month: JSON summary with status and month, then already-sent; --force emails everyone again', async () => {
    const first = await runCli(['send-clearance-digest', '--json'], { env: env() });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ job: 'send-clearance-digest', outcome: 'ok', status: 'sent', month: thisMonth(), sent: 2 });
    expect(recipients()).toEqual(['admin@example.org', 'pastor@example.org']);

    const again = await runCli(['send-clearance-digest', '--json'], { env: env() });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'already-sent', month: thisMonth() });
    const human = await runCli(['send-clearance-digest'], { env: env() });
    expect(human.stdout).toBe(`send-clearance-digest: already sent for ${thisMonth()} (use --force to send again)\n`);
    expect(mail.sink.messages).toHaveLength(2);

    const forced = await runCli(['send-clearance-digest', '--force', '--json'], { env: env() });
    expect(forced.code).toBe(0);
    expect(JSON.parse(forced.stdout)).toMatchObject({ status: 'sent', sent: 2 });
    expect(mail.sink.messages).toHaveLength(4);
  });

  it('when the month already went out, stdout and the progress on stderr both say so, exit 0, as text and as JSON', async () => {
    expect((await runCli(['send-clearance-digest'], { env: env() })).code).toBe(0);
    const line = `already sent for ${thisMonth()} (use --force to send again)`;

    const human = await runCli(['send-clearance-digest'], { env: env() });
    expect(human.code).toBe(0);
    expect(human.stdout).toBe(`send-clearance-digest: ${line}\n`);
    expect(human.stderr).toContain(`send-clearance-digest: ${line}\n`);
    expect(human.stderr).not.toMatch(/sent 0|failed/);

    const json = await runCli(['send-clearance-digest', '--json'], { env: env() });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ outcome: 'ok', status: 'already-sent', month: thisMonth() });
    const progress = json.stderr
      .split('\n')
      .filter((entry) => entry.startsWith('{"label":"send-clearance-digest"'))
      .map((entry) => JSON.parse(entry) as { event: string; text: string });
    expect(progress.at(-1)).toEqual({ label: 'send-clearance-digest', event: 'succeed', text: line });
    expect(mail.sink.messages).toHaveLength(2);
  });

  it('with nobody to send it to, stdout and stderr both say so, and it exits 1', async () => {
    const users = await tdb.db('users').select();
    await tdb.db('users').delete();
    try {
      const result = await runCli(['send-clearance-digest'], { env: env() });
      expect(result.code).toBe(1);
      const why = 'nobody to send it to: no ADMIN or PASTOR user (add one with `eventops users add --role PASTOR`)';
      expect(result.stdout).toBe(`send-clearance-digest: failed, ${why}\n`);
      expect(result.stderr).toContain(`send-clearance-digest: failed: ${why}\n`);
      expect(result.stderr).not.toContain('failed: failed');
      expect(mail.sink.messages).toHaveLength(0);
    } finally {
      await tdb.db('users').insert(users);
    }
  });

  it('exits 1 when a recipient is refused, leaving the month open', async () => {
    rejectRecipient = (address) => address === 'pastor@example.org';

    const result = await runCli(['send-clearance-digest', '--json'], { env: env() });

    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ outcome: 'partial', status: 'partial', sent: 1, failed: 1 });
    expect(await getSetting(tdb.db, 'clearanceDigestLastMonth')).toBeUndefined();
  });

  it('exits 75 while another run holds the lease, and sends nothing', async () => {
    const now = Date.now();
    await tdb.db('leases').insert({
      name: 'clearance-digest',
      holder: 'another-host:1234',
      acquired_at: new Date(now - 60_000),
      expires_at: new Date(now + 29 * 60_000),
    });

    const result = await runCli(['send-clearance-digest'], { env: env() });

    expect(result.code).toBe(75);
    expect(result.stderr).toMatch(/another run holds "clearance-digest"/);
    expect(mail.sink.messages).toHaveLength(0);
  });
});
