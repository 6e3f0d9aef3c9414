import type { Command } from 'commander';
import { z } from 'zod';
import type { JobName, JobSummary } from '../../jobs/types.js';
import { loadJobFunction } from '../../jobs/registry.js';
import type { Db } from '../../db/connect.js';
import { AppError, EXIT } from '../../errors.js';
import { createProgress } from '../progress.js';
import { isInteractive, printResult, withContext } from '../io.js';
import type { OpenContext } from '../runtime.js';

interface JobCommandSpec {
  name: JobName;
  description: string;
  example: string;
  force?: boolean;
  /** One human line for the summary. */
  describe: (summary: JobSummary & Record<string, unknown>) => string;
  /** The progress's closing text where the counts would tell another story than `describe` (the digest already sent); default the counts. */
  closing?: (summary: JobSummary & Record<string, unknown>) => string | undefined;
  /** The job stops gracefully when asked (its `signal`): the first SIGTERM or SIGINT asks it, a second ends the process. */
  stoppable?: boolean;
}

const optionsSchema = z.object({ json: z.boolean().optional(), dryRun: z.boolean().optional(), force: z.boolean().optional() });

const counts = (summary: Record<string, unknown>): string =>
  Object.entries(summary)
    .filter(([key, value]) => typeof value === 'number' && key !== 'runId')
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');

const describeCounts = (s: JobSummary & Record<string, unknown>): string =>
  `${s.job}: ${s.reason === undefined ? s.outcome : `${s.outcome} (${s.reason})`}${counts(s) ? `, ${counts(s)}` : ''}`;

/** The digest's runs that sent nothing, in words: their counts (sent 0, failed 0) would say nothing true. */
const digestStatus = (s: JobSummary & Record<string, unknown>): string | undefined =>
  s.status === 'already-sent'
    ? `already sent for ${String(s.month)} (use --force to send again)`
    : s.status === 'no-recipients'
      ? 'nobody to send it to: no ADMIN or PASTOR user (add one with `eventops users add --role PASTOR`)'
      : undefined;

const JOBS: JobCommandSpec[] = [
  {
    name: 'send-reminders',
    description: 'email registrants of events whose reminder is due; payment reminders with a pay-now link (suggested: hourly)',
    example: 'eventops send-reminders --dry-run',
    describe: describeCounts,
    stoppable: true,
  },
  {
    name: 'sweep-checkouts',
    description: "expire OPEN checkout sessions past their expiry and confirm them with the card provider (at most 100 a run); scrub staged payloads kept 72 hours past expiry; release unpaid bank-transfer holds past their event's unpaidHoldDays (suggested: hourly)",
    example: 'eventops sweep-checkouts --json',
    describe: (s) =>
      `sweep-checkouts: ${s.outcome}, expired ${String(s.expired)}, scrubbed ${String(s.scrubbed)}${s.confirmed || s.awaitingProvider ? `, confirmed by the card provider ${String(s.confirmed)}, awaiting its word ${String(s.awaitingProvider)}` : ''}${s.holdsReleased || s.holdReminders ? `, holds released ${String(s.holdsReleased)}, hold reminders ${String(s.holdReminders)}` : ''}`,
  },
  {
    name: 'send-celebrations',
    description: "send today's birthday and wedding-anniversary emails, if enabled in Settings (suggested: daily 07:00)",
    example: 'eventops send-celebrations --dry-run',
    describe: describeCounts,
  },
  {
    name: 'send-clearance-digest',
    description: 'send the monthly clearance-compliance digest to ADMIN and PASTOR users (suggested: 1st of the month 07:00)',
    example: 'eventops send-clearance-digest --force',
    force: true,
    describe: (s) => {
      const status = digestStatus(s);
      if (status === undefined) return describeCounts(s);
      return s.outcome === 'ok' ? `send-clearance-digest: ${status}` : `send-clearance-digest: ${s.outcome}, ${status}`;
    },
    closing: digestStatus,
  },
  {
    name: 'error-issues',
    description: 'file one tracker issue per new error fingerprint of the last 7 days; purge rows older than 90 days (suggested: weekly)',
    example: 'eventops error-issues --json',
    describe: describeCounts,
  },
  {
    name: 'purge-answers',
    description: "empty the sensitive answers (medical, allergies, dates of birth) of events that ended more than their sensitiveRetentionDays ago (default 30), recorded in each registration's history, and take them out of the answers card checkouts staged, whatever their status; the other answers stay; delete waiting-list joins that lapsed unconfirmed and closed contact-email changes 30 days on, and empty the body of mail sent 30 days ago, keeping its subject (suggested: weekly)",
    example: 'eventops purge-answers --dry-run',
    // Checkout payloads and forgotten contacts are named only when there were some: most weeks there are none.
    describe: ({ checkoutsPurged, lapsedJoinsForgotten, emailChangesForgotten, sentMailForgotten, ...s }) =>
      `${describeCounts(s)}${checkoutsPurged ? `, checkout payloads purged ${String(checkoutsPurged)}` : ''}` +
      `${lapsedJoinsForgotten ? `, lapsed waiting-list joins deleted ${String(lapsedJoinsForgotten)}` : ''}` +
      `${emailChangesForgotten ? `, closed email changes deleted ${String(emailChangesForgotten)}` : ''}` +
      `${sentMailForgotten ? `, sent mail bodies emptied ${String(sentMailForgotten)}` : ''}`,
  },
];

