import { Readable } from 'node:stream';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { describe, expect, it } from 'vitest';
import { paymentReminderEmail, eventReminderEmail } from '../../src/jobs/templates/reminders.js';
import { anniversaryEmail } from '../../src/jobs/templates/celebrations.js';
import { toNodemailerOptions } from '../../src/mail/compose.js';
import { messageBytes, messageInOnePass } from '../../src/mail/mime-bytes.js';
import type { EmailBranding } from '../../src/mail/render.js';
import type { MailMessage } from '../../src/mail/types.js';

const branding: EmailBranding = {
  identity: { name: 'Église Sainte-Marie 聖マリア教会', address: '1 Main St, Springfield NSW 2000', abn: '12 345 678 901', website: 'https://example.org' },
  theme: { primary: '#1d4ed8' },
  regional: { locale: 'en-AU', currency: 'AUD', timeZone: 'Australia/Sydney' },
} as EmailBranding;
const event = { title: 'Family Camp — Été 2026', startsAt: new Date('2026-12-05T08:00:00Z'), location: 'Church Hall, 1 Main St' };
const calendar = {
  filename: 'event.ics',
  content: 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:PUBLISH\r\nSUMMARY:Family Camp\r\nEND:VCALENDAR\r\n',
  contentType: 'text/calendar; method=PUBLISH; charset=utf-8',
};

const compose = (message: MailMessage) =>
  new MailComposer(toNodemailerOptions(message, { name: 'Grace Church', address: 'events@example.org' }, '<id-1@example.org>')).compile();

/** nodemailer's own streamed build of the same compiled message is the reference. */
async function bothWays(message: MailMessage): Promise<{ ours: string; nodemailers: string }> {
  const mime = compose(message);
  const onePass = messageInOnePass(mime);
  expect(onePass).toBeDefined();
  const nodemailers = (await mime.build()).toString('utf8');
  return { ours: onePass?.toString('utf8') ?? '', nodemailers };
}

describe('message bytes written in one pass', () => {
  it('are exactly what nodemailer streams for an event reminder with its calendar file, non-Latin names and long lines', async () => {
    const rendered = eventReminderEmail({ name: 'Zoë 김민준 '.repeat(12), event, manageUrl: `https://example.org/manage/${'a'.repeat(120)}` }, branding);
    const { ours, nodemailers } = await bothWays({ to: ['zoe@example.org'], ...rendered, attachments: [calendar] });
    expect(ours).toBe(nodemailers);
    expect(ours).toContain('Content-Type: multipart/mixed');
    expect(ours).toContain('Content-Type: text/calendar; method=PUBLISH; charset=utf-8');
  });

  it('are exactly what nodemailer streams for a payment reminder and for a couple’s anniversary (two recipients, no attachment)', async () => {
    const payment = paymentReminderEmail(
      { name: 'Pat', event, amountMinor: 12_500, reference: 'REG-ABC123', bank: { accountName: 'Grace', bsb: '062-000', accountNumber: '1234 5678' } },
      branding,
    );
    const couple = anniversaryEmail({ greeting: 'Tom and Lan', yearsMarried: '30 years', yearsOrdinal: '30th' }, branding);
    for (const message of [
      { to: ['pat@example.org'], ...payment },
      { to: ['tom@example.org', 'lan@example.org'], cc: ['office@example.org'], replyTo: 'office@example.org', ...couple },
    ]) {
      const { ours, nodemailers } = await bothWays(message);
      expect(ours).toBe(nodemailers);
    }
  });

  it('a celebration with its unsubscribe link in the footers and the List-Unsubscribe headers (the long link folded onto a line of its own) comes out the same', async () => {
    const unsubscribeUrl = `https://example.org/celebrations/unsubscribe/${'0b6e0e34-5f0a-4a43-9d57-2f0a7c1d3b1e.'.repeat(2)}${'A'.repeat(43)}`;
    const couple = anniversaryEmail({ greeting: 'Tom and Lan', yearsMarried: '30 years', yearsOrdinal: '30th' }, branding, { unsubscribeUrl });
    const { ours, nodemailers } = await bothWays({ to: ['tom@example.org', 'lan@example.org'], ...couple });
    expect(ours).toBe(nodemailers);
    expect(ours).toContain(`List-Unsubscribe:\r\n <${unsubscribeUrl}>\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n`);
  });

  it('a plain ASCII text part with short lines (sent as 7bit) and an empty HTML part come out the same too', async () => {
    const { ours, nodemailers } = await bothWays({ to: ['a@example.org'], subject: 'Hi', text: 'Short line.\nAnother.', html: '' });
    expect(ours).toBe(nodemailers);
  });

  it('base64 attachments of every length modulo 3, and lines of exactly 76 characters, come out the same', async () => {
    // 57 bytes make one full 76-character line of base64.
    for (const length of [0, 1, 2, 3, 56, 57, 58, 59, 114, 301]) {
      const { ours, nodemailers } = await bothWays({
        to: ['a@example.org'],
        subject: 'Report',
        text: 'Attached.',
        html: '<p>Attached.</p>',
        attachments: [{ filename: 'report.bin', content: Buffer.from(Array.from({ length }, (_, i) => (i * 7) % 256)), contentType: 'application/octet-stream' }],
      });
      expect(ours).toBe(nodemailers);
      expect(ours).toContain('Content-Transfer-Encoding: base64');
    }
  });

  it('content nodemailer has to fetch or stream is left to its own build', async () => {
    const mime = new MailComposer({
      from: 'events@example.org',
      to: 'a@example.org',
      subject: 'Streamed',
      text: 'Text.',
      attachments: [{ filename: 'a.bin', content: Readable.from([Buffer.from('streamed content')]), contentType: 'application/octet-stream' }],
    }).compile();
    expect(messageInOnePass(mime)).toBeUndefined();
    expect((await messageBytes(mime)).toString('utf8')).toContain(Buffer.from('streamed content').toString('base64'));
  });
});
