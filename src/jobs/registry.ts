import type { JobFunction, JobName } from './types.js';

/**
 * The one way to get a job's function, imported on demand so a command loads
 * only the job it runs. The CLI, the HTTP endpoints, the scheduler and the demo
 * all go through here, so the three ways of running a job cannot drift.
 */
export async function loadJobFunction(name: JobName): Promise<JobFunction> {
  switch (name) {
    case 'send-reminders':
      return (await import('./send-reminders.js')).sendEventReminders as JobFunction;
    case 'sweep-checkouts':
      return (await import('./sweep-checkouts.js')).sweepExpiredCheckouts as JobFunction;
    case 'send-celebrations':
      return (await import('./send-celebrations.js')).sendCelebrations as JobFunction;
    case 'send-clearance-digest':
      return (await import('./send-clearance-digest.js')).sendClearanceDigest as JobFunction;
    case 'error-issues':
      return (await import('./error-issues.js')).fileErrorIssues as JobFunction;
    case 'reconcile':
      return (await import('./reconcile.js')).reconcileCheckouts as JobFunction;
    case 'purge-answers':
      return (await import('./purge-answers.js')).purgeSensitiveAnswers as JobFunction;
  }
}
