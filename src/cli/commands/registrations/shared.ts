import os from 'node:os';
import { z } from 'zod';
import { UsageError } from '../../../errors.js';

/** The operating-system user running the command, recorded in the registration's history. */
export function operatingSystemUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? 'unknown';
  }
}

export function parseOrUsage<S extends z.ZodType>(schema: S, raw: unknown, command: string): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.length > 0 ? `--${issue.path.join('.')}` : 'value'} ${issue.message}`);
  throw new UsageError(`invalid arguments: ${problems.join('; ')}`, `see \`eventops registrations ${command} --help\``);
}

export const noteSchema = z.string().trim().min(1, { error: 'must not be empty' }).max(2000, { error: 'at most 2000 characters' }).optional();

/** Columns padded to their widest cell, two spaces apart. */
export function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)];
}
