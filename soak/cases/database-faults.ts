import {
  jobDuringDatabaseOutage,
  startRestartablePostgres,
  webhookDuringDatabaseOutage,
} from '../../test/reliability/scenarios/database-faults.js';
import { repeatRounds, reportProblems, type CaseOptions, type CaseResult } from '../support/result.js';

/** Case 6, soak form: a PostgreSQL of its own stopped and started again, during a job and during webhook deliveries, round after round. */
export async function run(options: CaseOptions = {}): Promise<CaseResult> {
  const pgServer = await startRestartablePostgres();
  let outages = 0;
  let inputs = 0;
  let lost = 0;
  let duplicates = 0;
  try {
    const { rounds, problems } = await repeatRounds(options, 60_000, async () => {
      const found: string[] = [];
      const job = await jobDuringDatabaseOutage(pgServer, { people: 15 });
      outages++;
      inputs += job.people;
      lost += job.lost;
      duplicates += job.duplicates;
      if (job.during.code !== 1) found.push(`job during the outage exited ${job.during.code}`);
      if (job.next.code !== 0) found.push(`job after the outage exited ${job.next.code}: ${job.next.stderr.trim().split('\n').at(-1) ?? ''}`);
      if (job.recovery.code !== 0) found.push(`recovery run exited ${job.recovery.code}`);
      if (job.duplicates > job.unconfirmedSent || job.duplicates > 3) found.push(`${job.duplicates} duplicate emails (${job.unconfirmedSent} unrecorded sends)`);

      const webhook = await webhookDuringDatabaseOutage(pgServer, { deliveries: 5 });
      outages++;
      inputs += webhook.deliveries;
      lost += webhook.deliveries - webhook.registrations;
      duplicates += Math.max(0, webhook.registrations - webhook.deliveries);
      if (webhook.duringOutage.some((answer) => answer.status !== 500)) found.push(`webhook answered ${webhook.duringOutage.map((a) => a.status).join(',')} during the outage`);
      if (webhook.healthDuringOutage !== 503) found.push(`/healthz answered ${webhook.healthDuringOutage} during the outage`);
      if (webhook.healthChecksUntilOk === 0) found.push('/healthz did not come back to 200');
      if (webhook.replays.some((answer) => answer.status !== 200)) found.push('a replay after recovery was not answered 200');
      return found;
    });
    reportProblems('database-faults', problems);
    return {
      case: 'database-faults',
      load: `${rounds} round(s): send-celebrations for 15 people, 5 webhook deliveries`,
      faults: `${outages} PostgreSQL stops (mid-job, mid-webhook), each followed by a restart`,
      inputs,
      lost,
      duplicates,
      // A job that loses its database may resend only what it sent but could not record (at most the 3 in flight).
      passed: problems.length === 0 && lost === 0,
    };
  } finally {
    await pgServer.destroy();
  }
}
