import { startCli, type CliResult } from '../../support/cli.js';
import type { TestDatabase } from '../../support/db.js';
import { testConfig, testEnv } from '../../support/env.js';
import { startSmtpSink, type SmtpSink } from '../../support/smtp-sink.js';
import { createFieldCipher } from '../../../src/crypto/field-cipher.js';
import { getSetting } from '../../../src/settings.js';
import { countDeliveries, seedBirthdaysToday, seedClearanceDigest, type DeliveryCount } from './seed.js';

/**
 * Case 4: a real `eventops send-celebrations` or `send-clearance-digest` is
 * killed with SIGKILL while the mail server is slowly answering its sends,
 * after some were accepted. Then, without sleeping, the dead run's claims or
 * lease are back-dated past the stale threshold in SQL and the job runs again.
 * Every recipient must end up emailed; a duplicate is allowed only for a
 * message the server took before the dead run could record it (in flight at
 * the kill), and each is counted.
 */

export type CrashJob = 'send-celebrations' | 'send-clearance-digest';

export interface CrashOptions {
  recipients?: number;
  /** How long the sink waits before answering each DATA while the first run is alive. */
  answerDelayMs?: number;
  /** Accepted messages to wait for before the kill. */
  killAfter?: number;
}

export interface CrashReport extends DeliveryCount {
  job: CrashJob;
  expected: number;
  /** Messages accepted before the kill. */
  acceptedBeforeKill: number;
  /** Messages received in full whose answer was still due at the kill (the server keeps them). */
  inFlightAtKill: number;
  killed: CliResult;
  /** The run started before the claims or lease went stale. */
  early: CliResult;
  /** Messages the early run sent (none expected: the dead run's claims or lease still stand). */
  sentByEarlyRun: number;
  recovery: CliResult;
  /** Recipients the server had accepted by the recovery run whose delivery the dead run never recorded: the only ones allowed twice. */
  unrecordedBeforeRecovery: string[];
  /** After recovery: claims never confirmed, or the month not marked done. */
  unsettled: number;
}

const STALE_INTERVAL: Record<CrashJob, string> = {
  // Stale after 15 minutes (decisions "Jobs"), and the digest lease lasts 30 (spec rule 5).
  'send-celebrations': '16 minutes',
  'send-clearance-digest': '31 minutes',
};

export async function crashAndRecover(tdb: TestDatabase, job: CrashJob, options: CrashOptions = {}): Promise<CrashReport> {
  const cipher = createFieldCipher(testConfig().keyring);
  const recipients = options.recipients ?? 12;
  const expected =
    job === 'send-celebrations'
      ? await seedBirthdaysToday(tdb.db, cipher, { people: recipients })
      : await seedClearanceDigest(tdb.db, cipher, { recipients });
  let slow = true;
  const delay = options.answerDelayMs ?? 400;
  const sink = await startSmtpSink({ delayAfterData: () => (slow ? delay : 0) });
  try {
    const env = testEnv({ ...sink.configEnv(), DATABASE_URL: tdb.url, LOG_LEVEL: 'warn' });
    const first = startCli([job, '--json'], { env, timeoutMs: 60_000 });
    await sink.waitFor(options.killAfter ?? 3, 30_000);
    first.child.kill('SIGKILL');
    const acceptedBeforeKill = sink.messages.length;
    const inFlightAtKill = sink.delayed;
    const killed = await first.result;
    await sink.idle();
    slow = false;

    const beforeEarly = sink.messages.length;
    const early = await startCli([job, '--json'], { env }).result;
    const sentByEarlyRun = sink.messages.length - beforeEarly;

    await quiesced(tdb);
    const unrecordedBeforeRecovery = await unrecorded(tdb, job, sink);
    await backdate(tdb, job);
    const recovery = await startCli([job, '--json'], { env }).result;

    return {
      job,
      expected: expected.length,
      acceptedBeforeKill,
      inFlightAtKill,
      killed,
      early,
      sentByEarlyRun,
      recovery,
      unrecordedBeforeRecovery,
      unsettled: await unsettled(tdb, job),
      ...countDeliveries(sink.messages, expected),
    };
  } finally {
    await sink.close();
  }
}

/**
 * A statement the killed process sent just before dying still runs and
 * commits in PostgreSQL; wait (bounded) until no other session of this
 * database is active, so what the dead run recorded is final.
 */
async function quiesced(tdb: TestDatabase): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const { rows } = await tdb.db.raw<{ rows: Array<{ n: number }> }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle' AND pid <> pg_backend_pid()`,
    );
    if ((rows[0]?.n ?? 0) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Addresses the server accepted that the job's own records do not show as sent. */
async function unrecorded(tdb: TestDatabase, job: CrashJob, sink: SmtpSink): Promise<string[]> {
  const accepted = new Set(sink.messages.flatMap((m) => m.envelope.to.map((a) => a.toLowerCase())));
  let recorded: Set<string>;
  if (job === 'send-celebrations') {
    const cipher = createFieldCipher(testConfig().keyring);
    const rows = await tdb.db('celebration_claims as c')
      .join('people as p', 'p.id', 'c.person_id')
      .whereNotNull('c.sent_at')
      .select<Array<{ email_enc: string }>>('p.email_enc');
    recorded = new Set(rows.map((row) => cipher.decrypt(row.email_enc).toLowerCase()));
  } else {
    // The delivered list holds email lookup hashes, never addresses.
    const cipher = createFieldCipher(testConfig().keyring);
    const hashes = new Set((await getSetting(tdb.db, 'clearanceDigestDelivered'))?.addresses ?? []);
    recorded = new Set([...accepted].filter((address) => hashes.has(cipher.lookupHash('email', address))));
  }
  return [...accepted].filter((address) => !recorded.has(address)).sort();
}

async function backdate(tdb: TestDatabase, job: CrashJob): Promise<void> {
  const interval = STALE_INTERVAL[job];
  if (job === 'send-celebrations') {
    await tdb.db.raw(`UPDATE celebration_claims SET claimed_at = claimed_at - ?::interval WHERE sent_at IS NULL`, [interval]);
  } else {
    await tdb.db.raw(
      `UPDATE leases SET acquired_at = acquired_at - ?::interval, expires_at = expires_at - ?::interval WHERE name = 'clearance-digest'`,
      [interval, interval],
    );
  }
}

async function unsettled(tdb: TestDatabase, job: CrashJob): Promise<number> {
  if (job === 'send-celebrations') return (await tdb.db('celebration_claims').whereNull('sent_at')).length;
  const month = await getSetting(tdb.db, 'clearanceDigestLastMonth');
  return month ? 0 : 1;
}
