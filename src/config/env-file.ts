/// <reference path="./dotenv-safe.d.ts" />
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import dotenvSafe from 'dotenv-safe';
import { ConfigError } from './load.js';
import type { ConfigProblem } from './types.js';

/** The package root, wherever the command was started from. */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('eventops package root not found');
    dir = parent;
  }
  return dir;
}

/**
 * Loads `.env` from the working directory into process.env with dotenv-safe
 * (variables already in the environment win). Returns the always-required
 * variables that are missing, so they join the one list of problems.
 */
export function loadEnvFile(cwd: string, envFile = '.env'): ConfigProblem[] {
  const file = path.resolve(cwd, envFile);
  const text = readEnvText(file, envFile);
  // Only the file's values in use: a variable the environment set otherwise wins (the file may already be loaded, with the cut value).
  const cutAtHash =
    text === undefined
      ? []
      : valuesCutAtHash(text)
          .filter((p) => process.env[p.variable] === undefined || process.env[p.variable] === p.cutValue)
          .map(({ variable, expected }) => ({ variable, expected }));
  try {
    dotenvSafe.config({
      path: file,
      example: path.join(packageRoot(), '.env.required'),
      allowEmptyValues: false,
      quiet: true,
    });
    return cutAtHash;
  } catch (error) {
    if (error instanceof dotenvSafe.MissingEnvVarsError) {
      const named = new Set(cutAtHash.map((p) => p.variable));
      return [
        ...cutAtHash,
        ...error.missing
          .filter((variable) => !named.has(variable))
          .map((variable) => ({ variable, expected: 'a value; required in every environment' })),
      ];
    }
    throw error;
  }
}

/**
 * The text of `.env`, or undefined when there is none. One that exists but cannot be read (another user's 0600 file
 * under cron, a directory) is a configuration error: going on without its values would fail later and less clearly.
 */
function readEnvText(file: string, envFile: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ConfigError([
      {
        variable: envFile,
        expected: `a file eventops can read (${code ?? String(error)} reading ${file}): run eventops as the file's owner or fix its permissions (a file, chmod 600, owned by the user that runs eventops)`,
      },
    ]);
  }
}

/**
 * `.env` holds the database password, ENCRYPTION_KEY and AUTH_SECRET: a warning when users other than its owner
 * may read or change it (a `cp` of .env.example is 0644 under the usual umask; `eventops init` writes 0600).
 * POSIX permissions only: nothing on Windows, nor without a .env.
 */
export function envFilePermissionWarning(cwd: string, envFile = '.env'): string | undefined {
  if (process.platform === 'win32') return undefined;
  const file = path.resolve(cwd, envFile);
  const mode = fs.statSync(file, { throwIfNoEntry: false })?.mode;
  if (mode === undefined || (mode & 0o066) === 0) return undefined;
  return `${file} is readable or writable by group or others (mode ${(mode & 0o777).toString(8).padStart(4, '0')}) and holds secrets: chmod 600 ${envFile}`;
}

const QUOTES = new Set(['"', "'", '`']);

/**
 * Variables whose value in use came from a quoted .env line holding "#": the
 * quotes say the "#" is part of the value, so the trailing-comment rule for
 * the process environment does not apply to them.
 */
export function quotedValuesWithHash(cwd: string, envFile = '.env'): Set<string> {
  const file = path.resolve(cwd, envFile);
  const names = new Set<string>();
  for (const line of (readEnvText(file, envFile) ?? '').split(/\r\n?|\n/)) {
    const match = /^\s*(?:export\s+)?([\w.-]+)\s*=[ \t]*(["'`])(.*#.*)\2\s*(?:#.*)?$/.exec(line);
    if (match?.[1] && process.env[match[1]] === match[3]) names.add(match[1]);
  }
  return names;
}

/**
 * dotenv ends an unquoted value at its first "#": `THEME_PRIMARY=#1E40AF` reads as
 * empty and `CRON_SECRET=abc # note` as "abc". This scans the file's lines as
 * dotenv does and names every unquoted value that holds a "#", so the loss is
 * refused instead of passing silently. Quoted values (also multi-line) keep theirs.
 */
export function valuesCutAtHash(text: string): Array<ConfigProblem & { cutValue: string }> {
  const problems: Array<ConfigProblem & { cutValue: string }> = [];
  let openQuote: string | undefined;
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (openQuote !== undefined) {
      if (line.includes(openQuote)) openQuote = undefined;
      continue;
    }
    const match = /^\s*(?:export\s+)?([\w.-]+)\s*=[ \t]*(.*)$/.exec(line);
    if (!match) continue;
    const [, variable = '', value = ''] = match;
    const first = value.charAt(0);
    if (QUOTES.has(first)) {
      if (!value.slice(1).includes(first)) openQuote = first;
      continue;
    }
    const hash = value.indexOf('#');
    if (hash === -1) continue;
    const cutValue = value.slice(0, hash).trim();
    if (hash === 0) {
      problems.push({ variable, cutValue, expected: `a quoted value when it starts with "#" (${variable}="#…"); unquoted, the rest of the line is a comment` });
    } else if (/\s/.test(value.charAt(hash - 1))) {
      problems.push({ variable, cutValue, expected: 'no trailing comment on the line (remove the " #…" part)' });
    } else {
      problems.push({ variable, cutValue, expected: `a quoted value when it contains "#" (${variable}="…#…"); unquoted, it is cut at the "#"` });
    }
  }
  return problems;
}
