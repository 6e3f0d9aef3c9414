import { FixedClock } from '../../../src/clock.js';
import type { AppContext } from '../../../src/context.js';
import { sendCelebrations, type CelebrationSummary } from '../../../src/jobs/send-celebrations.js';
import { sendClearanceDigest, type ClearanceDigestSummary } from '../../../src/jobs/send-clearance-digest.js';
import { sendEventReminders, type ReminderSummary } from '../../../src/jobs/send-reminders.js';
import { createMailer } from '../../../src/mail/create.js';
import { deliverQueuedMail, enqueueMail } from '../../../src/mail/queue.js';
import { silentLogger } from '../../../src/logger.js';
import { getSetting } from '../../../src/settings.js';
import { createTestContext } from '../../support/context.js';
import type { TestDatabase } from '../../support/db.js';
import { testConfig } from '../../support/env.js';
import { startMailApiServer, type MailApiRequest } from '../../support/mail-api-server.js';
import { startSmtpSink, type SinkMessage, type SmtpSinkOptions } from '../../support/smtp-sink.js';
import { countDeliveries, seedBirthdaysToday, seedClearanceDigest, seedDueReminders } from './seed.js';

/**
 * Case 5: jobs and the mail queue against a mail server that refuses some
 * recipients, drops connections, or stalls past the timeout, and a mail API
 * that answers 429 and 500. Each scenario runs the real job or queue code
 * in-process with a short transport timeout and returns what happened; every
 * call is bounded by a deadline, so a hang is a failure, not a stuck run.
 */

/** Transport timeout for these scenarios: a stalled server must cost about this, not minutes. */
export const MAIL_TIMEOUT_MS = 2_000;
/** No single job or queue pass may take longer than this. */
export const CALL_DEADLINE_MS = 15_000;

export class DeadlineExceeded extends Error {
  constructor(label: string, ms: number) {
    super(`${label} did not finish within ${ms} ms`);
    this.name = 'DeadlineExceeded';
  }
}

export async function withDeadline<T>(label: string, work: Promise<T>, ms = CALL_DEADLINE_MS): Promise<{ value: T; ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded(label, ms)), ms);
  });
  try {
    const value = await Promise.race([work, deadline]);
    return { value, ms: Date.now() - started };
  } finally {
    clearTimeout(timer);
  }
}

interface SmtpHarness {
  ctx: AppContext & { clock: FixedClock };
  messages: SinkMessage[];
  unanswered: SinkMessage[];
  heal(): void;
  close(): Promise<void>;
}

/** A context whose mailer talks to an SMTP sink with `faults` until heal() is called. */
async function smtpHarness(tdb: TestDatabase, faults: SmtpSinkOptions, now = new Date()): Promise<SmtpHarness> {
  let healthy = false;
  const whileFaulty =
    <A extends unknown[]>(fn: ((...args: A) => boolean) | undefined) =>
    (...args: A) =>
      !healthy && (fn?.(...args) ?? false);
  const sink = await startSmtpSink({
    rejectRecipient: whileFaulty(faults.rejectRecipient),
    dropOnRecipient: whileFaulty(faults.dropOnRecipient),
    dropAfterData: whileFaulty(faults.dropAfterData),
    stallAfterData: whileFaulty(faults.stallAfterData),
  });
  const mailer = await createMailer(testConfig(sink.configEnv()), silentLogger(), { timeoutMs: MAIL_TIMEOUT_MS });
  const clock = new FixedClock(now);
  const ctx = { ...createTestContext({ db: tdb.db, mailer, clock }), clock };
  return {
    ctx,
    messages: sink.messages,
    unanswered: sink.unanswered,
    heal: () => {
      healthy = true;
    },
    async close() {
      await mailer.close();
      await sink.close();
    },
  };
}

const pick = (addresses: string[], every: number) => new Set(addresses.filter((_, i) => i % every === 0));

// ---- Rule 2: reminders with some recipients refused ----

