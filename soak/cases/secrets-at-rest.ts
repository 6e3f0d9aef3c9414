import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { importPeople } from '../../src/office/people-import.js';
import { FixedClock } from '../../src/clock.js';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { ENCRYPTED_COLUMNS } from '../../src/crypto/rotate.js';
import { purgeSensitiveAnswers } from '../../src/jobs/purge-answers.js';
import { createOutboxMailer } from '../../src/mail/outbox.js';
import { setAdminSetting } from '../../src/office/settings.js';
import { deliverQueuedMail } from '../../src/mail/queue.js';
import { registrationToken } from '../../src/payments/links.js';
import { runCli } from '../../test/support/cli.js';
import { TEST_KEYS, testConfig } from '../../test/support/env.js';
import { insertEvent } from '../../test/support/factories.js';
import { insertAnsweredRegistration, setEventQuestions } from '../../test/support/answered-registration.js';
import type { Question } from '../../src/registrations/answers.js';
import { startPaymentsHarness, type PaymentsHarness } from '../../test/support/payments-harness.js';
import { startSmtpSink, type SmtpSink } from '../../test/support/smtp-sink.js';
import { completedSession, postWebhook, signedDelivery } from '../../test/support/webhook-events.js';

/**
 * Case 8, secrets and data at rest: a representative flow — first-admin setup,
 * people import, a bank-transfer registration paid later with pay-now, a card
 * registration paid on the provider's page, a payment that ends in an alert,
 * every mail job through the cron endpoints, queued mail delivered, keys
 * rotated with the command — with every log line captured and every request
 * carrying spoofed Host, Origin and X-Forwarded-Host headers; a camp registration
 * answers its questions, an allergy and a date of birth among them (sensitive); a card
 * registration for a day event answers them too and ends UNFULFILLED (its payload kept), and
 * after the day event's retention the purge runs. Afterwards: which secrets and member details
 * reached the logs or sit in plain text in the database, whether the purged allergy is anywhere
 * in it even decrypted with the keys, and where every redirect pointed.
 */

export const PUBLIC_URL = 'https://church.example.org';

export const SECRETS = {
  AUTH_SECRET: 'auth-secret-7Hq2-for-the-secrets-at-rest-case-0001',
  ENCRYPTION_KEY: TEST_KEYS.v1,
  ENCRYPTION_KEY_V2: TEST_KEYS.v2,
  CRON_SECRET: 'cron-secret-Zp4W-secrets-at-rest',
  SETUP_TOKEN: 'setup-token-Lm8R-secrets-at-rest',
  SMTP_APP_PASSWORD: 'smtp-app-password-Qe5T-secrets',
  WEBSITE_SYNC_SECRET: 'website-sync-secret-Vb1N-secrets',
  TRACKER_TOKEN: 'ghp_trackerTokenSecretsAtRest0001',
} as const;

/** Headers an attacker controls: none may steer a link or redirect. */
export const SPOOFED_HEADERS = {
  host: 'evil.example.net',
  origin: 'https://evil.example.net',
  'x-forwarded-host': 'evil.example.net',
  'x-forwarded-proto': 'http',
};

export const MEMBERS = [
  { first: 'Anna', last: 'Quill', email: 'anna.quill.member@example.org', mobile: '0412 555 101', birth: '1985-11-22', wedding: '2010-11-22', spouse: 'ben.quill.member@example.org', role: 'Kids Church', clearance: 'WWC7712345E', expires: '2026-01-01' },
  { first: 'Ben', last: 'Quill', email: 'ben.quill.member@example.org', mobile: '+61 400 555 202', birth: '1983-07-30', wedding: '2010-11-22', spouse: '', role: 'Music', clearance: '', expires: '' },
  { first: 'Cara', last: 'Stone', email: 'cara.stone.member@example.org', mobile: '0400 555 303', birth: '1990-11-22', wedding: '', spouse: '', role: '', clearance: '', expires: '' },
];

