import type { AppConfig } from '../../src/config/types.js';
import type { FieldCipher } from '../../src/crypto/field-cipher.js';
import type { BenchDatabase } from './database.js';
import type { MailSink } from './mail-sink.js';
import type { ProcessRun } from './processes.js';
import { maxOf, median, round } from './stats.js';

/** What every case gets from run.ts. */
export interface BenchEnv {
  /** BENCH_SCALE: multiplies every row count. */
  scale: number;
  tmpDir: string;
  /** An empty working directory (no .env) for the processes under test. */
  cwd: string;
  database: BenchDatabase;
  sink: MailSink;
  /** The environment of a production deployment on `databaseUrl`, mailing the sink. */
  appEnv(databaseUrl: string, extra?: Record<string, string>): Record<string, string>;
  /** The same configuration, in process, for writing encrypted rows. */
  config: AppConfig;
  cipher: FieldCipher;
  log(message: string): void;
}

/** One line of bench/results.json, in the schema. */
export interface ResultRow {
  case: string;
  scale: number;
  ours_ms: number;
  reference_ms: number;
  ratio: number;
  target: string;
  lower_is_better: true;
  peak_rss_mb: number | null;
}

export interface CaseResult {
  row: ResultRow;
  /** Whether the target holds; undefined for rows that only inform. */
  met: boolean | undefined;
  /** A watch row: nobody waits for this path, so its limit only guards against a regression (a miss fails the summary line). */
  watch?: boolean;
}

/** What case 9 (the rush) reports for the bench's one summary line. */
export interface RushSummary {
  pagesP99Ms: number;
  postsP99Ms: number;
  confirmationsP95Ms: number;
  placesTaken: number;
  capacity: number;
}

export interface CaseReport {
  results: CaseResult[];
  /** Lines printed after the table (throughput, EXPLAIN, growth factors). */
  notes: string[];
  rush?: RushSummary;
}

export type Side = 'ours' | 'reference';

export interface Alternation<T> {
  warmup: number;
  reps: number;
  /** Resets state before each run, outside the timing. */
  before?: (side: Side) => Promise<void>;
  ours: () => Promise<T>;
  reference: () => Promise<T>;
  log?: (message: string) => void;
}

/**
 * Warm-up runs of both sides first, then `reps` rounds in which the order
 * flips every round (ours, reference / reference, ours), so drift in the
 * machine's state (page cache, autovacuum, CPU clocks) falls on both sides.
 */
export async function alternate<T>(spec: Alternation<T>): Promise<{ ours: T[]; reference: T[] }> {
  const samples = { ours: [] as T[], reference: [] as T[] };
  const once = async (side: Side, keep: boolean) => {
    await spec.before?.(side);
    const sample = await (side === 'ours' ? spec.ours() : spec.reference());
    if (keep) samples[side].push(sample);
  };
  for (let i = 0; i < spec.warmup; i++) {
    await once('ours', false);
    await once('reference', false);
  }
  for (let rep = 0; rep < spec.reps; rep++) {
    const order: Side[] = rep % 2 === 0 ? ['ours', 'reference'] : ['reference', 'ours'];
    for (const side of order) await once(side, true);
    spec.log?.(`  round ${rep + 1}/${spec.reps} done`);
  }
  return samples;
}

/** A time-ratio row: ours/reference medians against a ratio target. */
export function ratioRow(input: {
  name: string;
  scale: number;
  ours: number[];
  reference: number[];
  targetRatio?: number;
  peakRssMb: number | null;
  extraTarget?: { text: string; met: boolean };
  /** A watch row (see CaseResult.watch): its target reads "watch: ≤ N×". */
  watch?: boolean;
}): CaseResult {
  const ours = median(input.ours);
  const reference = median(input.reference);
  const ratio = ours / reference;
  const targetParts: string[] = [];
  let met: boolean | undefined;
  if (input.targetRatio !== undefined) {
    targetParts.push(`${input.watch ? 'watch: ' : ''}≤ ${input.targetRatio}×`);
    met = ratio <= input.targetRatio;
  }
  if (input.extraTarget) {
    targetParts.push(input.extraTarget.text);
    met = (met ?? true) && input.extraTarget.met;
  }
  return {
    row: {
      case: input.name,
      scale: input.scale,
      ours_ms: round(ours, 1),
      reference_ms: round(reference, 1),
      ratio: round(ratio, 2),
      target: targetParts.length > 0 ? targetParts.join(', ') : 'informational',
      lower_is_better: true,
      peak_rss_mb: input.peakRssMb === null ? null : round(input.peakRssMb, 1),
    },
    met,
    ...(input.watch ? { watch: true } : {}),
  };
}

/**
 * The CPU time each side used (median of the measured rounds): on a machine
 * shared with other work it moves far less than wall time, so it shows
 * whether a change cut work or only waiting.
 */
export function cpuNote(label: string, samples: { ours: ProcessRun[]; reference: ProcessRun[] }): string {
  const cpu = (runs: ProcessRun[]) => median(runs.flatMap((r) => (r.cpuMs === undefined ? [] : [r.cpuMs])));
  const ours = cpu(samples.ours);
  const reference = cpu(samples.reference);
  return `${label}: CPU time (user + system), median: ours ${Math.round(ours)} ms, reference ${Math.round(reference)} ms (${round(ours / reference, 2)}×)`;
}

/** When a mail-bound run's messages reached the sink, from the process's start. */
export interface MailPhases {
  /** Until the first message was accepted: start-up, the job's reads and claims, the first message. */
  firstMs: number;
  /** From the first message accepted to the last. */
  sendingMs: number;
}

/** The phases of the run that started at `startedAt` (performance.now()), from the sink's acceptance times of its recipients. */
export function mailPhases(sink: MailSink, recipients: string[], startedAt: number): MailPhases {
  const times = recipients.flatMap((address) => {
    const at = sink.acceptedAt(address);
    return at !== undefined && at >= startedAt ? [at] : [];
  });
  const first = Math.min(...times);
  return { firstMs: first - startedAt, sendingMs: Math.max(...times) - first };
}

export function phasesNote(label: string, samples: { ours: MailPhases[]; reference: MailPhases[] }): string {
  const at = (runs: MailPhases[], key: keyof MailPhases) => Math.round(median(runs.map((r) => r[key])));
  return (
    `${label}: first message accepted after ${at(samples.ours, 'firstMs')} ms (reference ${at(samples.reference, 'firstMs')} ms), ` +
    `then sending took ${at(samples.ours, 'sendingMs')} ms (reference ${at(samples.reference, 'sendingMs')} ms); medians`
  );
}

/** A time-ratio row from whole-process runs: wall times compared, peak RSS of ours. */
export function processRow(input: {
  name: string;
  scale: number;
  samples: { ours: ProcessRun[]; reference: ProcessRun[] };
  targetRatio?: number;
  extraTarget?: { text: string; met: boolean };
  watch?: boolean;
}): CaseResult {
  return ratioRow({
    name: input.name,
    scale: input.scale,
    ours: input.samples.ours.map((r) => r.ms),
    reference: input.samples.reference.map((r) => r.ms),
    targetRatio: input.targetRatio,
    peakRssMb: maxOf(input.samples.ours.map((r) => r.rssMb)),
    extraTarget: input.extraTarget,
    watch: input.watch,
  });
}