export interface RemindersRefusedReport {
  recipients: number;
  refused: number;
  first: ReminderSummary;
  /** The run after the mail server recovered. */
  retry: ReminderSummary;
  reminderMarkedSent: boolean;
  /** Refused recipients who got mail anyway (must be 0: rule 2 does not retry them). */
  refusedDelivered: number;
  /** Accepted recipients with no message, or with more than one. */
  lost: number;
  duplicates: number;
  errorLogRows: number;
  ms: number;
}

export async function remindersWithRefusedRecipients(tdb: TestDatabase, options: { registrations?: number } = {}): Promise<RemindersRefusedReport> {
  const now = new Date();
  const cipher = testContextCipher(tdb);
  const addresses = await seedDueReminders(tdb.db, cipher, { events: 1, perEvent: options.registrations ?? 6, prefix: 'refused-reminder', now });
  const refused = pick(addresses, 3);
  const harness = await smtpHarness(tdb, { rejectRecipient: (address) => refused.has(address) }, now);
  try {
    const first = await withDeadline('send-reminders with refusals', sendEventReminders(harness.ctx, { trigger: 'cli' }));
    harness.heal();
    harness.ctx.clock.advance(60_000);
    const retry = await withDeadline('send-reminders after recovery', sendEventReminders(harness.ctx, { trigger: 'cli' }));
    const delivered = countDeliveries(harness.messages, addresses.filter((a) => !refused.has(a)));
    const marked = await tdb.db('events').whereNotNull('reminder_sent_at');
    return {
      recipients: addresses.length,
      refused: refused.size,
      first: first.value,
      retry: retry.value,
      reminderMarkedSent: marked.length === 1,
      refusedDelivered: harness.messages.filter((m) => m.envelope.to.some((to) => refused.has(to))).length,
      lost: delivered.lost.length,
      duplicates: delivered.duplicates,
      errorLogRows: (await tdb.db('error_logs').where({ source: 'job:send-reminders' })).length,
      ms: first.ms + retry.ms,
    };
  } finally {
    await harness.close();
  }
}

// ---- Rule 7: the clearance digest under refusals, dropped connections and a stalled server ----

export type DigestFault = 'refused' | 'drop-before-data' | 'drop-after-data' | 'stall-after-data';

export interface DigestFaultReport {
  recipients: number;
  addresses: string[];
  /** Fault per faulted recipient address. */
  faults: Map<string, DigestFault>;
  first: ClearanceDigestSummary;
  /** Recorded as delivered after the first run. */
  recordedAfterFirst: string[];
  monthDoneAfterFirst: boolean;
  retry: ClearanceDigestSummary;
  /** Addresses the retry emailed. */
  retried: string[];
  monthDoneAfterRetry: boolean;
  /** Per recipient, messages the server received in full (accepted, or dropped/stalled after DATA). */
  received: Map<string, number>;
  lost: number;
  duplicates: number;
  firstMs: number;
}

/**
 * Recipients are faulted round-robin with `faults`, one in `every`. Refusals
 * and drops before DATA are certain failures (retried, rule 7); drops and
 * stalls after DATA are ambiguous and count as sent (not retried).
 */
