import { createTestDatabase } from '../../test/support/db.js';
import { crashAndRecover, type CrashJob } from '../../test/reliability/scenarios/crash-recovery.js';
import { repeatRounds, reportProblems, type CaseOptions, type CaseResult } from '../support/result.js';

/** The SMTP pool's size: at most this many sends are in flight when a process dies. */
const POOL_SIZE = 3;

/** Case 4, soak form: kill -9 send-celebrations and send-clearance-digest at varying points, recover, count. */
export async function run(options: CaseOptions = {}): Promise<CaseResult> {
  let kills = 0;
  let inputs = 0;
  let lost = 0;
  let duplicates = 0;
  const { rounds, problems } = await repeatRounds(options, 60_000, async (index) => {
    const job: CrashJob = index % 2 === 0 ? 'send-celebrations' : 'send-clearance-digest';
    const killAfter = 2 + (index % 7);
    const tdb = await createTestDatabase();
    try {
      const report = await crashAndRecover(tdb, job, { recipients: 20, killAfter, answerDelayMs: 150 + (index % 4) * 100 });
      kills++;
      inputs += report.expected;
      lost += report.lost.length;
      duplicates += report.duplicates;
      const found: string[] = [];
      if (report.killed.signal !== 'SIGKILL') found.push(`${job} finished before the kill (exit ${report.killed.code})`);
      if (report.recovery.code !== 0) found.push(`${job} recovery exited ${report.recovery.code}: ${report.recovery.stderr.trim().split('\n').at(-1) ?? ''}`);
      if (report.sentByEarlyRun > 0) found.push(`${job}: a run before the stale threshold sent ${report.sentByEarlyRun}`);
      if (report.lost.length > 0) found.push(`${job}: never emailed ${report.lost.join(', ')}`);
      if (report.duplicates !== report.unrecordedBeforeRecovery.length || report.duplicates > POOL_SIZE) {
        found.push(`${job}: ${report.duplicates} duplicates, ${report.unrecordedBeforeRecovery.length} sends in flight at the kill`);
      }
      if (report.unsettled > 0) found.push(`${job}: ${report.unsettled} claims or months left unsettled`);
      return found;
    } finally {
      await tdb.drop();
    }
  });
  reportProblems('crash-recovery', problems);
  return {
    case: 'crash-recovery',
    load: `${rounds} round(s), 20 recipients each, alternating send-celebrations and send-clearance-digest`,
    faults: `${kills} SIGKILL mid-run, claims/lease back-dated past the stale threshold`,
    inputs,
    lost,
    duplicates,
    // Duplicates are allowed only for sends in flight at the kill; each round checks that bound.
    passed: problems.length === 0 && lost === 0,
  };
}
