import crypto from 'node:crypto';
import type { Db } from '../db/connect.js';

export interface ErrorRecord {
  fingerprint: string;
  errorClass: string;
  message: string;
  stack?: string;
}

/**
 * Numbers, ids, emails and quoted values vary between occurrences of the same
 * fault; replacing them keeps one fingerprint per fault.
 */
export function normaliseErrorMessage(message: string): string {
  return message
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<id>')
    .replace(/\b[a-z]{2,8}_[A-Za-z0-9]{6,}\b/g, '<id>')
    .replace(/[\w.+-]+@[\w-]+\.[\w.-]+/g, '<email>')
    .replace(/\b[0-9a-f]{12,}\b/gi, '<id>')
    .replace(/"[^"]*"|'[^']*'/g, '<value>')
    // A database error carries its SQL, whose placeholder lists grow with the batch: one fault, any length.
    .replace(/\$\d+(?:\s*,\s*\$\d+)*/g, '$<n>')
    .replace(/\d+(\.\d+)?/g, '<n>')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * "function@file" of the top stack frames inside our own code, without line numbers (they move with every
 * edit). The installed command runs the bundle (dist/cli), whose chunk names carry a content hash that
 * changes with every build, wherever it is installed (a global install sits under node_modules): its frames
 * are "function@bundle", the names being kept by the build.
 */
export function projectFrames(stack: string | undefined, limit = 3): string[] {
  if (!stack) return [];
  const frames: string[] = [];
  for (const line of stack.split('\n').slice(1)) {
    const match = /^\s*at (?:(.+?) \()?(.+?):\d+:\d+\)?$/.exec(line);
    if (!match) continue;
    const file = match[2] ?? '';
    const name = match[1] ?? '<anonymous>';
    if (/\/dist\/cli\/(chunks\/)?[^/]+\.js$/.test(file)) {
      frames.push(`${name}@bundle`);
    } else if (!file.includes('node_modules') && !file.startsWith('node:') && /\/(src|migrations)\//.test(file)) {
      frames.push(`${name}@${file.slice(file.search(/\/(src|migrations)\//) + 1).replace(/\.(js|ts)$/, '')}`);
    } else {
      continue;
    }
    if (frames.length >= limit) break;
  }
  return frames;
}

export function describeError(error: unknown): ErrorRecord {
  const err = error instanceof Error ? error : new Error(String(error));
  const errorClass = err.constructor?.name || err.name || 'Error';
  const basis = [errorClass, normaliseErrorMessage(err.message), ...projectFrames(err.stack)].join('|');
  return {
    fingerprint: crypto.createHash('sha256').update(basis).digest('hex').slice(0, 16),
    errorClass,
    message: err.message,
    stack: err.stack,
  };
}

/** Writes one error-log row (the weekly digest groups them by fingerprint) and returns its id. */
export async function recordError(
  db: Db,
  error: unknown,
  details: { source: string; now: Date; context?: Record<string, unknown> },
): Promise<number> {
  const record = describeError(error);
  const [row] = await db('error_logs')
    .insert({
      fingerprint: record.fingerprint,
      error_class: record.errorClass,
      message: record.message.slice(0, 2000),
      stack: record.stack?.slice(0, 8000),
      source: details.source,
      context: details.context ? JSON.stringify(details.context) : null,
      created_at: details.now,
    })
    .returning<Array<{ id: number }>>('id');
  return row?.id ?? 0;
}