export async function digestWithMailFaults(
  tdb: TestDatabase,
  options: { recipients?: number; faults: DigestFault[]; every?: number },
): Promise<DigestFaultReport> {
  const cipher = testContextCipher(tdb);
  const addresses = await seedClearanceDigest(tdb.db, cipher, { recipients: options.recipients ?? 6, prefix: 'faulted-digest' });
  const faults = new Map<string, DigestFault>();
  const every = options.every ?? 2;
  addresses.forEach((address, i) => {
    const fault = options.faults[Math.floor(i / every) % options.faults.length];
    if (i % every === 0 && fault) faults.set(address, fault);
  });
  const faultOf = (address: string) => faults.get(address);
  const toOf = (message: SinkMessage) => message.envelope.to[0] ?? '';
  const harness = await smtpHarness(tdb, {
    rejectRecipient: (address) => faultOf(address) === 'refused',
    dropOnRecipient: (address) => faultOf(address) === 'drop-before-data',
    dropAfterData: (message) => faultOf(toOf(message)) === 'drop-after-data',
    stallAfterData: (message) => faultOf(toOf(message)) === 'stall-after-data',
  });
  try {
    const first = await withDeadline('send-clearance-digest with mail faults', sendClearanceDigest(harness.ctx, { trigger: 'cli' }));
    // The delivered list holds email lookup hashes, never addresses: shown as the addresses they stand for.
    const byHash = new Map(addresses.map((address) => [harness.ctx.cipher.lookupHash('email', address), address]));
    const recordedAfterFirst = ((await getSetting(tdb.db, 'clearanceDigestDelivered'))?.addresses ?? []).map((entry) => byHash.get(entry) ?? entry);
    const monthDoneAfterFirst = (await getSetting(tdb.db, 'clearanceDigestLastMonth')) !== undefined;
    harness.heal();
    const before = harness.messages.length;
    const retry = await withDeadline('send-clearance-digest after recovery', sendClearanceDigest(harness.ctx, { trigger: 'cli' }));
    const retried = harness.messages.slice(before).flatMap((m) => m.envelope.to);
    const received = countDeliveries([...harness.messages, ...harness.unanswered], addresses);
    return {
      recipients: addresses.length,
      addresses,
      faults,
      first: first.value,
      recordedAfterFirst,
      monthDoneAfterFirst,
      retry: retry.value,
      retried,
      monthDoneAfterRetry: (await getSetting(tdb.db, 'clearanceDigestLastMonth')) !== undefined,
      received: received.perRecipient,
      lost: received.lost.length,
      duplicates: received.duplicates,
      firstMs: first.ms,
    };
  } finally {
    await harness.close();
  }
}

// ---- The mail API answering 429 and 500: celebrations ----

export interface MailApiCelebrationsReport {
  people: number;
  errorsAnswered: number;
  first: CelebrationSummary;
  retry: CelebrationSummary;
  /** Accepted (200) requests per idempotency key. */
  acceptedPerMessage: number[];
  lost: number;
  duplicates: number;
}

export async function celebrationsWithMailApiErrors(tdb: TestDatabase, options: { people?: number } = {}): Promise<MailApiCelebrationsReport> {
  const now = new Date();
  const cipher = testContextCipher(tdb);
  const people = options.people ?? 6;
  await seedBirthdaysToday(tdb.db, cipher, { people, prefix: 'api-birthday', now });
  const api = await startMailApiServer();
  const mailer = await createMailer(testConfig(api.configEnv()), silentLogger(), { timeoutMs: MAIL_TIMEOUT_MS });
  const ctx = createTestContext({ db: tdb.db, mailer, clock: new FixedClock(now) });
  try {
    api.failNext(2, 500);
    api.failNext(1, 429);
    const errorsAnswered = 3;
    const first = await withDeadline('send-celebrations with API errors', sendCelebrations(ctx, { trigger: 'cli' }));
    const retry = await withDeadline('send-celebrations after recovery', sendCelebrations(ctx, { trigger: 'cli' }));
    const accepted = acceptedPerKey(api.requests.slice(errorsAnswered));
    const counts = [...accepted.values()];
    return {
      people,
      errorsAnswered,
      first: first.value,
      retry: retry.value,
      acceptedPerMessage: counts,
      lost: people - accepted.size,
      duplicates: counts.reduce((sum, n) => sum + n - 1, 0),
    };
  } finally {
    await mailer.close();
    await api.close();
  }
}

// ---- Queued receipts and alerts: retried until delivered ----

export interface QueuedMailReport {
  queued: number;
  faultsInjected: number;
  passes: number;
  statuses: Record<string, number>;
  /** Per queued message, how many times the mail server or API accepted it. */
  acceptedPerMessage: number[];
  lost: number;
  duplicates: number;
}

/** Sends queued mail pass after pass, moving the clock past each backoff, until nothing is pending (at most `maxPasses`). */
async function drainQueue(ctx: AppContext & { clock: FixedClock }, maxPasses: number): Promise<number> {
  let passes = 0;
  while (passes < maxPasses) {
    passes++;
    await withDeadline(`queued mail pass ${passes}`, deliverQueuedMail(ctx, { limit: 50 }));
    const pending = await ctx.db('queued_mail').where({ status: 'PENDING' }).count<{ n: number }>({ n: '*' }).first();
    if (Number(pending?.n ?? 0) === 0) break;
    ctx.clock.advance(61 * 60_000);
  }
  return passes;
}

