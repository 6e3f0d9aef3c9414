import type { Knex } from 'knex';
import type { AppContext } from '../context.js';
import { renewLease } from '../db/leases.js';
import { AppError } from '../errors.js';
import { purgeEndedRateLimits } from '../db/rate-limits.js';
import { normaliseErrorMessage } from '../ops/error-log.js';
import { withJobLease } from './lease.js';
import { runRecordedJob } from './run-recorded.js';
import { createTracker, fingerprintMarker, type Tracker } from './tracker.js';
import type { JobOptions, JobSummary } from './types.js';

export interface ErrorIssuesSummary extends JobSummary {
  job: 'error-issues';
  /** Fingerprints seen in the last 7 days. */
  groups: number;
  /** Issues filed (on a dry run: issues it would file). */
  filed: number;
  /** Groups skipped because an open issue carries their marker. */
  alreadyOpen: number;
  purgedErrors: number;
  /** Daily page-view counters (one per path and day) deleted. */
  purgedRouteViews: number;
}

export const ERROR_ISSUES_LEASE = 'error-issues';
export const ERROR_ISSUES_LEASE_MS = 15 * 60_000;
const WINDOW = '7 days';
const RETENTION = '90 days';
const TITLE_MAX = 120;
const PURGE_BATCH = 20_000;
const DAY_MS = 24 * 60 * 60_000;

/** A fingerprint's counts over the window. */
export interface ErrorGroupCounts {
  fingerprint: string;
  count: number;
  first_seen: Date;
  last_seen: Date;
}

/** A group with its newest row as the sample an issue shows. */
export interface ErrorGroup extends ErrorGroupCounts {
  error_class: string;
  message: string;
  stack: string | null;
  source: string;
}

/**
 * Rule 4 and the weekly error digest: rows older than 90 days purged (on every
 * run, with or without a tracker), then the last 7 days of error rows grouped
 * by fingerprint and one tracker issue filed per group without an open issue.
 * Nothing is marked locally: an issue's marker in the tracker is the only
 * record, so a run that fails part-way loses nothing and the next run files
 * what is still missing. The purge never touches the 7-day window.
 */
export async function fileErrorIssues(ctx: AppContext, options: JobOptions): Promise<ErrorIssuesSummary> {
  return runRecordedJob<ErrorIssuesSummary>(ctx, 'error-issues', options, async () => {
    const dryRun = Boolean(options.dryRun);
    const summary: Omit<ErrorIssuesSummary, 'runId'> = {
      job: 'error-issues',
      outcome: 'ok',
      dryRun,
      groups: 0,
      filed: 0,
      alreadyOpen: 0,
      purgedErrors: 0,
      purgedRouteViews: 0,
    };
    const now = ctx.clock.now();
    // Retention does not depend on the tracker: old rows go on every run, whatever the tracker does
    // (which never looks further back than 7 days), so a missing or broken tracker cannot let the tables
    // grow. The purge runs beside the grouping and the tracker listing, and always ends before any
    // filing and before the run answers, even when the listing fails.
    const purging = dryRun ? countPurgeable(ctx, now) : purgeOldRows(ctx, now);
    purging.catch(() => undefined); // awaited below; never an unhandled rejection meanwhile
    const besidePurge = async <T>(work: () => Promise<T>): Promise<T> => {
      const [purged, done] = await Promise.allSettled([purging, work()]);
      if (purged.status === 'rejected') throw purged.reason;
      summary.purgedErrors = purged.value.errors;
      summary.purgedRouteViews = purged.value.routeViews;
      if (done.status === 'rejected') throw done.reason;
      return done.value;
    };
    try {
      const trackerConfig = ctx.config.tracker;
      if (!trackerConfig || options.purgeOnly) {
        await besidePurge(async () => undefined);
        const why = trackerConfig ? 'ERROR_DIGEST is not true' : 'no tracker: TRACKER_TOKEN and TRACKER_REPO are not both set';
        ctx.logger.info(`error-issues filed nothing: ${why}`);
        const wouldDo = dryRun ? [purgeLine(summary)] : undefined;
        const reason = `${why} (old rows ${dryRun ? 'would still be' : 'were still'} purged)`;
        return { ...summary, outcome: 'skipped', reason, ...(wouldDo ? { wouldDo } : {}) };
      }

      if (dryRun) {
        const { groups, open } = await besidePurge(async () => loadGroups(ctx, await createTracker(trackerConfig, ctx.logger), now));
        const samples = await sampleGroups(ctx, now, groups.filter((g) => !open.has(g.fingerprint)));
        const wouldDo: string[] = [];
        for (const group of groups) {
          const issue = open.get(group.fingerprint);
          if (issue === undefined) {
            const title = issueTitle(samples.get(group.fingerprint) ?? { error_class: 'Error', message: '' });
            wouldDo.push(`file issue "${title}" (${group.count} in 7 days, fingerprint ${group.fingerprint})`);
          } else wouldDo.push(`skip fingerprint ${group.fingerprint}: issue #${issue} is open`);
        }
        wouldDo.push(purgeLine(summary));
        return {
          ...summary,
          groups: groups.length,
          filed: groups.filter((g) => !open.has(g.fingerprint)).length,
          alreadyOpen: groups.filter((g) => open.has(g.fingerprint)).length,
          wouldDo,
        };
      }

      return await withJobLease(ctx, ERROR_ISSUES_LEASE, ERROR_ISSUES_LEASE_MS, async (holder) => {
        const tracker = await createTracker(trackerConfig, ctx.logger);
        const { groups, open } = await besidePurge(() => loadGroups(ctx, tracker, now));
        summary.groups = groups.length;
        const samples = await sampleGroups(ctx, now, groups.filter((g) => !open.has(g.fingerprint)));
        for (const counted of groups) {
          if (open.has(counted.fingerprint)) {
            summary.alreadyOpen++;
            continue;
          }
          // Every group has a row in the window (the purge never reaches it), so a sample.
          const group = samples.get(counted.fingerprint) ?? { ...counted, error_class: 'Error', message: '', stack: null, source: 'unknown' };
          // GitHub paces issue creation (about one every few seconds): keep the lease for a long list.
          // A run that lost it (a slow tracker or purge outlasted it) stops: the one that took over files from a newer list.
          if (!(await renewLease(ctx.db, { name: ERROR_ISSUES_LEASE, holder, now: ctx.clock.now(), ttlMs: ERROR_ISSUES_LEASE_MS }))) {
            throw new AppError('lease_lost', `another run took over "${ERROR_ISSUES_LEASE}" while this one was listing; it files the groups`);
          }
          const issue = await tracker.createIssue({ title: issueTitle(group), body: issueBody(group) });
          summary.filed++;
          ctx.logger.info({ fingerprint: group.fingerprint, issue: issue.number }, 'filed an issue for an error group');
          options.onProgress?.({ filed: summary.filed, alreadyOpen: summary.alreadyOpen });
        }
        return summary;
      });
    } finally {
      await purging.catch(() => undefined);
    }
  });
}

