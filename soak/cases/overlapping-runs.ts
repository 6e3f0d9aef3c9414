import { createTestDatabase } from '../../test/support/db.js';
import { runOverlappingJobs } from '../../test/reliability/scenarios/overlapping-runs.js';
import { repeatRounds, reportProblems, type CaseOptions, type CaseResult } from '../support/result.js';

/** Case 3, soak form: rounds of 15 real job processes started together on a fresh database with more recipients. */
export async function run(options: CaseOptions = {}): Promise<CaseResult> {
  let processes = 0;
  let inputs = 0;
  let lost = 0;
  let duplicates = 0;
  const { rounds, problems } = await repeatRounds(options, 60_000, async () => {
    const tdb = await createTestDatabase();
    try {
      const report = await runOverlappingJobs(tdb, { copies: 5, reminderEvents: 3, registrationsPerEvent: 15, birthdays: 25, digestRecipients: 6 });
      processes += report.processes;
      inputs += report.expected;
      lost += report.lost.length;
      duplicates += report.duplicates;
      return [
        ...report.badExits.map((exit) => `${exit.job} exited ${exit.code}: ${exit.stderr.trim().split('\n').at(-1) ?? ''}`),
        ...report.lost.map((address) => `never emailed: ${address}`),
        ...report.duplicated.map((key) => `emailed more than once: ${key}`),
        ...(report.unexpected > 0 ? [`${report.unexpected} messages to unexpected recipients`] : []),
      ];
    } finally {
      await tdb.drop();
    }
  });
  reportProblems('overlapping-runs', problems);
  return {
    case: 'overlapping-runs',
    load: `${rounds} round(s) × 15 processes started together (5 each of send-reminders, send-celebrations, send-clearance-digest); ${processes} processes`,
    faults: 'none: healthy mail server and database',
    inputs,
    lost,
    duplicates,
    passed: problems.length === 0 && lost === 0 && duplicates === 0,
  };
}
