import os from 'node:os';
import { z } from 'zod';

/** The operating-system user running the command, recorded in the registration's history. */
export function operatingSystemUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    return process.env.USER ?? process.env.LOGNAME ?? 'unknown';
  }
}

export const noteSchema = z.string().trim().min(1, { error: 'must not be empty' }).max(2000, { error: 'at most 2000 characters' }).optional();

/** Columns padded to their widest cell, two spaces apart. */
export function table(headers: string[], rows: string[][]): string[] {
  const widths = headers.map((header, i) => Math.max(header.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(headers), ...rows.map(line)];
}

/** How every command that acts on one registration describes its argument (the rule: resolveRegistrationId). */
export const REGISTRATION_ARGUMENT = 'the registration: its 8-character reference as printed (e.g. 3F2A9C1B; case, spaces and dashes ignored) or its id';
