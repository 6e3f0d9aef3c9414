import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { textEncodingFor } from '../../src/mail/compose.js';
import { createMailer } from '../../src/mail/create.js';
import { MailSendError, type MailMessage } from '../../src/mail/types.js';
import { testConfig } from '../support/env.js';
import { startSmtpSink } from '../support/smtp-sink.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

const mail = useSinkAndMailer({
  rejectRecipient: (address) => address.startsWith('nobody'),
  dropOnRecipient: (address) => address.startsWith('hangup'),
  dropAfterData: (message) => message.subject.includes('[drop]'),
  stallAfterData: (message) => message.subject.includes('[stall]'),
  timeoutMs: 1_000,
});

const message = (overrides: Partial<MailMessage> = {}): MailMessage => ({
  to: ['alice@example.org'],
  subject: 'Your receipt',
  html: '<p>Thank you for <strong>registering</strong>.</p>',
  text: 'Thank you for registering.',
  ...overrides,
});

async function sendError(m: MailMessage): Promise<MailSendError> {
  const error: unknown = await mail.mailer.send(m).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(MailSendError);
  return error as MailSendError;
}

describe('SMTP mail.mailer', () => {
  it('is chosen when SMTP credentials are configured', () => {
    expect(mail.mailer.kind).toBe('smtp');
  });

  it('delivers an HTML part, a plain-text part and an attachment from MAIL_FROM', async () => {
    const result = await mail.mailer.send(
      message({
        cc: ['bob@example.org'],
        replyTo: 'office@example.org',
        attachments: [{ filename: 'receipt.pdf', content: Buffer.from('%PDF-1.4 test'), contentType: 'application/pdf' }],
      }),
    );
    expect(result.accepted).toEqual(['alice@example.org', 'bob@example.org']);
    expect(result.rejected).toEqual([]);
    const [received] = await mail.sink.waitFor(1);
    expect(received?.envelope).toEqual({ from: 'events@example.org', to: ['alice@example.org', 'bob@example.org'] });
    expect(received?.subject).toBe('Your receipt');
    expect(received?.html).toContain('<strong>registering</strong>');
    expect(received?.text.trim()).toBe('Thank you for registering.');
    expect(received?.attachments).toHaveLength(1);
    expect(received?.attachments[0]).toMatchObject({ filename: 'receipt.pdf', contentType: 'application/pdf' });
    expect(received?.attachments[0]?.content.toString()).toBe('%PDF-1.4 test');
    expect(received?.raw.toString()).toMatch(/^Reply-To: office@example\.org/m);
  });

  it('bodies are quoted-printable when Latin letters outnumber other characters, else base64, and both arrive exactly as written', async () => {
    const english = 'Zoë, thank you for registering for the café night. '.repeat(40);
    const japanese = '教会のファミリーキャンプへのお申し込みありがとうございます。'.repeat(40);
    await mail.mailer.send(message({ subject: 'Your receipt', html: `<p>${english}</p>`, text: english }));
    await mail.mailer.send(message({ subject: 'お申し込みの確認', html: `<p>${japanese}</p>`, text: japanese }));

    const [latin, other] = await mail.sink.waitFor(2);
    expect(latin?.raw.toString()).toMatch(/^Content-Transfer-Encoding: quoted-printable$/m);
    expect(latin?.raw.toString()).not.toMatch(/^Content-Transfer-Encoding: base64$/m);
    expect(latin?.text.trim()).toBe(english.trim());
    expect(other?.raw.toString()).toMatch(/^Content-Transfer-Encoding: base64$/m);
    expect(other?.raw.toString()).not.toMatch(/^Content-Transfer-Encoding: quoted-printable$/m);
    expect(other?.text.trim()).toBe(japanese);
    expect(other?.subject).toBe('お申し込みの確認');
  });

  it('the encoding is chosen by counting Latin letters against other characters, as nodemailer would', () => {
    expect(textEncodingFor('Plain English text')).toBe('quoted-printable');
    expect(textEncodingFor('教会', 'ab')).toBe('base64');
    expect(textEncodingFor('教会', 'abc')).toBe('quoted-printable');
    expect(textEncodingFor('')).toBe('base64');
  });

  it('a refused only recipient fails permanently, not ambiguous, naming the address', async () => {
    const error = await sendError(message({ to: ['nobody@example.org'] }));
    expect(error.ambiguous).toBe(false);
    expect(error.permanent).toBe(true);
    expect(error.rejected).toEqual(['nobody@example.org']);
    expect(mail.sink.messages).toHaveLength(0);
  });

  it('a partly refused recipient list is sent to the others and reports the refused one', async () => {
    const result = await mail.mailer.send(message({ to: ['alice@example.org', 'nobody@example.org'] }));
    expect(result.accepted).toEqual(['alice@example.org']);
    expect(result.rejected).toEqual(['nobody@example.org']);
    const [received] = await mail.sink.waitFor(1);
    expect(received?.envelope.to).toEqual(['alice@example.org']);
  });

  it('a connection dropped after the message was sent is ambiguous', async () => {
    const error = await sendError(message({ subject: 'Receipt [drop]' }));
    expect(error.ambiguous).toBe(true);
    expect(mail.sink.unanswered.map((m) => m.subject)).toEqual(['Receipt [drop]']);
  });

  it('a server that never answers the message times out as ambiguous instead of hanging', async () => {
    const started = Date.now();
    const error = await sendError(message({ subject: 'Receipt [stall]' }));
    expect(error.ambiguous).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('a connection dropped before the message was sent is not ambiguous', async () => {
    const error = await sendError(message({ to: ['hangup@example.org'] }));
    expect(error.ambiguous).toBe(false);
    expect(error.permanent).toBe(false);
    expect(mail.sink.unanswered).toHaveLength(0);
  });

  it('the pool keeps working after a failed send', async () => {
    await sendError(message({ subject: 'Receipt [drop]' }));
    await mail.mailer.send(message({ subject: 'After the drop' }));
    const [received] = await mail.sink.waitFor(1);
    expect(received?.subject).toBe('After the drop');
  });
});

describe('the sender an administrator named', () => {
  it('MAIL_FROM written with a display name is the From as written, quoted or encoded as the header needs', async () => {
    for (const [mailFrom, name] of [
      ['"Parish Office" <office@example.org>', 'Parish Office'],
      ['"St Mark\'s, \\"Old\\" Parish" <office@example.org>', 'St Mark\'s, "Old" Parish'],
      ['Église Saint-Étienne <office@example.org>', 'Église Saint-Étienne'],
    ] as const) {
      const named = await createMailer(testConfig({ ...mail.sink.configEnv(), MAIL_FROM: mailFrom }), silentLogger(), { timeoutMs: 1_000 });
      try {
        await named.send(message());
      } finally {
        await named.close();
      }
      const [received] = await mail.sink.waitFor(1);
      expect(received?.from).toEqual({ name, address: 'office@example.org' });
      expect(received?.envelope.from).toBe('office@example.org');
      mail.sink.clear();
    }
  });
});

describe('SMTP failures before the message is sent', () => {
  it('an unreachable server fails without ambiguity', async () => {
    const closed = await startSmtpSink();
    const env = closed.configEnv();
    await closed.close();
    const unreachable = await createMailer(testConfig(env), silentLogger(), { timeoutMs: 1_000 });
    try {
      const error: unknown = await unreachable.send(message()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MailSendError);
      expect((error as MailSendError).ambiguous).toBe(false);
    } finally {
      await unreachable.close();
    }
  });
});
