import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { personIdsOfUnsubscribeToken } from '../../src/office/people/unsubscribe-link.js';
import { FixedClock } from '../../src/clock.js';
import { JobFailedError } from '../../src/jobs/run-recorded.js';
import { sendCelebrations } from '../../src/jobs/send-celebrations.js';
import { silentLogger } from '../../src/logger.js';
import { createMailer } from '../../src/mail/create.js';
import type { Mailer } from '../../src/mail/types.js';
import { createTestContext } from '../support/context.js';
import { useCelebrationsDatabase } from '../support/celebrations-db.js';
import { testConfig } from '../support/env.js';
import { insertPerson } from '../support/factories.js';
import { startMailApiServer, type MailApiServer } from '../support/mail-api-server.js';
import { useSinkAndMailer } from '../support/mail-fixture.js';

/** 22 November in Sydney. */
const SYDNEY_22_NOV = '2026-11-21T22:00:00Z';
const tdb = useCelebrationsDatabase(new Date(SYDNEY_22_NOV));
const mail = useSinkAndMailer();
const BASE = 'https://events.example.org';
const LINK = new RegExp(`${BASE.replaceAll('.', '\\.')}/celebrations/unsubscribe/([A-Za-z0-9._%-]+)`);

function context(options: { mailer?: Mailer; env?: Record<string, string | undefined> } = {}) {
  return createTestContext({
    db: tdb.db,
    mailer: options.mailer ?? mail.mailer,
    env: { AUTH_URL: BASE, ...options.env },
    clock: new FixedClock(new Date(SYDNEY_22_NOV)),
  });
}

async function person(first: string, fields: Record<string, unknown> & { email?: string }): Promise<string> {
  return (await insertPerson(tdb.db, context().cipher, { first_name: first, last_name: 'Member', ...fields })).id;
}

/** The people the link names, checked as the unsubscribe page checks it. */
const peopleOf = (url: string) => personIdsOfUnsubscribeToken(context().config.keyring, decodeURIComponent(url.split('/').at(-1) ?? ''));

/** The two headers as mailparser reads the message at the sink (unfolded, without the header name). */
async function unsubscribeHeadersOf(raw: Buffer | undefined): Promise<{ unsubscribe?: string; post?: string }> {
  const parsed = await simpleParser(raw ?? Buffer.alloc(0));
  const value = (key: string) => {
    const line = parsed.headerLines.find((header) => header.key === key)?.line;
    return line?.slice(line.indexOf(':') + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
  };
  return { unsubscribe: value('list-unsubscribe'), post: value('list-unsubscribe-post') };
}

describe('the unsubscribe link in every celebration email', () => {
  it('a birthday email has the link in its text and HTML footers and as List-Unsubscribe with one-click, naming only its person', async () => {
    const ada = await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });

    expect(await sendCelebrations(context(), { trigger: 'cli' })).toMatchObject({ outcome: 'ok', birthdays: 1 });

    const [message] = mail.sink.messages;
    const url = LINK.exec(message?.text ?? '')?.[0] ?? '';
    expect(message?.text).toContain(`Don't want these emails? Unsubscribe: ${url}\n`);
    expect(message?.html).toContain(`Don't want these emails? <a href="${url}"`);
    expect(message?.html).toMatch(/>Unsubscribe<\/a>/);
    expect(peopleOf(url)).toEqual([ada]);

    expect(await unsubscribeHeadersOf(message?.raw)).toEqual({ unsubscribe: `<${url}>`, post: 'List-Unsubscribe=One-Click' });
  });

  it('a couple’s anniversary email names both spouses, so the link stops the emails of whichever of them it reached', async () => {
    const tom = await person('Tom', { email: 'tom@example.org', wedding_date: '1996-11-22' });
    const lan = await person('Lan', { email: 'lan@example.org', wedding_date: '1996-11-22' });
    await tdb.db('people').where({ id: tom }).update({ spouse_id: lan });
    await tdb.db('people').where({ id: lan }).update({ spouse_id: tom });

    await sendCelebrations(context(), { trigger: 'cli' });

    const [message] = mail.sink.messages;
    expect(message?.envelope.to.sort()).toEqual(['lan@example.org', 'tom@example.org']);
    const url = LINK.exec(message?.text ?? '')?.[0] ?? '';
    expect(peopleOf(url)).toEqual([tom, lan].sort());
    expect(decodeURIComponent(url.split('/').at(-1) ?? '')).toHaveLength(66);
    expect(await unsubscribeHeadersOf(message?.raw)).toEqual({ unsubscribe: `<${url}>`, post: 'List-Unsubscribe=One-Click' });
  });

  it('through the mail API the same two headers go in the request', async () => {
    const api: MailApiServer = await startMailApiServer();
    const apiMailer = await createMailer(testConfig(api.configEnv()), silentLogger(), { timeoutMs: 2_000 });
    try {
      const ada = await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
      await sendCelebrations(context({ mailer: apiMailer }), { trigger: 'cli' });
      const [request] = api.sent;
      const url = LINK.exec(String(request?.body.text))?.[0] ?? '';
      expect(peopleOf(url)).toEqual([ada]);
      expect(request?.body.headers).toEqual({ 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });
    } finally {
      await apiMailer.close();
      await api.close();
    }
  });

  it('without a public URL for the link nothing is sent and nothing claimed: the run fails saying so', async () => {
    await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });

    const failed = await sendCelebrations(context({ env: { AUTH_URL: undefined, APP_URL: undefined } }), { trigger: 'cli' }).catch((e: unknown) => e);

    expect(failed).toBeInstanceOf(JobFailedError);
    expect(String((failed as Error).message)).toMatch(/public URL/);
    expect(mail.sink.messages).toHaveLength(0);
    expect(await tdb.db('celebration_claims')).toEqual([]);
    expect(await tdb.db('job_runs').pluck('outcome')).toEqual(['failed']);
  });

  it('a link whose signature was changed, or made for other ids, names nobody', async () => {
    const ada = await person('Ada', { email: 'ada@example.org', birth_date: '1990-11-22' });
    await sendCelebrations(context(), { trigger: 'cli' });
    const url = LINK.exec(mail.sink.messages[0]?.text ?? '')?.[0] ?? '';
    const token = decodeURIComponent(url.split('/').at(-1) ?? '');
    const [payload = '', signature = ''] = token.split('.');
    const payloadOf = (ids: string[]) => Buffer.from(ids.map((id) => id.replaceAll('-', '')).join(''), 'hex').toString('base64url');
    const other = '00000000-0000-4000-8000-000000000001';
    expect(payload).toBe(payloadOf([ada]));
    // 22 + 1 + 22 characters, and a couple's 43 + 1 + 22: within a path part's 100.
    expect(token).toHaveLength(45);

    for (const forged of [
      `${payload}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`,
      // The same bytes spelled otherwise (base64url's unused low bits).
      `${payload}.${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`,
      `${payloadOf([other])}.${signature}`,
      `${payloadOf([ada, other])}.${signature}`,
      `${payloadOf([ada, other, other])}.${signature}`,
      `${payload}.${signature}.${signature}`,
      payload,
      `${payload}.`,
      '',
    ]) {
      expect(personIdsOfUnsubscribeToken(context().config.keyring, forged), forged).toBeUndefined();
    }
    expect(personIdsOfUnsubscribeToken(testConfig({ ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64') }).keyring, token)).toBeUndefined();
  });
});
