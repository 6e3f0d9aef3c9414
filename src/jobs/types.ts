import type { AppContext } from '../context.js';

export const JOB_NAMES = ['send-reminders', 'sweep-checkouts', 'send-celebrations', 'send-clearance-digest', 'error-issues', 'reconcile', 'purge-answers'] as const;
export type JobName = (typeof JOB_NAMES)[number];
export type JobTrigger = 'cli' | 'http' | 'scheduler';
export type JobOutcome = 'ok' | 'partial' | 'failed' | 'skipped';

export interface JobOptions {
  trigger: JobTrigger;
  /** Report what would happen; claim, send and write nothing. */
  dryRun?: boolean;
  /** send-clearance-digest only: send again this month and replace the delivered list. */
  force?: boolean;
  /** error-issues only: purge old rows and file nothing (the in-app scheduler without ERROR_DIGEST or a tracker). */
  purgeOnly?: boolean;
  /** reconcile only: how far back to compare with the provider (default 72 hours). */
  sinceMs?: number;
  /**
   * Aborted when the server is stopping: send-reminders starts no further send, lets those on the wire
   * finish and be recorded, and leaves the rest of its event for the next run. Other jobs run to the end.
   */
  signal?: AbortSignal;
  /** Live counts for a spinner or log lines. */
  onProgress?: (counts: Record<string, number>) => void;
}

/** Every job's summary: these fields plus its own counts. */
export interface JobSummary {
  job: JobName;
  outcome: JobOutcome;
  dryRun: boolean;
  /** The job_runs row; absent on a dry run, which writes nothing. */
  runId?: number;
  /** Dry run: whom it would email or what it would change. */
  wouldDo?: string[];
  /** Why a `skipped` run did nothing, in words (a feature off, a setting to change). */
  reason?: string;
}

export type JobFunction<S extends JobSummary = JobSummary> = (ctx: AppContext, options: JobOptions) => Promise<S>;