async function loadGroups(ctx: AppContext, tracker: Tracker, now: Date): Promise<{ groups: ErrorGroupCounts[]; open: Map<string, number> }> {
  const groups = await groupRecentErrors(ctx, now);
  // No groups, no need to ask the tracker anything.
  const open = groups.length > 0 ? await tracker.openIssueFingerprints() : new Map<string, number>();
  return { groups, open };
}

/** One GROUP BY over the window: counts and first/last seen per fingerprint, the largest group first. */
export async function groupRecentErrors(ctx: AppContext, now: Date): Promise<ErrorGroupCounts[]> {
  const { rows } = await ctx.db.raw<{ rows: ErrorGroupCounts[] }>(
    `SELECT fingerprint, count(*)::int AS count, min(created_at) AS first_seen, max(created_at) AS last_seen
     FROM error_logs
     WHERE created_at > ?::timestamptz - ?::interval
     GROUP BY fingerprint
     ORDER BY count DESC, fingerprint`,
    [now, WINDOW],
  );
  return rows;
}

/** The last 7 days' error groups with their newest row, largest first: what `eventops errors` shows without a tracker. */
export async function recentErrorGroups(ctx: AppContext, now: Date): Promise<ErrorGroup[]> {
  const groups = await groupRecentErrors(ctx, now);
  const samples = await sampleGroups(ctx, now, groups);
  return groups.flatMap((group) => samples.get(group.fingerprint) ?? []);
}

/**
 * The newest row of each group to file, as its sample, in one statement: one
 * backward step through the (fingerprint, created_at) index per group. Only
 * groups without an open issue need one, so a week of thousands of known
 * faults reads no message or stack at all.
 */
async function sampleGroups(ctx: AppContext, now: Date, groups: ErrorGroupCounts[]): Promise<Map<string, ErrorGroup>> {
  if (groups.length === 0) return new Map();
  const { rows } = await ctx.db.raw<{ rows: Array<Pick<ErrorGroup, 'fingerprint' | 'error_class' | 'message' | 'stack' | 'source'>> }>(
    `SELECT g.fingerprint, s.error_class, s.message, s.stack, s.source
     FROM unnest(?::text[]) AS g(fingerprint)
     CROSS JOIN LATERAL (
       SELECT e.error_class, e.message, e.stack, e.source
       FROM error_logs e
       WHERE e.fingerprint = g.fingerprint AND e.created_at > ?::timestamptz - ?::interval
       ORDER BY e.created_at DESC, e.id DESC
       LIMIT 1
     ) s`,
    [groups.map((g) => g.fingerprint), now, WINDOW],
  );
  const counts = new Map(groups.map((g) => [g.fingerprint, g]));
  return new Map(rows.flatMap((row) => {
    const group = counts.get(row.fingerprint);
    return group ? [[row.fingerprint, { ...group, ...row }] as const] : [];
  }));
}

