import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/main.js';
import { ROOT } from '../support/cli.js';

/** The five schedule fields of a crontab line with their ranges (day of week 7 is Sunday, as 0). */
const FIELDS = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12 },
  { name: 'day of week', min: 0, max: 7 },
] as const;

/** The values one numeric crontab field selects (`*`, `a`, `a-b`, `*\/n`, `a-b/n` and comma lists), or an error. */
function expandField(text: string, range: { min: number; max: number }): number[] {
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const match = /^(\*|(\d+)(?:-(\d+))?)(?:\/(\d+))?$/.exec(part);
    if (!match) throw new Error(`"${part}" is not a crontab field`);
    const from = match[1] === '*' ? range.min : Number(match[2]);
    const to = match[1] === '*' ? range.max : match[3] === undefined ? from : Number(match[3]);
    const step = match[4] === undefined ? 1 : Number(match[4]);
    if (from < range.min || to > range.max || from > to || step < 1) throw new Error(`"${part}" is outside ${range.min}-${range.max}`);
    for (let value = from; value <= to; value += step) values.add(value);
  }
  return [...values].sort((a, b) => a - b);
}

interface CronJob {
  line: string;
  /** False for a job line commented out, to be enabled by removing its "# ". */
  enabled: boolean;
  schedule: number[][];
  subcommand: string;
  args: string[];
}

/** A commented-out job: "# " and then a schedule and an eventops command, not prose. */
const COMMENTED_JOB = /^#\s*((?:\S+\s+){5}cd \S+ && eventops .*)$/;

/** Every job line, the commented-out ones included (they must be valid once enabled). */
function crontabJobs(): CronJob[] {
  const text = fs.readFileSync(path.join(ROOT, 'crontab.example'), 'utf8');
  return text
    .split('\n')
    .map((line) => line.trim())
    .map((line) => ({ line, enabled: !line.startsWith('#'), job: COMMENTED_JOB.exec(line)?.[1] ?? line }))
    .filter(({ line, enabled }) => line !== '' && (enabled || COMMENTED_JOB.test(line)) && !/^[A-Z_]+=/.test(line))
    .map(({ line, enabled, job }) => {
      const parts = job.split(/\s+/);
      const schedule = FIELDS.map((field, i) => expandField(parts[i] ?? '', field));
      const command = parts.slice(5).join(' ');
      const match = /&& eventops ([a-z-]+)((?: --?[a-z-]+)*) >> \S+ 2>&1$/.exec(command);
      if (!match) throw new Error(`not an eventops job line: ${line}`);
      return { line, enabled, schedule, subcommand: match[1] as string, args: (match[2] ?? '').trim().split(' ').filter(Boolean) };
    });
}

const hoursOf = (job: CronJob | undefined) => job?.schedule[1];
const daysOf = (job: CronJob | undefined) => job?.schedule[2];
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('crontab.example', () => {
  it('every job line has five valid schedule fields and names a real eventops subcommand', async () => {
    const jobs = crontabJobs();
    expect(jobs.map((job) => job.subcommand).sort()).toEqual([
      'error-issues',
      'purge-answers',
      'reconcile',
      'send-celebrations',
      'send-clearance-digest',
      'send-reminders',
      'sweep-checkouts',
      'sync-website',
    ]);
    const known = new Map((await buildProgram()).commands.map((command) => [command.name(), command]));
    for (const job of jobs) {
      const command = known.get(job.subcommand);
      expect(command, job.line).toBeDefined();
      for (const arg of job.args) expect(command?.options.map((o) => o.long), job.line).toContain(arg);
    }
  });

  it('retries the daily and monthly jobs that the claims and the already-sent check make harmless', () => {
    const jobs = new Map(crontabJobs().map((job) => [job.subcommand, job]));
    // Celebrations: hourly 07–20; each greeting is claimed, so later runs send only what is missing.
    expect(hoursOf(jobs.get('send-celebrations'))).toEqual(range(7, 20));
    // Clearance digest: hourly 07–10 on the 1st to the 7th; the month is recorded once sent.
    expect(hoursOf(jobs.get('send-clearance-digest'))).toEqual(range(7, 10));
    expect(daysOf(jobs.get('send-clearance-digest'))).toEqual(range(1, 7));
    // Error digest: Mondays hourly 09–12; an open issue is never filed twice.
    expect(hoursOf(jobs.get('error-issues'))).toEqual(range(9, 12));
    // The purge of sensitive answers: Mondays hourly 09–12, as the scheduler's week opens; a purged registration is not purged again.
    expect(hoursOf(jobs.get('purge-answers'))).toEqual(range(9, 12));
    expect(jobs.get('purge-answers')?.schedule[4]).toEqual([1]);
    // Reminders, checkout cleanup and website sync already run every hour or more often.
    for (const job of ['send-reminders', 'sweep-checkouts', 'sync-website']) expect(hoursOf(jobs.get(job))).toEqual(range(0, 23));
  });

  it('reconcile is commented out, with how to enable it once card payments are configured: without them it exits 78 every hour', () => {
    const jobs = crontabJobs();
    expect(jobs.filter((job) => !job.enabled).map((job) => job.subcommand)).toEqual(['reconcile']);
    // The comment block right above the line: back to the previous job line.
    const lines = fs.readFileSync(path.join(ROOT, 'crontab.example'), 'utf8').split('\n');
    const at = lines.findIndex((line) => line === jobs.find((job) => job.subcommand === 'reconcile')?.line);
    const previousJob = lines.slice(0, at).findLastIndex((line) => !line.startsWith('#') && line.trim() !== '');
    const note = lines.slice(previousJob + 1, at).join('\n');
    expect(note).toMatch(/PSP_SECRET_KEY and PSP_WEBHOOK_SECRET/);
    expect(note).toMatch(/exits 78 every hour/);
    expect(note).toMatch(/remove the "# "/);
  });

  it('reconcile runs before the checkout cleanup in each hour, so a host back from an outage registers what was paid meanwhile before it expires the checkouts', () => {
    const jobs = new Map(crontabJobs().map((job) => [job.subcommand, job]));
    const minute = (job: string) => jobs.get(job)?.schedule[0]?.[0] ?? -1;
    expect(minute('reconcile')).toBeGreaterThanOrEqual(0);
    expect(minute('reconcile') + 10).toBeLessThanOrEqual(minute('sweep-checkouts'));
  });
});
