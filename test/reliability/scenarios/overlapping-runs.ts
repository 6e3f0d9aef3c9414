import { startCli, type CliResult } from '../../support/cli.js';
import type { TestDatabase } from '../../support/db.js';
import { testConfig, testEnv } from '../../support/env.js';
import { startSmtpSink } from '../../support/smtp-sink.js';
import { createFieldCipher } from '../../../src/crypto/field-cipher.js';
import { countDeliveries, seedBirthdaysToday, seedClearanceDigest, seedDueReminders, type DeliveryCount } from './seed.js';

/**
 * Case 3: `copies` real processes each of send-reminders, send-celebrations and
 * send-clearance-digest, all started at once against one database and a
 * healthy mail server. Every email must arrive exactly once and every process
 * must exit 0, or 75 where the job's lease was held.
 */

export const OVERLAP_JOBS = ['send-reminders', 'send-celebrations', 'send-clearance-digest'] as const;
export type OverlapJob = (typeof OVERLAP_JOBS)[number];

export interface OverlapOptions {
  copies?: number;
  reminderEvents?: number;
  registrationsPerEvent?: number;
  birthdays?: number;
  digestRecipients?: number;
}

export interface OverlapReport extends DeliveryCount {
  processes: number;
  expected: number;
  messages: number;
  exitCodes: Record<OverlapJob, Array<number | null>>;
  /** Processes that exited with something other than 0 or 75, with their stderr. */
  badExits: Array<{ job: OverlapJob; code: number | null; stderr: string }>;
  /** Parsed --json summaries of the processes that exited 0. */
  summaries: Array<Record<string, unknown>>;
}

export async function runOverlappingJobs(tdb: TestDatabase, options: OverlapOptions = {}): Promise<OverlapReport> {
  const copies = options.copies ?? 5;
  const cipher = createFieldCipher(testConfig().keyring);
  const expected = [
    ...(await seedDueReminders(tdb.db, cipher, { events: options.reminderEvents ?? 2, perEvent: options.registrationsPerEvent ?? 5 })),
    ...(await seedBirthdaysToday(tdb.db, cipher, { people: options.birthdays ?? 8 })),
    ...(await seedClearanceDigest(tdb.db, cipher, { recipients: options.digestRecipients ?? 4 })),
  ];
  const sink = await startSmtpSink();
  try {
    const env = testEnv({ ...sink.configEnv(), DATABASE_URL: tdb.url, LOG_LEVEL: 'warn' });
    const runs: Array<{ job: OverlapJob; done: Promise<CliResult> }> = [];
    for (let i = 0; i < copies; i++) {
      for (const job of OVERLAP_JOBS) runs.push({ job, done: startCli([job, '--json'], { env, timeoutMs: 120_000 }).result });
    }
    const results = await Promise.all(runs.map(async (run) => ({ job: run.job, result: await run.done })));
    const exitCodes = Object.fromEntries(OVERLAP_JOBS.map((job) => [job, [] as Array<number | null>])) as OverlapReport['exitCodes'];
    const badExits: OverlapReport['badExits'] = [];
    const summaries: Array<Record<string, unknown>> = [];
    for (const { job, result } of results) {
      exitCodes[job].push(result.code);
      if (result.code === 0) summaries.push(JSON.parse(result.stdout) as Record<string, unknown>);
      else if (result.code !== 75) badExits.push({ job, code: result.code, stderr: result.stderr.slice(0, 2000) });
    }
    return {
      processes: runs.length,
      expected: expected.length,
      messages: sink.messages.length,
      exitCodes,
      badExits,
      summaries,
      ...countDeliveries(sink.messages, expected),
    };
  } finally {
    await sink.close();
  }
}