/** One subcommand per job; each calls the same job function as the HTTP endpoint and the scheduler. */
export function registerJobCommands(program: Command): void {
  for (const spec of JOBS) {
    const command = program
      .command(spec.name)
      .description(spec.description)
      .option('--json', 'print the summary as JSON (and JSON log lines)')
      .option('--dry-run', 'report whom it would email or what it would change; claim, send and write nothing');
    if (spec.force) command.option('--force', 'send again this month and replace the delivered list');
    command.addHelpText(
      'after',
      `\nExample:\n  $ ${spec.example}\n\nExit codes: 0 ok, 1 failed or partial, 75 another run holds the lease, 78 configuration.`,
    );
    command.action(async (raw: unknown) => {
      const options = optionsSchema.parse(raw);
      const run = await loadJobFunction(spec.name);
      const progress = await createProgress({ interactive: isInteractive(), json: Boolean(options.json), label: spec.name });
      // A dry run writes nothing, and migrating on start is a write.
      const summary = await withContext(async (ctx) => {
        const stop = spec.stoppable ? stopOnSignal(ctx) : undefined;
        try {
          if (options.dryRun) await refusePendingMigrations(ctx.db);
          return await run(ctx, {
            trigger: 'cli',
            dryRun: options.dryRun,
            force: options.force,
            signal: stop?.signal,
            onProgress: (c) => progress.update('running', { done: Object.values(c).reduce((a, b) => a + b, 0) }),
          });
        } catch (error) {
          progress.fail(error instanceof Error ? error.message : String(error));
          throw error;
        } finally {
          stop?.remove();
        }
      }, options.dryRun ? { migrate: false } : {});
      const record = summary as JobSummary & Record<string, unknown>;
      // A run that partly or wholly failed ends its progress as failed (a red cross, `"event":"fail"`), not as a success.
      const closing = spec.closing?.(record);
      // The progress says "failed:" itself; a partial run says so in front of its counts.
      const detail = closing ?? (counts(record) || record.outcome);
      if (record.outcome === 'partial' || record.outcome === 'failed') progress.fail(record.outcome === 'partial' ? `partial: ${detail}` : detail);
      else progress.succeed(closing ?? (counts(record) || record.outcome));
      // A dry run's counts are what a real run would do: said so, since "sent 3" alone reads as done.
      const lines = [options.dryRun ? `${spec.describe(record)} (dry run: nothing was sent or changed; a real run would do this)` : spec.describe(record)];
      if (summary.dryRun) lines.push(...(summary.wouldDo ?? []).map((line) => `  would ${line}`));
      printResult(options, summary, lines);
      if (summary.outcome === 'partial' || summary.outcome === 'failed') process.exitCode = EXIT.failure;
    });
  }
}

/**
 * The first SIGTERM or SIGINT (a deploy, systemd, Ctrl-C) asks the run to stop after the sends on the wire,
 * record them and give its claim back, so the next run finishes the event at once and nobody is sent the
 * same reminder twice; a second signal ends the process as before. `remove` (the run is over) gives the
 * signals back: a signal while the context closes stops an embedded PostgreSQL this command started and
 * exits, instead of being taken for the run's and ignored.
 */
function stopOnSignal(ctx: OpenContext): { signal: AbortSignal; remove(): void } {
  const controller = new AbortController();
  const removeListeners = (): void => {
    process.removeListener('SIGTERM', onSignal);
    process.removeListener('SIGINT', onSignal);
  };
  function onSignal(signal: NodeJS.Signals): void {
    // Only the first: with no listener left, the next one ends the process (Node's default, or the embedded
    // server's guard, which took this first signal as the command's and handles the next).
    removeListeners();
    ctx.logger.warn({ signal }, 'stopping after the sends under way; a second signal stops at once');
    controller.abort();
  }
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // An embedded PostgreSQL this command started is stopped by the second signal, not the first.
  const giveSignalsBack = ctx.takeOverSignals();
  return {
    signal: controller.signal,
    remove() {
      removeListeners();
      giveSignalsBack();
    },
  };
}

/** A dry run on a schema older than this version would fail on a missing column, or answer wrongly: say why instead. */
async function refusePendingMigrations(db: Db): Promise<void> {
  const { migrationsPending } = await import('../../db/migrate.js');
  if (!(await migrationsPending(db))) return;
  throw new AppError('migrations_pending', 'the database has migrations to apply, and a dry run changes nothing', {
    suggestion: 'run `eventops migrate` (or the job without --dry-run, which migrates when MIGRATE_ON_START allows) first',
  });
}
