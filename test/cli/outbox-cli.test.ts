import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manageUrl } from '../../src/payments/manage-link.js';
import { runCli } from '../support/cli.js';
import { createTestContext } from '../support/context.js';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { testConfig, testEnv } from '../support/env.js';
import { insertEvent, insertRegistration } from '../support/factories.js';

const HOUR = 60 * 60_000;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await createTestDatabase();
});
afterAll(async () => {
  await tdb?.drop();
});

/** No SMTP and no mail API, outside production: mail goes to <cwd>/.eventops/outbox. */
const outboxEnv = () => testEnv({ DATABASE_URL: tdb.url, LOG_LEVEL: 'warn' });
const freshDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-outbox-cli-'));

describe('eventops outbox with nothing sent yet', () => {
  it('list says the outbox is empty (exit 0); show says there is nothing to show and what writes mail there (exit 1)', async () => {
    const cwd = freshDir();
    const list = await runCli(['outbox', 'list'], { env: outboxEnv(), cwd });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain(`the outbox (${path.join(fs.realpathSync(cwd), '.eventops', 'outbox')}) is empty`);
    const json = await runCli(['outbox', 'list', '--json'], { env: outboxEnv(), cwd });
    expect(JSON.parse(json.stdout)).toMatchObject({ messages: [] });

    const show = await runCli(['outbox', 'show', '1'], { env: outboxEnv(), cwd });
    expect(show.code).toBe(1);
    expect(show.stderr).toContain('is empty: there is no message to show');
    expect(show.stderr).toContain('suggestion: mail is written there as it is sent: `eventops send-reminders`');
  });
});