async function enqueueReceiptsAndAlerts(ctx: AppContext, count: number, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    const kind = i % 2 === 0 ? 'receipt' : 'operations-alert';
    const idempotencyKey = `${prefix}:${kind}:${i}`;
    keys.push(idempotencyKey);
    await enqueueMail(
      ctx.db,
      ctx.cipher,
      {
        kind,
        message: { to: [`${prefix}-${i}@example.org`], subject: `${kind} ${i}`, html: `<p>${kind} ${i}</p>`, text: `${kind} ${i}`, idempotencyKey },
      },
      ctx.clock.now(),
    );
  }
  return keys;
}

async function statusCounts(ctx: AppContext): Promise<Record<string, number>> {
  const rows = await ctx.db('queued_mail').groupBy('status').select<Array<{ status: string; n: number }>>('status', ctx.db.raw('count(*)::int AS n'));
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/** Through the mail API: one stalled request (timeout, ambiguous), then 500s and 429s, then success. */
export async function queuedMailThroughFailingApi(tdb: TestDatabase, options: { messages?: number } = {}): Promise<QueuedMailReport> {
  const api = await startMailApiServer();
  const mailer = await createMailer(testConfig(api.configEnv()), silentLogger(), { timeoutMs: MAIL_TIMEOUT_MS });
  const clock = new FixedClock(new Date('2026-11-22T00:00:00Z'));
  const ctx = { ...createTestContext({ db: tdb.db, mailer, clock }), clock };
  try {
    const keys = await enqueueReceiptsAndAlerts(ctx, options.messages ?? 6, 'api-queued');
    // A stalled request is taken before any failure: 1 stall, then 3 × 500 and 2 × 429.
    api.stallNext(1);
    api.failNext(3, 500);
    api.failNext(2, 429);
    const faultsInjected = 6;
    const passes = await drainQueue(ctx, 12);
    const accepted = acceptedPerKey(api.requests.slice(faultsInjected));
    const perMessage = keys.map((key) => accepted.get(key) ?? 0);
    return {
      queued: keys.length,
      faultsInjected,
      passes,
      statuses: await statusCounts(ctx),
      acceptedPerMessage: perMessage,
      lost: perMessage.filter((n) => n === 0).length,
      duplicates: perMessage.reduce((sum, n) => sum + Math.max(0, n - 1), 0),
    };
  } finally {
    await mailer.close();
    await api.close();
  }
}

/** Through SMTP: the first attempt of every message loses its connection before DATA; the next one goes through. */
export async function queuedMailThroughDroppingSmtp(tdb: TestDatabase, options: { messages?: number } = {}): Promise<QueuedMailReport> {
  const dropped = new Set<string>();
  const harness = await smtpHarness(
    tdb,
    {
      dropOnRecipient: (address) => {
        if (dropped.has(address)) return false;
        dropped.add(address);
        return true;
      },
    },
    new Date('2026-11-22T00:00:00Z'),
  );
  try {
    const keys = await enqueueReceiptsAndAlerts(harness.ctx, options.messages ?? 6, 'smtp-queued');
    const passes = await drainQueue(harness.ctx, 12);
    const addresses = keys.map((_, i) => `smtp-queued-${i}@example.org`);
    const delivered = countDeliveries(harness.messages, addresses);
    return {
      queued: keys.length,
      faultsInjected: dropped.size,
      passes,
      statuses: await statusCounts(harness.ctx),
      acceptedPerMessage: addresses.map((a) => delivered.perRecipient.get(a) ?? 0),
      lost: delivered.lost.length,
      duplicates: delivered.duplicates,
    };
  } finally {
    await harness.close();
  }
}

function acceptedPerKey(requests: MailApiRequest[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of requests) {
    const key = request.idempotencyKey ?? '(none)';
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

function testContextCipher(tdb: TestDatabase) {
  return createTestContext({ db: tdb.db }).cipher;
}
