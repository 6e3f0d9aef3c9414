import { createTestDatabase, type TestDatabase } from '../../test/support/db.js';
import {
  MAIL_TIMEOUT_MS,
  celebrationsWithMailApiErrors,
  digestWithMailFaults,
  queuedMailThroughDroppingSmtp,
  queuedMailThroughFailingApi,
  remindersWithRefusedRecipients,
  type DigestFault,
} from '../../test/reliability/scenarios/mail-faults.js';
import { repeatRounds, reportProblems, type CaseOptions, type CaseResult } from '../support/result.js';

const DIGEST_FAULTS: DigestFault[] = ['refused', 'drop-before-data', 'drop-after-data', 'stall-after-data'];

interface Tally {
  faults: number;
  inputs: number;
  lost: number;
  duplicates: number;
}

async function withDatabase<T>(work: (tdb: TestDatabase) => Promise<T>): Promise<T> {
  const tdb = await createTestDatabase();
  try {
    return await work(tdb);
  } finally {
    await tdb.drop();
  }
}

/** One round of every mail-fault scenario, larger than in npm test; returns the broken rules. */
async function round(index: number, tally: Tally): Promise<string[]> {
  const found: string[] = [];
  const size = 6 + (index % 4) * 3;

  const reminders = await withDatabase((tdb) => remindersWithRefusedRecipients(tdb, { registrations: size }));
  tally.faults += reminders.refused;
  tally.inputs += reminders.recipients;
  tally.lost += reminders.lost;
  tally.duplicates += reminders.duplicates;
  if (reminders.first.outcome !== 'partial' || reminders.first.failed !== reminders.refused) found.push(`reminders: first run ${JSON.stringify(reminders.first)}`);
  if (!reminders.reminderMarkedSent || reminders.retry.sent !== 0 || reminders.refusedDelivered !== 0) found.push('reminders: rule 2 broken (not marked sent, or refused recipients retried)');

  const digest = await withDatabase((tdb) => digestWithMailFaults(tdb, { recipients: size + 2, faults: DIGEST_FAULTS }));
  const certain = [...digest.faults].filter(([, f]) => f === 'refused' || f === 'drop-before-data').map(([a]) => a).sort();
  tally.faults += digest.faults.size;
  tally.inputs += digest.recipients;
  tally.lost += digest.lost;
  tally.duplicates += digest.duplicates;
  if (digest.first.outcome !== 'partial' || digest.monthDoneAfterFirst) found.push(`digest: first run ${JSON.stringify(digest.first)}`);
  if (JSON.stringify([...digest.retried].sort()) !== JSON.stringify(certain) || !digest.monthDoneAfterRetry) {
    found.push(`digest: rule 7 broken: retried ${digest.retried.length}, expected ${certain.length}`);
  }

  const celebrations = await withDatabase((tdb) => celebrationsWithMailApiErrors(tdb, { people: size }));
  tally.faults += celebrations.errorsAnswered;
  tally.inputs += celebrations.people;
  tally.lost += celebrations.lost;
  tally.duplicates += celebrations.duplicates;
  if (celebrations.first.outcome !== 'partial' || celebrations.retry.failed !== 0) found.push('celebrations: mail API errors not reported partial and retried');

  for (const queued of [
    await withDatabase((tdb) => queuedMailThroughFailingApi(tdb, { messages: size })),
    await withDatabase((tdb) => queuedMailThroughDroppingSmtp(tdb, { messages: size })),
  ]) {
    tally.faults += queued.faultsInjected;
    tally.inputs += queued.queued;
    tally.lost += queued.lost;
    tally.duplicates += queued.duplicates;
    if (queued.statuses.SENT !== queued.queued) found.push(`queued mail not all delivered: ${JSON.stringify(queued.statuses)}`);
  }
  return found;
}

/** Case 5, soak form: refusals, drops, stalls past the timeout, 429 and 500, with every call under a deadline. */
export async function run(options: CaseOptions = {}): Promise<CaseResult> {
  const tally: Tally = { faults: 0, inputs: 0, lost: 0, duplicates: 0 };
  const { rounds, problems } = await repeatRounds(options, 60_000, (index) =>
    round(index, tally).catch((error: unknown) => [`aborted: ${error instanceof Error ? error.message : String(error)}`]),
  );
  reportProblems('mail-faults', problems);
  return {
    case: 'mail-faults',
    load: `${rounds} round(s) of 5 scenarios (reminders, digest, celebrations, queued mail via API and SMTP), ${MAIL_TIMEOUT_MS / 1000} s transport timeout`,
    faults: `${tally.faults} (550 refusals, drops before/after DATA, stalls past the timeout, API 429/500/stall)`,
    inputs: tally.inputs,
    lost: tally.lost,
    duplicates: tally.duplicates,
    passed: problems.length === 0 && tally.lost === 0 && tally.duplicates === 0,
  };
}