describe('eventops outbox after the product sent mail', () => {
  let cwd: string;
  let expectedLink: string;
  beforeAll(async () => {
    cwd = freshDir();
    const ctx = createTestContext({ db: tdb.db });
    const event = await insertEvent(tdb.db, { title: 'Harvest Festival', reminder_at: new Date(Date.now() - HOUR), starts_at: new Date(Date.now() + 48 * HOUR) });
    const first = await insertRegistration(tdb.db, ctx.cipher, event.id, { email: 'ruth@example.org', contact_name: 'Ruth Baker' });
    await insertRegistration(tdb.db, ctx.cipher, event.id, { email: 'boaz@example.org', contact_name: 'Boaz Miller' });
    const row = await tdb.db('registrations').where({ id: first.id }).first<{ manage_link_version: number }>('manage_link_version');
    // The family's manage link: longer than a quoted-printable line, so the .eml splits it with a soft break.
    expectedLink = manageUrl(testConfig(), { registrationId: first.id, version: row?.manage_link_version ?? 1 });
    const sent = await runCli(['send-reminders', '--json'], { env: outboxEnv(), cwd });
    expect(sent.code, sent.stderr).toBe(0);
    expect(JSON.parse(sent.stdout)).toMatchObject({ sent: 2, failed: 0 });
  });

  it('the .eml files hold the text quoted-printable: the link is not there whole', () => {
    const dir = path.join(cwd, '.eventops', 'outbox');
    const raw = fs.readdirSync(dir).map((name) => fs.readFileSync(path.join(dir, name), 'utf8')).join('\n');
    expect(raw).toContain('Content-Transfer-Encoding: quoted-printable');
    expect(raw).toMatch(/Manage your registration: http:\/\/\S*=\r?\n\S*manage\//);
    expect(raw).not.toContain(expectedLink);
  });

  it('list numbers the messages from the oldest, with date, recipient and subject on each line', async () => {
    const list = await runCli(['outbox', 'list'], { env: outboxEnv(), cwd });
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^2 messages in .*\.eventops\/outbox, oldest first \(dates in Australia\/Sydney\):$/);
    const rows = lines.slice(1, 3);
    expect(rows.map((line) => line.slice(0, 1))).toEqual(['1', '2']);
    for (const line of rows) expect(line).toMatch(/^\d {2}\d{4}-\d{2}-\d{2} \d{2}:\d{2} {2}(ruth|boaz)@example\.org {2}Reminder: Harvest Festival/);
    expect(rows.map((line) => /(ruth|boaz)@example\.org/.exec(line)?.[0]).sort()).toEqual(['boaz@example.org', 'ruth@example.org']);
    expect(lines.at(-1)).toBe('`eventops outbox show N` reads one');

    const json = JSON.parse((await runCli(['outbox', 'list', '--json'], { env: outboxEnv(), cwd })).stdout) as {
      messages: Array<{ number: number; to: string[]; subject: string; date: string; file: string }>;
    };
    expect(json.messages.map((m) => m.number)).toEqual([1, 2]);
    expect(json.messages.flatMap((m) => m.to).sort()).toEqual(['boaz@example.org', 'ruth@example.org']);
    expect(json.messages[0]?.file.endsWith('.eml')).toBe(true);
    expect(Number.isNaN(Date.parse(json.messages[0]?.date ?? ''))).toBe(false);
  });

  it('show N gives who it went to, the subject, the date, the decoded text and every link whole', async () => {
    const list = JSON.parse((await runCli(['outbox', 'list', '--json'], { env: outboxEnv(), cwd })).stdout) as { messages: Array<{ number: number; to: string[] }> };
    const ruths = list.messages.find((m) => m.to.includes('ruth@example.org'))?.number;
    const show = await runCli(['outbox', 'show', String(ruths)], { env: outboxEnv(), cwd });
    expect(show.code, show.stderr).toBe(0);
    const out = show.stdout;
    expect(out).toMatch(new RegExp(`^message ${ruths} of 2 \\(.*\\.eml\\)\\n`));
    expect(out).toContain('To:      ruth@example.org\n');
    expect(out).toContain('Subject: Reminder: Harvest Festival\n');
    expect(out).toMatch(/Date: {4}\d{4}-\d{2}-\d{2} \d{2}:\d{2} \(Australia\/Sydney\)\n/);
    // The text part, decoded: the link on one line, its soft line break gone.
    expect(out).toContain(`Manage your registration: ${expectedLink}\n`);
    expect(out).not.toMatch(/=\r?\n/);
    const links = out.slice(out.indexOf('\nLinks:\n'));
    expect(links).toContain(`] ${expectedLink}\n`);

    const json = JSON.parse((await runCli(['outbox', 'show', String(ruths), '--json'], { env: outboxEnv(), cwd })).stdout) as { to: string[]; links: string[]; text: string };
    expect(json.to).toEqual(['ruth@example.org']);
    expect(json.links).toContain(expectedLink);
    expect(json.text).toContain(expectedLink);
  });

  it('show without a number shows the newest message', async () => {
    const newest = await runCli(['outbox', 'show'], { env: outboxEnv(), cwd });
    expect(newest.code).toBe(0);
    expect(newest.stdout).toMatch(/^message 2 of 2 /);
  });

  it('a number the outbox does not hold is refused with how to find the right one (exit 1); a number that is not one is a usage error (exit 2)', async () => {
    const missing = await runCli(['outbox', 'show', '3'], { env: outboxEnv(), cwd });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('there is no message 3: the outbox holds 2 (1 to 2)');
    expect(missing.stderr).toContain('suggestion: `eventops outbox list` numbers them');
    const missingJson = await runCli(['outbox', 'show', '3', '--json'], { env: outboxEnv(), cwd });
    expect(JSON.parse(missingJson.stderr)).toMatchObject({ error: { code: 'not_found', exitCode: 1 } });
    for (const bad of ['0', 'two', '1.5']) {
      const refused = await runCli(['outbox', 'show', bad], { env: outboxEnv(), cwd });
      expect(refused.code, bad).toBe(2);
      expect(refused.stderr, bad).toContain('invalid arguments: <number>');
    }
  });
});

describe('eventops outbox where mail does not go to files', () => {
  it('with SMTP or a mail API configured it says where mail goes instead (exit 1), and reads nothing', async () => {
    const cwd = freshDir();
    const smtp = await runCli(['outbox', 'list'], { env: testEnv({ SMTP_USER: 'office@grace.example.org', SMTP_APP_PASSWORD: 'app-password-123', SMTP_HOST: 'smtp.example.org' }), cwd });
    expect(smtp.code).toBe(1);
    expect(smtp.stderr).toContain('mail goes to SMTP (smtp.example.org:465 as office@grace.example.org), not to files: there is no outbox to read');
    expect(smtp.stderr).toContain('suggestion: ');
    const api = await runCli(['outbox', 'show', '1'], { env: testEnv({ MAILAPI_KEY: 're_test_key', MAIL_FROM: 'office@grace.example.org' }), cwd });
    expect(api.code).toBe(1);
    expect(api.stderr).toContain('mail goes to the mail API (MAILAPI_KEY), not to files');
    expect(fs.existsSync(path.join(cwd, '.eventops', 'outbox'))).toBe(false);
  });
});
