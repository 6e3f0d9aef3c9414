import type { BenchEnv, CaseReport, CaseResult } from '../support/harness.js';
import { round } from '../support/stats.js';
import type { ScaledMeasurement } from './sweep.js';

export interface GrowthSubject {
  label: string;
  /** Measures the case at a scale (fewer rounds at the extra scales: they only show the trend). */
  measure(scale: number, name: string): Promise<ScaledMeasurement>;
  /** The ×1 measurement already taken by the case itself. */
  atScale: ScaledMeasurement;
  /** "touched": growth should follow rows touched; "flat": rows touched are constant, so should time. */
  expectation: 'touched' | 'flat';
  /** Extra lines about the largest measurement (case 5: its EXPLAIN). */
  describe?: (largest: ScaledMeasurement) => string[];
}

/** Slack over the ideal growth before the row says "NO": process start-up and noise are not data. */
const SLACK = 1.25;

/**
 * Case 7: cases 3, 5 and 6 again at ×0.1 and ×10 of BENCH_SCALE. Prints, per
 * step, the growth of our time next to the growth of rows touched and of the
 * table: time should follow rows touched, never table size.
 */
export async function growth(env: BenchEnv, subjects: GrowthSubject[]): Promise<CaseReport> {
  const results: CaseResult[] = [];
  const notes: string[] = [];
  for (const subject of subjects) {
    const small = await subject.measure(round(env.scale * 0.1, 4), `7 growth: ${subject.label} ×0.1`);
    const large = await subject.measure(round(env.scale * 10, 4), `7 growth: ${subject.label} ×10`);
    const steps = [small, subject.atScale, large];
    const lines: string[] = [];
    for (let i = 1; i < steps.length; i++) {
      const before = steps[i - 1] as ScaledMeasurement;
      const after = steps[i] as ScaledMeasurement;
      const time = after.result.row.ours_ms / before.result.row.ours_ms;
      const touched = after.touched / before.touched;
      const table = after.tableRows / before.tableRows;
      const allowed = (subject.expectation === 'touched' ? touched : 1) * SLACK;
      const measured = i === 1 ? small : large;
      const target = `growth ≤ ${round(allowed, 2)}× (${subject.expectation === 'touched' ? 'rows touched' : 'flat'})`;
      measured.result.row.target = target;
      measured.result.met = time <= allowed;
      lines.push(
        `  ${before.tableRows.toLocaleString('en')} → ${after.tableRows.toLocaleString('en')} rows (table ×${round(table, 1)}, ` +
          `touched ×${round(touched, 1)}): ours ${Math.round(before.result.row.ours_ms)} → ${Math.round(after.result.row.ours_ms)} ms, ` +
          `growth ×${round(time, 2)}; reference growth ×${round(after.result.row.reference_ms / before.result.row.reference_ms, 2)}`,
      );
    }
    results.push(small.result, large.result);
    notes.push(`case 7, growth of ${subject.label}:`, ...lines, ...(subject.describe?.(large) ?? []));
  }
  return { results, notes };
}
