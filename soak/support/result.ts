/** One row of the soak summary and of soak/results.json. */
export interface CaseResult {
  case: string;
  /** Load applied: rounds, processes, requests, sizes. */
  load: string | number;
  /** Faults injected: how many, and of which kinds. */
  faults: string | number;
  /** Inputs tried: emails expected, requests sent, deliveries made. */
  inputs: number;
  /** Inputs that should have had an effect and had none (an email never delivered, a request that did nothing). */
  lost: number;
  /** Effects that happened more than once; for crash cases only what was in flight may, and it is counted. */
  duplicates: number;
  passed: boolean;
}

export interface CaseOptions {
  /** Keep repeating rounds until this much time has passed (at least one round). */
  durationMs?: number;
  /** At most this many rounds. */
  runs?: number;
}

/**
 * Runs `round` until the time budget or the round limit is spent (always at
 * least once). Each round reports its own problems; the first few are kept.
 */
export async function repeatRounds(
  options: CaseOptions,
  defaultMs: number,
  round: (index: number) => Promise<string[]>,
): Promise<{ rounds: number; problems: string[] }> {
  const deadline = Date.now() + (options.durationMs ?? defaultMs);
  const maxRuns = options.runs ?? Number.POSITIVE_INFINITY;
  const problems: string[] = [];
  let rounds = 0;
  do {
    const found = await round(rounds);
    rounds++;
    problems.push(...found.map((problem) => `round ${rounds}: ${problem}`));
  } while (Date.now() < deadline && rounds < maxRuns);
  return { rounds, problems };
}

export function reportProblems(name: string, problems: string[]): void {
  for (const problem of problems.slice(0, 20)) process.stderr.write(`${name}: ${problem}\n`);
  if (problems.length > 20) process.stderr.write(`${name}: … and ${problems.length - 20} more\n`);
}
