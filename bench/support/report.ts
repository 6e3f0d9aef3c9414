import fs from 'node:fs';
import type { CaseResult, ResultRow } from './harness.js';
import { RESULTS_FILE } from './paths.js';

function formatMs(ms: number): string {
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  return `${ms.toFixed(1)} ms`;
}

/** The one table: case, scale, ours (median), reference (median), ratio, target, met, peak RSS of our process. */
export function formatTable(results: CaseResult[]): string {
  const header = ['case', 'scale', 'ours (median)', 'reference (median)', 'ratio', 'target', 'met', 'peak RSS (ours)'];
  const rows = results.map(({ row, met }) => [
    row.case,
    String(row.scale),
    formatMs(row.ours_ms),
    formatMs(row.reference_ms),
    `${row.ratio.toFixed(2)}×`,
    row.target,
    met === undefined ? '-' : met ? 'yes' : 'NO',
    row.peak_rss_mb === null ? '-' : `${Math.round(row.peak_rss_mb)} MB`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] as string).length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] as number)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export function writeResults(results: CaseResult[]): void {
  const rows: ResultRow[] = results.map((r) => r.row);
  fs.writeFileSync(RESULTS_FILE, JSON.stringify(rows, null, 2) + '\n');
}
