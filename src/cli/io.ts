import type { OpenContext } from './runtime.js';

export interface OutputOptions {
  json?: boolean;
}

/** Prints a command's result: its JSON form with --json, else the human lines. */
export function printResult(options: OutputOptions, data: unknown, human: string | string[]): void {
  if (options.json) {
    process.stdout.write(JSON.stringify(data, null, 2) + '\n');
    return;
  }
  const lines = Array.isArray(human) ? human : [human];
  process.stdout.write(lines.join('\n') + (lines.length > 0 ? '\n' : ''));
}

/** Loads configuration, opens the context for one command and always closes it. */
export async function withContext<T>(
  fn: (ctx: OpenContext) => Promise<T>,
  options: { migrate?: boolean } = {},
): Promise<T> {
  // Loaded here, not at the top: `eventops --help` and usage errors never load the database and logging stack.
  const { loadRuntimeConfig, openContext } = await import('./runtime.js');
  const ctx = await openContext(loadRuntimeConfig(), options);
  try {
    return await fn(ctx);
  } finally {
    await ctx.close();
  }
}

export function isInteractive(): boolean {
  return Boolean(process.stdout.isTTY) && process.env.CI !== 'true';
}