const purgeLine = (purge: { purgedErrors: number; purgedRouteViews: number }) =>
  `delete ${purge.purgedErrors} error rows and ${purge.purgedRouteViews} daily page-view counters older than 90 days`;

/**
 * Error rows go in set-based batches: each statement is short, so a first
 * purge of a large backlog neither hits the statement timeout nor holds locks
 * for long. Each batch walks the created_at index on from where the last one
 * stopped (never back over the entries it just deleted) and deletes by row
 * address (a TID scan, no primary-key probe per row). Page-view counters are
 * one row per path and day, and rate-limit counters whose window ended a day
 * ago would restart at 1 anyway.
 */
async function purgeOldRows(ctx: AppContext, now: Date): Promise<{ errors: number; routeViews: number }> {
  let errors = 0;
  let from: Date | null = null;
  for (;;) {
    const result: { rows: Array<{ deleted: number; last: Date | null }> } = await ctx.db.raw(
      `WITH gone AS (
         DELETE FROM error_logs WHERE ctid = ANY(ARRAY(
           SELECT ctid FROM error_logs
           WHERE created_at < ?::timestamptz - ?::interval AND created_at >= coalesce(?::timestamptz, '-infinity')
           ORDER BY created_at
           LIMIT ?
         ))
         RETURNING created_at
       )
       SELECT count(*)::int AS deleted, max(created_at) AS last FROM gone`,
      [now, RETENTION, from, PURGE_BATCH],
    );
    const batch = result.rows[0] ?? { deleted: 0, last: null };
    errors += batch.deleted;
    if (batch.deleted < PURGE_BATCH) break;
    from = batch.last;
  }
  const routeViews = await ctx.db('route_view_days').where('day', '<', oldestKeptDay(ctx, now)).delete();
  await purgeEndedRateLimits(ctx.db, new Date(now.getTime() - DAY_MS));
  return { errors, routeViews };
}

/** The UTC day 90 days before now: counters of earlier days are purged. */
function oldestKeptDay(ctx: AppContext, now: Date) {
  return ctx.db.raw(`((?::timestamptz - ?::interval) AT TIME ZONE 'UTC')::date`, [now, RETENTION]);
}

async function countPurgeable(ctx: AppContext, now: Date): Promise<{ errors: number; routeViews: number }> {
  const cutoff = ctx.db.raw('?::timestamptz - ?::interval', [now, RETENTION]);
  const count = async (query: Knex.QueryBuilder) => Number((await query.count<Array<{ n: number }>>({ n: '*' }).first())?.n ?? 0);
  const [errors, routeViews] = await Promise.all([
    count(ctx.db('error_logs').where('created_at', '<', cutoff)),
    count(ctx.db('route_view_days').where('day', '<', oldestKeptDay(ctx, now))),
  ]);
  return { errors, routeViews };
}

/** `[eventops] <ErrorClass>: <message without numbers, ids, emails or quoted values>`, one line, bounded. */
export function issueTitle(group: Pick<ErrorGroup, 'error_class' | 'message'>): string {
  const title = `[eventops] ${group.error_class}: ${normaliseErrorMessage(group.message)}`;
  return title.length <= TITLE_MAX ? title : `${title.slice(0, TITLE_MAX - 1).trimEnd()}…`;
}

export function issueBody(group: ErrorGroup): string {
  const lines = [
    `This error happened **${group.count}** time${group.count === 1 ? '' : 's'} in the last 7 days.`,
    '',
    `- First seen: ${group.first_seen.toISOString()}`,
    `- Last seen: ${group.last_seen.toISOString()}`,
    `- Source: \`${group.source}\``,
    `- Fingerprint: \`${group.fingerprint}\``,
    '',
    'Sample message:',
    '',
    codeBlock(redact(group.message)),
  ];
  if (group.stack) lines.push('', 'Stack:', '', codeBlock(redact(group.stack)));
  lines.push(
    '',
    'Filed by `eventops error-issues`. While this issue is open, the same fault is not filed again; close it once fixed.',
    '',
    fingerprintMarker(group.fingerprint),
  );
  return lines.join('\n');
}

/** Email addresses are member data; they do not belong in the tracker. */
function redact(text: string): string {
  return text.replace(/[\w.+-]+@[\w-]+\.[\w.-]+/g, '<email>');
}

/** A fence longer than any run of backticks inside, so the content cannot close it. */
function codeBlock(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}text\n${text}\n${fence}`;
}
