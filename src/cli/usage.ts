import type { z } from 'zod';
import { UsageError } from '../errors.js';

/**
 * A command's options (and arguments) parsed with `schema`, or a usage error (exit 2) naming each
 * problem as it is typed: an option by its flag (`resolveAlert` is `--resolve-alert`), an argument
 * listed in `args` as `<id>`. `command` is the full command, for the help hint: "alerts resolve".
 */
export function parseOrUsage<S extends z.ZodType>(schema: S, raw: unknown, command: string, args: readonly string[] = []): z.infer<S> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${label(issue.path[0], args)} ${issue.message}`);
  throw new UsageError(`invalid arguments: ${problems.join('; ')}`, `see \`eventops ${command} --help\``);
}

function label(key: PropertyKey | undefined, args: readonly string[]): string {
  if (typeof key !== 'string') return 'value';
  if (args.includes(key)) return `<${key}>`;
  return `--${key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}
