import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/create.js';
import { MailSendError, type Mailer, type MailMessage } from '../../src/mail/types.js';
import { testConfig } from '../support/env.js';
import { startMailApiServer, type MailApiServer } from '../support/mail-api-server.js';
import { startSmtpSink } from '../support/smtp-sink.js';

let api: MailApiServer;
let mailer: Mailer;

beforeAll(async () => {
  api = await startMailApiServer();
  mailer = await createMailer(testConfig(api.configEnv()), silentLogger(), { timeoutMs: 1_000 });
});
afterAll(async () => {
  await mailer.close();
  await api.close();
});
beforeEach(() => {
  api.requests.length = 0;
});

const message: MailMessage = {
  to: ['alice@example.org'],
  cc: ['bob@example.org'],
  replyTo: 'office@example.org',
  subject: 'Your receipt',
  html: '<p>Thank you</p>',
  text: 'Thank you',
  attachments: [{ filename: 'receipt.pdf', content: Buffer.from('%PDF-1.4 test'), contentType: 'application/pdf' }],
  idempotencyKey: 'receipt-42',
};

async function sendError(m: MailMessage, target: Mailer = mailer): Promise<MailSendError> {
  const error: unknown = await target.send(m).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MailSendError);
  return error as MailSendError;
}

describe('mail API mailer', () => {
  it('is chosen over SMTP when MAILAPI_KEY is set', async () => {
    const sink = await startSmtpSink();
    try {
      const both = await createMailer(testConfig({ ...sink.configEnv(), ...api.configEnv() }), silentLogger());
      expect(both.kind).toBe('mail-api');
    } finally {
      await sink.close();
    }
  });

  it('posts the Resend-style JSON with the bearer key and an idempotency key', async () => {
    const result = await mailer.send(message);
    expect(result.accepted).toEqual(['alice@example.org', 'bob@example.org']);
    expect(result.messageId).toMatch(/^[0-9a-f-]{36}$/);
    expect(api.requests).toHaveLength(1);
    const [request] = api.requests;
    expect(request).toMatchObject({ method: 'POST', path: '/emails', authorization: `Bearer ${api.key}`, idempotencyKey: 'receipt-42' });
    expect(request?.body).toEqual({
      from: 'events@example.org',
      to: ['alice@example.org'],
      cc: ['bob@example.org'],
      reply_to: 'office@example.org',
      subject: 'Your receipt',
      html: '<p>Thank you</p>',
      text: 'Thank you',
      attachments: [{ filename: 'receipt.pdf', content: Buffer.from('%PDF-1.4 test').toString('base64'), content_type: 'application/pdf' }],
    });
  });

  it('MAIL_FROM written with a display name is sent as `Name <address>`, the name quoted unless it is only letters, digits and spaces', async () => {
    for (const [mailFrom, from, name] of [
      ['"Parish Office" <office@example.org>', 'Parish Office <office@example.org>', 'Parish Office'],
      ['"St Mark\'s, \\"Old\\" Parish" <office@example.org>', '"St Mark\'s, \\"Old\\" Parish" <office@example.org>', 'St Mark\'s, "Old" Parish'],
      ['Église Sainte Marie <office@example.org>', 'Église Sainte Marie <office@example.org>', 'Église Sainte Marie'],
      ['Église Saint-Étienne <office@example.org>', '"Église Saint-Étienne" <office@example.org>', 'Église Saint-Étienne'],
    ] as const) {
      const named = await createMailer(testConfig({ ...api.configEnv(), MAIL_FROM: mailFrom }), silentLogger());
      await named.send(message);
      const request = api.requests.at(-1);
      expect(request?.body.from).toBe(from);
      expect(request?.from).toEqual({ name, address: 'office@example.org' });
    }
  });

  it('429 and 5xx are retryable failures, not ambiguous', async () => {
    api.failNext(1, 429);
    const limited = await sendError(message);
    expect(limited).toMatchObject({ ambiguous: false, permanent: false });
    expect(limited.message).toContain('429');
    api.failNext(1, 500);
    expect(await sendError(message)).toMatchObject({ ambiguous: false, permanent: false });
    await mailer.send(message);
    expect(api.requests).toHaveLength(3);
  });

  it('408, 409 (the same idempotency key still in progress) and 425 are retryable too', async () => {
    for (const status of [408, 409, 425]) {
      api.failNext(1, status);
      expect(await sendError(message)).toMatchObject({ ambiguous: false, permanent: false });
    }
  });

  it('another 4xx is a permanent failure', async () => {
    api.failNext(1, 422);
    expect(await sendError(message)).toMatchObject({ ambiguous: false, permanent: true });
  });

  it('a wrong key is refused by the server as a permanent failure', async () => {
    const wrongKey = await createMailer(testConfig({ ...api.configEnv(), MAILAPI_KEY: 're_wrong' }), silentLogger());
    expect(await sendError(message, wrongKey)).toMatchObject({ ambiguous: false, permanent: true });
    expect(api.requests).toHaveLength(0);
  });

  it('no answer within the timeout after the request was sent is ambiguous', async () => {
    api.stallNext(1);
    const started = Date.now();
    expect(await sendError(message)).toMatchObject({ ambiguous: true });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(api.requests).toHaveLength(1);
  });

  it('an unreachable service is not ambiguous', async () => {
    const gone = await startMailApiServer();
    const env = gone.configEnv();
    await gone.close();
    const unreachable = await createMailer(testConfig(env), silentLogger(), { timeoutMs: 1_000 });
    expect(await sendError(message, unreachable)).toMatchObject({ ambiguous: false });
  });
});
