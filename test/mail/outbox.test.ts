import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FixedClock } from '../../src/clock.js';
import { AppError } from '../../src/errors.js';
import { createLogger, silentLogger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/create.js';
import { testConfig } from '../support/env.js';

let cwd: string;
beforeAll(() => {
  cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-outbox-'));
});
afterAll(() => {
  fs.rmSync(cwd, { recursive: true, force: true });
});

describe('dev outbox', () => {
  it('without SMTP or a mail API outside production, writes a parseable .eml with both parts and logs its path', async () => {
    const config = testConfig({}, cwd);
    expect(config.devOutboxDir).toBe(path.join(cwd, '.eventops', 'outbox'));
    const lines: string[] = [];
    const logger = createLogger({ destination: { write: (line: string) => void lines.push(line) } });
    const mailer = await createMailer(config, logger, { clock: new FixedClock(new Date('2026-11-22T09:30:00Z')) });
    expect(mailer.kind).toBe('outbox');

    await mailer.send({
      to: ['alice@example.org'],
      subject: 'Reminder: Men’s Breakfast & Prayer!',
      html: '<p>See you <b>Saturday</b></p>',
      text: 'See you Saturday',
      attachments: [{ filename: 'event.ics', content: 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n', contentType: 'text/calendar' }],
    });
    await mailer.close();

    const files = fs.readdirSync(config.devOutboxDir as string);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^2026-11-22T09-30-00-000Z-reminder-men-s-breakfast-prayer-[0-9a-f]{8}\.eml$/);
    const file = path.join(config.devOutboxDir as string, files[0] as string);
    const raw = fs.readFileSync(file);
    expect(raw.toString()).toContain('\r\n');
    const parsed = await simpleParser(raw);
    expect(parsed.subject).toBe('Reminder: Men’s Breakfast & Prayer!');
    expect(parsed.html).toContain('<b>Saturday</b>');
    expect(parsed.text?.trim()).toBe('See you Saturday');
    expect(parsed.attachments[0]?.filename).toBe('event.ics');
    const logged = lines.map((l) => JSON.parse(l) as { msg: string; path?: string });
    expect(logged).toContainEqual(expect.objectContaining({ level: 30, path: file }));
  });
});

describe('no transport', () => {
  it('in production without SMTP or a mail API, sending fails with a clear error', async () => {
    const config = { ...testConfig({}, cwd), isProduction: true, env: 'production' as const, devOutboxDir: undefined };
    const mailer = await createMailer(config, silentLogger());
    expect(mailer.kind).toBe('none');
    const error: unknown = await mailer.send({ to: ['a@example.org'], subject: 's', html: 'h', text: 't' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('mail_not_configured');
  });
});