export const REGISTRANTS = {
  bank: { name: 'Dana Bank', email: 'dana.bank.payer@example.org', mobile: '0411 555 404' },
  pending: { name: 'Eli Pending', email: 'eli.pending.payer@example.org', mobile: '0411 555 505' },
  card: { name: 'Fay Card', email: 'fay.card.payer@example.org', mobile: '0411 555 606' },
  mismatch: { name: 'Gus Alert', email: 'gus.alert.payer@example.org', mobile: '0411 555 707' },
};

export const ADMIN_EMAIL = 'pastor.admin@example.org';

/** A registration's answers: the sensitive ones must sit encrypted, the plain one in plain text (proving the search finds what is there). */
export const ANSWERS = {
  contact: { name: 'Ivy Answers', email: 'ivy.answers.payer@example.org' },
  allergy: 'Quillwort pollen and cashew allergy, EpiPen in the red bag',
  dateOfBirth: '2014-02-27',
  plainDiet: 'Gluten-free pasta please (soak marker 5521)',
  /** Answered on a card registration kept without a registration (UNFULFILLED), then purged: gone even from the payload. */
  purgedAllergy: 'Bee sting allergy, purged after the day (soak marker 7734)',
  purgedPlainDiet: 'Halal meals (soak marker 7735)',
};

/** When the purge runs: past the day event's retention (0 days after 5 December 2026), within the camp's (30). */
const PURGE_AT = new Date('2026-12-10T00:00:00Z');

const CAMP_QUESTIONS: Question[] = [
  { id: 'diet', label: 'Dietary needs', type: 'text', appliesTo: 'attendee' },
  { id: 'allergies', label: 'Allergies', type: 'longtext', appliesTo: 'attendee', sensitive: true },
];

export interface SecretsFlowResult {
  /** Every log line: the server's and services' pino output, plus the commands' stdout and stderr. */
  logText: string;
  logLines: number;
  /** Every text, varchar and json(b) value in the database, with where it sits. */
  dump: Array<{ table: string; column: string; value: string }>;
  /** Every encrypted value, decrypted with the keys: what someone holding a dump and the keys reads. */
  decrypted: Array<{ table: string; column: string; value: string }>;
  /** Registration tokens issued during the flow (bearer credentials in links). */
  registrationTokens: string[];
  /** Location headers of every 303 answered by our server, and the provider's success/cancel URLs. */
  redirects: Array<{ what: string; location: string }>;
  /** Absolute links in the emails the sink received. */
  mailLinks: string[];
  mailCount: number;
  /** The provider's hosted-page base (card redirects go there, as they must). */
  providerBase: string;
  /** Statuses of the steps, to prove the flow really ran. */
  steps: Record<string, number | string>;
  /** The secret comparisons the flow exercised, answered as expected. */
  refusals: Record<string, number>;
  /** Permission bits (octal) of the files a developer machine keeps secrets and mail in. */
  fileModes: Record<string, string>;
}

export interface Leak {
  where: 'log' | 'database';
  what: string;
  detail: string;
}

export async function runSecretsFlow(): Promise<SecretsFlowResult> {
  const sink = await startSmtpSink();
  const harness = await startPaymentsHarness({
    captureLogs: true,
    admin: false,
    realMailer: true,
    env: {
      ...sink.configEnv(),
      SMTP_APP_PASSWORD: SECRETS.SMTP_APP_PASSWORD,
      AUTH_SECRET: SECRETS.AUTH_SECRET,
      AUTH_URL: PUBLIC_URL,
      CRON_SECRET: SECRETS.CRON_SECRET,
      SETUP_TOKEN: SECRETS.SETUP_TOKEN,
      CLEARANCE_DIGEST: 'true',
      // Trusting the proxy makes X-Forwarded-Host reach the request: links must still ignore it.
      TRUST_PROXY: 'true',
      WEBSITE_SYNC_URL: 'http://127.0.0.1:9/eventops-hook',
      WEBSITE_SYNC_SECRET: SECRETS.WEBSITE_SYNC_SECRET,
      TRACKER_TOKEN: SECRETS.TRACKER_TOKEN,
      TRACKER_REPO: 'grace-church/eventops-issues',
      TRACKER_API_URL: 'http://127.0.0.1:9',
    },
  });
  try {
    return await flow(harness, sink);
  } finally {
    await harness.close();
    await sink.close();
  }
}

