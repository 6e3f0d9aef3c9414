import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { runCli, startCli } from '../support/cli.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { useSmtpSink } from '../support/mail-fixture.js';
import { testConfig, testEnv } from '../support/env.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

let tdb: TestDatabase;
let rejectRecipient: (address: string) => boolean = () => false;
let acceptAfterMs = 0;
const mail = useSmtpSink({ rejectRecipient: (address) => rejectRecipient(address), delayAfterData: () => acceptAfterMs });

beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb.drop();
});
beforeEach(() => {
  rejectRecipient = () => false;
  acceptAfterMs = 0;
});

const ANSI = /\u001b\[/;
const HOUR = 60 * 60_000;

/** The subprocess runs on the real clock, so "due" is relative to now. */
async function dueEventWith(addresses: string[]): Promise<{ id: string }> {
  const cipher = createFieldCipher(testConfig().keyring);
  const event = await insertEvent(tdb.db, {
    reminder_at: new Date(Date.now() - HOUR),
    starts_at: new Date(Date.now() + 48 * HOUR),
  });
  for (const email of addresses) await insertRegistration(tdb.db, cipher, event.id, { email });
  return event;
}

describe('eventops send-reminders under cron (no TTY)', () => {
  it('exits 0 and prints the JSON summary when every reminder was sent', async () => {
    const event = await dueEventWith(['cli-one@example.org', 'cli-two@example.org']);
    const env = testEnv({ DATABASE_URL: tdb.url, ...mail.sink.configEnv() });

    const result = await runCli(['send-reminders', '--json'], { env });

    expect(result.code).toBe(0);
    const summary = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ job: 'send-reminders', outcome: 'ok', dryRun: false, events: 1, sent: 2, failed: 0, skipped: 0 });
    expect(mail.sink.messages.flatMap((m) => m.envelope.to).sort()).toEqual(['cli-one@example.org', 'cli-two@example.org']);
    expect(await tdb.db('job_runs').where({ id: summary.runId }).first()).toMatchObject({ trigger: 'cli', outcome: 'ok' });
    expect((await tdb.db('events').where({ id: event.id }).first()).reminder_sent_at).not.toBeNull();
    expect(result.stdout + result.stderr).not.toMatch(ANSI);
  });

  it('exits 1 when some reminders failed (partial) and says so in the summary', async () => {
    await dueEventWith(['ok-a@example.org', 'ok-b@example.org', 'bounce@example.org']);
    rejectRecipient = (address) => address === 'bounce@example.org';
    const env = testEnv({ DATABASE_URL: tdb.url, ...mail.sink.configEnv() });

    const result = await runCli(['send-reminders', '--json'], { env });

    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ outcome: 'partial', sent: 2, failed: 1 });
    expect(result.stderr).not.toContain('bounce@example.org');
    // The progress stream ends the run as failed, not as a success a log watcher would take at its word.
    const progress = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{"label":"send-reminders"'))
      .map((line) => JSON.parse(line) as { event: string; text: string });
    expect(progress.at(-1)).toMatchObject({ event: 'fail' });
    expect(progress.at(-1)?.text).toMatch(/^partial: .*sent 2, failed 1/);
    expect(progress.some((line) => line.event === 'succeed')).toBe(false);

    const human = await runCli(['send-reminders'], { env });
    expect(human.code).toBe(0);
    expect(human.stdout).toBe('send-reminders: ok, events 0, sent 0, failed 0, skipped 0, paymentReminders 0, alreadyReminded 0\n');
  });

  it('SIGTERM (a deploy, systemd) stops the run after the sends under way and gives the claim back: the next run sends only the rest, nobody twice', async () => {
    const addresses = Array.from({ length: 40 }, (_, i) => `stop-${String(i).padStart(2, '0')}@example.org`);
    const event = await dueEventWith(addresses);
    const env = testEnv({ DATABASE_URL: tdb.url, ...mail.sink.configEnv() });
    acceptAfterMs = 150;

    const running = startCli(['send-reminders', '--json'], { env });
    await mail.sink.waitFor(3, 30_000);
    running.child.kill('SIGTERM');
    const stopped = await running.result;

    expect(stopped.signal).toBeNull();
    expect(stopped.code).toBe(1);
    const summary = JSON.parse(stopped.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ job: 'send-reminders', outcome: 'partial', stopped: true });
    const first = mail.sink.messages.flatMap((m) => m.envelope.to);
    expect(first.length).toBeLessThan(addresses.length);
    expect(await tdb.db('events').where({ id: event.id }).first()).toMatchObject({ reminder_claimed_at: null, reminder_sent_at: null });

    acceptAfterMs = 0;
    const rest = await runCli(['send-reminders', '--json'], { env });
    expect(rest.code).toBe(0);
    const all = mail.sink.messages.flatMap((m) => m.envelope.to);
    expect([...all].sort()).toEqual(addresses);
    expect(JSON.parse(rest.stdout)).toMatchObject({ outcome: 'ok', sent: addresses.length - first.length, alreadyReminded: first.length });
  });
});