async function flow(harness: PaymentsHarness, sink: SmtpSink): Promise<SecretsFlowResult> {
  const { ctx, server, provider, tdb } = harness;
  const base = server.url;
  const steps: Record<string, number | string> = {};
  const refusals: Record<string, number> = {};
  const redirects: SecretsFlowResult['redirects'] = [];
  const commandOutput: string[] = [];

  const request = async (what: string, url: string, init: RequestInit = {}) => {
    const response = await fetch(url, { redirect: 'manual', ...init, headers: { ...SPOOFED_HEADERS, ...(init.headers as Record<string, string>) } });
    const location = response.headers.get('location');
    if (location) redirects.push({ what, location });
    steps[what] = response.status;
    return { response, text: await response.text() };
  };
  const form = (fields: Array<[string, string]>) => ({
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });

  // First administrator, after one wrong token.
  refusals.setup = (await request('setup wrong token', `${base}/setup`, form([['token', 'guess'], ['name', 'Pat Pastor'], ['email', ADMIN_EMAIL]]))).response.status;
  await request('setup', `${base}/setup`, form([['token', SECRETS.SETUP_TOKEN], ['name', 'Pat Pastor'], ['email', ADMIN_EMAIL]]));

  // Members, settings, an event whose reminder is due.
  for (const [key, value] of [
    ['celebrations.birthdays', 'true'],
    ['celebrations.anniversaries', 'true'],
    ['bank.accountName', 'Grace Community Church'],
    ['bank.bsb', '062-000'],
    ['bank.accountNumber', '12345678'],
  ] as const) {
    await setAdminSetting(ctx, key, value);
  }
  const csv = [
    'first_name,last_name,email,mobile,birth_date,wedding_date,spouse_email,ministry_role,clearance_kind,clearance_number,clearance_expires',
    ...MEMBERS.map((m) =>
      [m.first, m.last, m.email, m.mobile, m.birth, m.wedding, m.spouse, m.role, m.clearance ? 'WWCC' : '', m.clearance, m.expires].join(','),
    ),
  ].join('\n');
  steps.people = (await importPeople(ctx, csv)).created;
  const event = await insertEvent(tdb.db, {
    title: 'Family Camp',
    capacity: 20,
    online_payment: true,
    pass_card_fee: true,
    reminder_at: new Date(ctx.clock.now().getTime() - 3_600_000),
  });
  const soldOut = await insertEvent(tdb.db, { title: 'Tiny Retreat', capacity: 1, online_payment: true });

  // A camp registration with answers, stored as the form stores them, before the keys are rotated.
  await setEventQuestions(tdb.db, event.id, CAMP_QUESTIONS);
  await insertAnsweredRegistration(tdb.db, ctx.cipher, {
    eventId: event.id,
    questions: CAMP_QUESTIONS,
    contact: ANSWERS.contact,
    attendees: [{ name: 'Ivy Answers', tier: 'adult' }],
    answers: { registration: {}, attendees: [{ diet: ANSWERS.plainDiet, allergies: ANSWERS.allergy, dateOfBirth: ANSWERS.dateOfBirth }] },
    now: ctx.clock.now(),
  });

  const register = (what: string, slug: string, who: { name: string; email: string; mobile: string }, payment: 'bank' | 'card') =>
    request(
      what,
      `${base}/events/${slug}/register`,
      form([
        ['name', who.name],
        ['email', who.email],
        ['mobile', who.mobile],
        ['payment', payment],
        ['attendee_name', who.name],
        ['attendee_tier', 'adult'],
      ]),
    );
  const payOnProvider = async (what: string, providerUrl: string) => {
    const response = await fetch(providerUrl, { method: 'POST', redirect: 'manual' });
    steps[what] = response.status;
    redirects.push({ what: `${what} (provider → success page)`, location: response.headers.get('location') ?? '' });
  };

  // Bank transfer, later paid with pay-now; another left owing (payment reminder with a pay-now link).
  await register('register bank', event.slug, REGISTRANTS.bank, 'bank');
  await register('register bank (stays owing)', event.slug, REGISTRANTS.pending, 'bank');
  const bankRow = await registrationOf(harness, REGISTRANTS.bank.email, event.id);
  const token = registrationToken(SECRETS.AUTH_SECRET, bankRow, 1);
  refusals.registrationToken = (await request('registration page wrong token', `${base}/registrations/${bankRow}?token=${'0'.repeat(64)}`)).response.status;
  await request('registration page', `${base}/registrations/${bankRow}?token=${token}`);
  await request('pay-now page', `${base}/registrations/${bankRow}/pay?token=${token}`);
  const payNow = await request('pay-now', `${base}/registrations/${bankRow}/pay`, form([['token', token]]));
  await payOnProvider('pay-now paid', payNow.response.headers.get('location') ?? '');

  // Card registration paid on the provider's page, then its success page.
  const card = await register('register card', event.slug, REGISTRANTS.card, 'card');
  const cardUrl = card.response.headers.get('location') ?? '';
  await payOnProvider('card paid', cardUrl);
  const cardSession = cardUrl.split('/pay/')[1] ?? '';
  await request('success page', `${base}/events/${event.slug}/success?session_id=${cardSession}`);

  // A card registration for a day event with answers, kept without a registration (the provider reports another amount):
  // UNFULFILLED, its payload (answers included) kept for the office, until the purge after the day.
  const dayEvent = await insertEvent(tdb.db, { title: 'Day Out', capacity: 10, online_payment: true, sensitive_retention_days: 0 });
  await setEventQuestions(tdb.db, dayEvent.id, CAMP_QUESTIONS);
  await request(
    'register card with answers (kept unfulfilled)',
    `${base}/events/${dayEvent.slug}/register`,
    form([
      ['name', ANSWERS.contact.name],
      ['email', ANSWERS.contact.email],
      ['payment', 'card'],
      ['attendee_name', ANSWERS.contact.name],
      ['attendee_tier', 'adult'],
      ['q.0.diet', ANSWERS.purgedPlainDiet],
      ['q.0.allergies', ANSWERS.purgedAllergy],
    ]),
  );
  const kept = await tdb.db('checkout_sessions').where({ event_id: dayEvent.id }).first<{ id: string; provider_session_id: string; net_minor: number }>();
  const mismatch = completedSession({ checkoutId: kept.id, providerSessionId: kept.provider_session_id, eventId: dayEvent.id, amountTotal: kept.net_minor + 1 });
  steps['day event card payment (amount differs)'] = (await postWebhook(base, signedDelivery('checkout.session.completed', mismatch))).status;
  steps['day event checkout'] = (await tdb.db('checkout_sessions').where({ id: kept.id }).first<{ status: string }>()).status;

  // A payment that cannot be honoured: the seat went to someone else first, so it ends UNFULFILLED with an alert.
  const late = await register('register card (will sell out)', soldOut.slug, REGISTRANTS.mismatch, 'card');
  await register('register bank (takes the last seat)', soldOut.slug, { name: 'Hal Seat', email: 'hal.seat.payer@example.org', mobile: '0411 555 808' }, 'bank');
  await payOnProvider('sold-out card paid', late.response.headers.get('location') ?? '');

  // Every mail job through its endpoint, after one wrong bearer.
  const cron = (job: string, bearer: string = SECRETS.CRON_SECRET) =>
    request(`cron ${job}`, `${base}/api/cron/${job}`, { method: 'POST', headers: { authorization: `Bearer ${bearer}` } });
  refusals.cronBearer = (await cron('sweep-checkouts', 'not-the-secret')).response.status;
  for (const job of ['send-reminders', 'send-celebrations', 'send-clearance-digest?force=1', 'sweep-checkouts']) await cron(job);
  const delivered = await deliverQueuedMail(ctx, { limit: 100 });
  steps['queued mail sent'] = delivered.sent;

  // Keys rotated with the command, as an operator would.
  const cliEnv = {
    NODE_ENV: 'test',
    DATABASE_URL: tdb.url,
    AUTH_SECRET: SECRETS.AUTH_SECRET,
    AUTH_URL: PUBLIC_URL,
    ENCRYPTION_KEY: SECRETS.ENCRYPTION_KEY,
    ENCRYPTION_KEY_V1: SECRETS.ENCRYPTION_KEY,
    ENCRYPTION_KEY_V2: SECRETS.ENCRYPTION_KEY_V2,
    ENCRYPTION_KEY_ID: 'v2',
    CRON_SECRET: SECRETS.CRON_SECRET,
    SETUP_TOKEN: SECRETS.SETUP_TOKEN,
    ...provider.configEnv(),
    SMTP_USER: 'sink-user@example.org',
    SMTP_APP_PASSWORD: SECRETS.SMTP_APP_PASSWORD,
    SMTP_HOST: '127.0.0.1',
    SMTP_PORT: '9',
  };
  for (const args of [['rotate-keys'], ['rotate-keys', '--apply', '--confirm', '--json'], ['status'], ['config', 'check']]) {
    const result = await runCli(args, { env: cliEnv });
    steps[`eventops ${args.join(' ')}`] = result.code ?? -1;
    commandOutput.push(result.stdout, result.stderr);
  }
  const fileModes = await developerFileModes(harness, commandOutput);

  // The weekly purge, after the day event's retention: its answers go wherever they are stored.
  const purge = await purgeSensitiveAnswers({ ...ctx, cipher: rotatedCipher(), clock: new FixedClock(PURGE_AT) }, { trigger: 'cli' });
  steps['purge-answers checkout payloads'] = purge.checkoutsPurged;

  const registrationIds = (await tdb.db('registrations').select<Array<{ id: string }>>('id')).map((r) => r.id);
  const mailLinks = sink.messages.flatMap((m) => [...`${m.text}\n${m.html}`.matchAll(/https?:\/\/[^\s"'<>)]+/g)].map((x) => x[0]));
  for (const session of provider.sessions.values()) {
    redirects.push({ what: 'provider success_url', location: String(session.success_url) });
    if (session.cancel_url) redirects.push({ what: 'provider cancel_url', location: String(session.cancel_url) });
  }
  return {
    logText: [harness.logs.text(), ...commandOutput].join('\n'),
    logLines: harness.logs.lines.length,
    dump: await dumpDatabase(harness),
    decrypted: await decryptDatabase(harness),
    registrationTokens: registrationIds.map((id) => registrationToken(SECRETS.AUTH_SECRET, id, 1)),
    redirects,
    mailLinks,
    mailCount: sink.messages.length,
    providerBase: provider.apiBase,
    steps,
    refusals,
    fileModes,
  };
}

/** A developer's `eventops init` and the development outbox: the .env holds secrets, the .eml files member details. */
async function developerFileModes(harness: PaymentsHarness, commandOutput: string[]): Promise<Record<string, string>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'eventops-modes-'));
  try {
    const init = await runCli(['init'], { cwd: dir, env: {} });
    commandOutput.push(init.stdout, init.stderr);
    const outboxDir = path.join(dir, '.eventops', 'outbox');
    const mailer = await createOutboxMailer({ dir: outboxDir, from: { address: 'office@example.org' }, logger: harness.ctx.logger, clock: harness.ctx.clock });
    await mailer.send({ to: [MEMBERS[0]?.email ?? ''], subject: 'Sign in', text: 'member details', html: '<p>member details</p>' });
    await mailer.close();
    const [eml = ''] = fs.readdirSync(outboxDir);
    const mode = (file: string) => (fs.statSync(file).mode & 0o777).toString(8);
    return {
      '.env written by init': mode(path.join(dir, '.env')),
      'outbox directory': mode(outboxDir),
      'outbox .eml': mode(path.join(outboxDir, eml)),
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function registrationOf(harness: PaymentsHarness, email: string, eventId: string): Promise<string> {
  const hash = harness.ctx.cipher.lookupHash('email', email);
  const row = await harness.tdb.db('registrations').where({ event_id: eventId, contact_email_hash: hash }).first<{ id: string }>('id');
  if (!row) throw new Error(`no registration for ${email}`);
  return row.id;
}

/** Every text-like value of every table, read with SQL as someone holding a database dump would. */
export async function dumpDatabase(harness: PaymentsHarness): Promise<SecretsFlowResult['dump']> {
  const { db } = harness.tdb;
  const columns = await db('information_schema.columns')
    .where({ table_schema: 'public' })
    .whereIn('data_type', ['text', 'character varying', 'json', 'jsonb', 'character'])
    .select<Array<{ table_name: string; column_name: string }>>('table_name', 'column_name');
  const dump: SecretsFlowResult['dump'] = [];
  for (const { table_name: table, column_name: column } of columns) {
    const rows = await db.raw<{ rows: Array<{ value: string | null }> }>('SELECT ??::text AS value FROM ??', [column, table]);
    for (const row of rows.rows) if (row.value !== null) dump.push({ table, column, value: row.value });
  }
  return dump;
}

/** A cipher holding both keys of the flow, writing with v2 as the rotated database does. */
function rotatedCipher() {
  return createFieldCipher(testConfig({ ENCRYPTION_KEY_V1: SECRETS.ENCRYPTION_KEY, ENCRYPTION_KEY_V2: SECRETS.ENCRYPTION_KEY_V2, ENCRYPTION_KEY_ID: 'v2' }).keyring);
}

/** Every encrypted column's values, decrypted with both keys of the flow (a value no key opens is left out). */
export async function decryptDatabase(harness: PaymentsHarness): Promise<SecretsFlowResult['decrypted']> {
  const cipher = rotatedCipher();
  const decrypted: SecretsFlowResult['decrypted'] = [];
  for (const { table, column } of ENCRYPTED_COLUMNS) {
    for (const value of await harness.tdb.db(table).whereNotNull(column).pluck<string[]>(column)) {
      try {
        decrypted.push({ table, column, value: cipher.decrypt(value) });
      } catch {
        // Unreadable with the keys: nothing anyone could read back.
      }
    }
  }
  return decrypted;
}

/** Where a purged answer is still stored, even encrypted: after the purge it must be nowhere. */
export function purgedAnswerLocations(result: SecretsFlowResult): string[] {
  return [...result.dump, ...result.decrypted].filter(({ value }) => value.includes(ANSWERS.purgedAllergy)).map(({ table, column }) => `${table}.${column}`);
}

/** Where the camp's allergy (not yet due for the purge) is found decrypted: it must be, or the search proves nothing. */
export function keptSensitiveAnswerLocations(result: SecretsFlowResult): string[] {
  return result.decrypted.filter(({ value }) => value.includes(ANSWERS.allergy)).map(({ table, column }) => `${table}.${column}`);
}

/** The member details and secret values that must appear nowhere in logs, and details that must not sit in plain text. */
export function sensitiveValues(result: SecretsFlowResult): { secrets: Record<string, string>; personal: string[] } {
  const personal = [
    ADMIN_EMAIL,
    ...MEMBERS.flatMap((m) => [m.email, m.mobile, m.clearance].filter(Boolean)),
    ...Object.values(REGISTRANTS).flatMap((r) => [r.email, r.mobile]),
    'hal.seat.payer@example.org',
    ANSWERS.contact.email,
    ANSWERS.allergy,
    ANSWERS.dateOfBirth,
    ANSWERS.purgedAllergy,
  ];
  const secrets: Record<string, string> = { ...SECRETS, PSP_SECRET_KEY: 'sk_test_eventops_fake_provider_key', PSP_WEBHOOK_SECRET: 'whsec_eventops_test_signing_secret' };
  result.registrationTokens.forEach((token, i) => (secrets[`registration token ${i + 1}`] = token));
  return { secrets, personal };
}

export function findLeaks(result: SecretsFlowResult): Leak[] {
  const { secrets, personal } = sensitiveValues(result);
  const leaks: Leak[] = [];
  const logLower = result.logText.toLowerCase();
  for (const [name, value] of Object.entries(secrets)) {
    if (result.logText.includes(value)) leaks.push({ where: 'log', what: name, detail: excerpt(result.logText, value) });
  }
  for (const value of personal) {
    if (logLower.includes(value.toLowerCase())) leaks.push({ where: 'log', what: value, detail: excerpt(logLower, value.toLowerCase()) });
  }
  for (const { table, column, value } of result.dump) {
    const lower = value.toLowerCase();
    for (const detail of personal) {
      if (lower.includes(detail.toLowerCase())) leaks.push({ where: 'database', what: detail, detail: `${table}.${column}` });
    }
    for (const [name, secret] of Object.entries(secrets)) {
      if (value.includes(secret)) leaks.push({ where: 'database', what: name, detail: `${table}.${column}` });
    }
    // A staged checkout payload in plain text would carry these keys.
    if (/"contact"\s*:|"priced"\s*:/.test(value)) leaks.push({ where: 'database', what: 'checkout payload', detail: `${table}.${column}` });
  }
  return leaks;
}

/**
 * Where the plain (non-sensitive) answer sits in the dump: it must be found (in registrations.answers), or the
 * search for the sensitive ones would prove nothing.
 */
export function plainAnswerLocations(result: SecretsFlowResult): string[] {
  return result.dump.filter(({ value }) => value.includes(ANSWERS.plainDiet)).map(({ table, column }) => `${table}.${column}`);
}

function excerpt(text: string, value: string): string {
  const at = text.indexOf(value);
  return text.slice(Math.max(0, at - 120), at + value.length + 40).replace(/\s+/g, ' ');
}

/** Redirects and links that leave the public URL for anywhere but the provider's hosted page. */
export function offSiteRedirects(result: SecretsFlowResult): string[] {
  const allowed = (location: string) =>
    location.startsWith(`${PUBLIC_URL}/`) || (location.startsWith('/') && !location.startsWith('//')) || location.startsWith(`${result.providerBase}/pay/`);
  return [
    ...result.redirects.filter((r) => !allowed(r.location)).map((r) => `${r.what}: ${r.location}`),
    ...result.mailLinks.filter((link) => !link.startsWith(`${PUBLIC_URL}/`) && !link.startsWith('https://grace')).map((link) => `mail link: ${link}`),
  ];
}

export async function run(options: { durationMs?: number; runs?: number } = {}) {
  const deadline = Date.now() + (options.durationMs ?? 60_000);
  const rounds = options.runs ?? Number.POSITIVE_INFINITY;
  let round = 0;
  let inputs = 0;
  let leaks = 0;
  let offSite = 0;
  do {
    round += 1;
    const result = await runSecretsFlow();
    const found = findLeaks(result);
    const stray = offSiteRedirects(result);
    // The search must find the plain answer that is there; without it, "no sensitive answer found" proves nothing.
    if (plainAnswerLocations(result).length === 0) found.push({ where: 'database', what: 'plain answer', detail: 'not found: the dump search is broken' });
    // A purged answer is gone from the database, decrypted or not; the decrypted search finds the one not yet due.
    for (const where of purgedAnswerLocations(result)) found.push({ where: 'database', what: 'purged answer', detail: where });
    if (keptSensitiveAnswerLocations(result).length === 0) found.push({ where: 'database', what: 'kept answer', detail: 'not found decrypted: the decrypted search is broken' });
    for (const leak of found) process.stderr.write(`secrets-at-rest: ${leak.where} holds ${leak.what}: ${leak.detail}\n`);
    for (const link of stray) process.stderr.write(`secrets-at-rest: off-site ${link}\n`);
    inputs += Object.keys(result.steps).length + result.dump.length;
    leaks += found.length;
    offSite += stray.length;
  } while (round < rounds && Date.now() < deadline);
  return {
    case: 'secrets-at-rest',
    load: `${round} full flow(s): setup, import, bank + pay-now, card, alert, answered questions (sensitive and plain), a card payment with answers kept unfulfilled, every mail job, queued mail, rotate-keys, purge-answers; logs, a dump of every text column and every encrypted value decrypted searched`,
    faults: 'spoofed Host, Origin and X-Forwarded-Host (with TRUST_PROXY on), wrong setup token, wrong bearer, wrong registration token',
    inputs,
    lost: leaks + offSite,
    duplicates: 0,
    passed: leaks === 0 && offSite === 0,
  };
}
